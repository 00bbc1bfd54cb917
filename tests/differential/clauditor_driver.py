"""Runs inside the seed tools' venv (.tools/seedtools), never under skillmake's: asks the real clauditor 0.1.3 for its
verdicts and prints them as JSON. Reads one JSON request on stdin:

  {"op": "assert", "items": [{"output": str, "assertion": {...}}]}  → [{"passed", "name", "message"}]
  {"op": "format", "items": [{"format": str, "text": str}]}          → [{"count", "valid"}]
  {"op": "load", "paths": [str]}                                       → [{"accepted", "error"}]

Only clauditor's own functions decide: run_assertions, FORMAT_REGISTRY, EvalSpec.from_file."""

from __future__ import annotations

import json
import sys
from typing import Any


def _assert(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from clauditor.assertions import run_assertions

    out = []
    for item in items:
        try:
            result = run_assertions(item["output"], [item["assertion"]]).results[0]
            out.append({"passed": result.passed, "name": result.name, "message": result.message})
        except Exception as exc:  # a crash is a verdict too
            out.append({"passed": None, "name": "", "message": f"{type(exc).__name__}: {exc}"})
    return out


def _format(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from clauditor.formats import FORMAT_REGISTRY, validate_value

    return [{"count": len(FORMAT_REGISTRY[i["format"]].extract_pattern.findall(i["text"])),
             "valid": validate_value(i["text"], i["format"])} for i in items]


def _load(paths: list[str]) -> list[dict[str, Any]]:
    from clauditor.schemas import EvalSpec

    out = []
    for path in paths:
        try:
            EvalSpec.from_file(path)
            out.append({"accepted": True, "error": ""})
        except Exception as exc:  # any exception is clauditor refusing the file
            out.append({"accepted": False, "error": f"{type(exc).__name__}: {exc}"})
    return out


def main() -> None:
    request = json.load(sys.stdin)
    op = request["op"]
    if op == "assert":
        result: Any = _assert(request["items"])
    elif op == "format":
        result = _format(request["items"])
    elif op == "load":
        result = _load(request["paths"])
    elif op == "formats":
        from clauditor.formats import list_formats

        result = list_formats()
    else:
        raise SystemExit(f"unknown op {op!r}")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
