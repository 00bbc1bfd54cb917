"""The python check: inline code or a script run in a subprocess with output/workspace/files defined.

Specs are code: this runs whatever the spec says with the user's rights (see docs/checks.md).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from skillmake.core.redact import environment_secrets, redact_text
from skillmake.run import process
from skillmake.run.checks.base import CheckContext, Target, Verdict, decode, norm_path
from skillmake.run.workspace import clean_env
from skillmake.spec.model import Check

# Runs the user's code with `output`, `workspace` and `files` defined and reports one JSON
# verdict; the parent reads it back. Kept dependency-free: it runs under any python3.
_WRAPPER = r'''
import json, os, sys, traceback

def _report(passed, evidence):
    with open(os.environ["SKILLMAKE_RESULT_FILE"], "w", encoding="utf-8") as f:
        json.dump({"passed": passed, "evidence": evidence}, f)

def _failed_line(exc, label, source):
    lines = source.splitlines()
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == label and 0 < (frame.lineno or 0) <= len(lines):
            return "assertion failed at line %d: %s" % (frame.lineno, lines[frame.lineno - 1].strip())
    return "assertion failed"

def _main():
    with open(os.environ["SKILLMAKE_OUTPUT_FILE"], encoding="utf-8") as f:
        output = f.read()
    with open(os.environ["SKILLMAKE_FILES_FILE"], encoding="utf-8") as f:
        files = json.load(f)
    source_path, label = sys.argv[1], sys.argv[2]
    with open(source_path, encoding="utf-8") as f:
        source = f.read()
    sys.argv = [label]
    scope = {"__name__": "__main__", "__file__": label, "output": output,
             "workspace": os.environ["SKILLMAKE_WORKSPACE"], "files": files}
    try:
        exec(compile(source, label, "exec"), scope)
    except AssertionError as exc:
        _report(False, str(exc) or _failed_line(exc, label, source))
    except SystemExit as exc:
        if exc.code in (None, 0):
            _report(True, "exited with status 0")
        elif isinstance(exc.code, int):
            _report(False, "exited with status %d" % exc.code)
        else:
            _report(False, str(exc.code))
    except BaseException as exc:
        _report(False, traceback.format_exception_only(type(exc), exc)[-1].strip())
    else:
        _report(True, "all assertions passed")

_main()
'''


def _write_files(folder: Path, ctx: CheckContext) -> None:
    root = folder.resolve()
    for name, data in ctx.files.items():
        dest = (root / norm_path(name)).resolve()
        if not dest.is_relative_to(root):
            continue  # a captured path never escapes the workspace; do not let one do so here
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)


def python(check: Check, target: Target, ctx: CheckContext) -> Verdict:
    timeout = float(check.params.get("timeout", 30))
    with tempfile.TemporaryDirectory(prefix="skillmake-check-") as tmp:
        scratch = Path(tmp)
        if "script" in check.params:
            source = os.path.join(ctx.spec_folder, check.params["script"])
            label = source
            if not os.path.isfile(source):
                return Verdict(False, f"script {check.params['script']!r} not found in {ctx.spec_folder}")
        else:
            source = str(scratch / "check.py")
            Path(source).write_text(check.params["code"], encoding="utf-8")
            label = f"<check {check.label}>"
        (scratch / "wrapper.py").write_text(_WRAPPER, encoding="utf-8")
        (scratch / "output.txt").write_text(target.text, encoding="utf-8")
        (scratch / "files.json").write_text(json.dumps({norm_path(k): decode(v) for k, v in ctx.files.items()}),
                                            encoding="utf-8")
        workspace = ctx.workspace
        if workspace is None:
            ws = scratch / "workspace"
            ws.mkdir()
            _write_files(ws, ctx)
            workspace = str(ws)
        result_file = scratch / "result.json"
        # The agents' clean environment (workspace.clean_env): no API key or token of this process reaches the
        # check's code, and so none can reach its evidence, the grade record or a report.
        (scratch / "home").mkdir()
        env = clean_env(scratch / "home")
        env.update(SKILLMAKE_OUTPUT_FILE=str(scratch / "output.txt"), SKILLMAKE_FILES_FILE=str(scratch / "files.json"),
                   SKILLMAKE_WORKSPACE=workspace, SKILLMAKE_RESULT_FILE=str(result_file),
                   PYTHONDONTWRITEBYTECODE="1")
        done = process.run([sys.executable, str(scratch / "wrapper.py"), source, label], cwd=workspace, env=env,
                           timeout=timeout)
        if done.error:
            return Verdict(False, f"could not run python: {done.error}")
        if done.timed_out:
            return Verdict(False, f"timed out after {timeout:g}s (process group killed)")
        try:
            verdict = json.loads(result_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            last = decode(done.stderr).strip().splitlines()
            why = last[-1] if last else f"exit status {done.returncode}"
            return Verdict(False, redact_text(f"python check crashed: {why}", environment_secrets()))
        return Verdict(bool(verdict["passed"]), redact_text(str(verdict["evidence"]), environment_secrets()))


CHECKS = {"python": python}
