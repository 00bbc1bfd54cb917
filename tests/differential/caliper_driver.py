"""Runs inside the seed tools' venv (.tools/seedtools), never under skillmake's: asks the real caliper 0.1.0's own
spec loader (caliper.schema.spec.load_spec, what `caliper validate` and `caliper run` call) which files it accepts,
and prints the answers as JSON. Reads one JSON request on stdin:

  {"op": "load", "paths": [str]}  → [{"accepted": bool, "error": str}]
  {"op": "results", "path": str}  → {"valid": bool, "error": str}  (caliper's RunResults model reads the file)

`caliper_driver.py run SPEC [FLAGS]` is `caliper run SPEC [FLAGS]`: caliper's own run command (commands/run.py),
given the command line as caliper's CLI would. (The `caliper` console script of 0.1.0 cannot start beside typer
0.2x: its install-skill command imports click, which caliper never declared and typer no longer brings.)"""

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
    if sys.argv[1:2] == ["run"]:
        import typer
        from caliper.commands.run import run_cmd

        sys.argv = ["caliper run", *sys.argv[2:]]
        typer.run(run_cmd)
        return
    request = json.load(sys.stdin)
    if request["op"] == "load":
        json.dump(_load(request["paths"]), sys.stdout)
    elif request["op"] == "results":
        from caliper.schema.results import RunResults

        try:
            RunResults.model_validate_json(Path(request["path"]).read_text())
        except Exception as exc:  # pydantic's ValidationError, or a file that is no JSON
            json.dump({"valid": False, "error": str(exc)}, sys.stdout)
        else:
            json.dump({"valid": True, "error": ""}, sys.stdout)
    else:
        raise SystemExit(f"unknown op {request['op']!r}")


if __name__ == "__main__":
    main()
