"""Runs inside the seed tools' venv (.tools/seedtools), never under skillmake's: asks the real caliper 0.1.0's own
spec loader (caliper.schema.spec.load_spec, what `caliper validate` and `caliper run` call) which files it accepts,
and prints the answers as JSON. Reads one JSON request on stdin:

  {"op": "load", "paths": [str]}  → [{"accepted": bool, "error": str}]"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _load(paths: list[str]) -> list[dict[str, Any]]:
    from caliper.schema.spec import load_spec

    out = []
    for path in paths:
        try:
            load_spec(Path(path))
        except Exception as exc:  # `caliper validate` exits 1 on any exception of the loader
            out.append({"accepted": False, "error": f"{type(exc).__name__}: {exc}".splitlines()[0]})
        else:
            out.append({"accepted": True, "error": ""})
    return out


def main() -> None:
    request = json.load(sys.stdin)
    if request["op"] == "load":
        json.dump(_load(request["paths"]), sys.stdout)
    else:
        raise SystemExit(f"unknown op {request['op']!r}")


if __name__ == "__main__":
    main()
