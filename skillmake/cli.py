"""The `skillmake` front end: fast commands of its own (validate), otherwise doit with a built-in loader."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from .errors import EXIT_FAILED, EXIT_INTERNAL, EXIT_INVALID, EXIT_OK, EXIT_USAGE, SkillmakeError

USAGE = """skillmake — Make-style evals for agent skills

usage:
  skillmake validate [FILE…] [--format text|json]   check specs (no files: the whole project)
  skillmake explain [TASK…]                          why each stale trial would run, and the cost
  skillmake report [SPEC…]                           re-render the last results without running
  skillmake [doit options] [TASK…]                   run what is stale (same as doit)

exit codes: 0 ok · 1 a threshold, required case or task failed · 2 invalid spec · 3 bad usage · 4 internal error
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args and args[0] == "validate":
            return _validate(args[1:])
        if args and args[0] == "explain":
            return _explain(args[1:])
        if args and args[0] == "report":
            return _report(args[1:])
        if args and args[0] in ("-h", "--help", "help") and len(args) == 1:
            print(USAGE)
            return EXIT_OK
        return _run_doit(args)
    except SkillmakeError as exc:
        print(f"skillmake: {exc.render()}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        from . import process

        # Stop every trial's processes before saying so: none may outlive the run, and none is waited for.
        process.interrupt()
        try:
            process.wait_for_all()
        except KeyboardInterrupt:
            pass
        print(f"skillmake: {process.INTERRUPTED_MESSAGE}", file=sys.stderr)
        return 130


def _validate(args: list[str]) -> int:
    from .validate import render_json, render_text, validate_files

    parser = argparse.ArgumentParser(prog="skillmake validate", description="Check eval specs.")
    parser.add_argument("files", nargs="*", help="spec files (default: every spec under the project root)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--root", default=".", help="project root (default: the current folder)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when all specs are valid")
    try:
        opts = parser.parse_args(args)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    root = os.path.abspath(opts.root)
    try:
        result = validate_files(opts.files or None, root=root)
    except Exception as exc:  # a bug, not a user error: one line and exit 4, never a traceback in an editor
        print(f"skillmake: internal error while validating: {type(exc).__name__}: {exc}\n"
              "  hint: this is a bug in skillmake; please report it with the spec that triggers it",
              file=sys.stderr)
        return EXIT_INTERNAL
    if opts.format == "json":
        import orjson

        payload: dict[str, Any] = {"valid": result.ok, "files": len(result.files), "errors": render_json(result)}
        sys.stdout.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif result.errors:
        print(render_text(result), file=sys.stderr)
        bad = len({e.loc.path for e in result.errors if e.loc})
        print(f"{len(result.errors)} error(s) in {bad} of {len(result.files)} spec(s)", file=sys.stderr)
    elif not opts.quiet:
        print(f"{len(result.files)} spec(s) valid")
    return EXIT_OK if result.ok else EXIT_INVALID


def _spec_command(prog: str, description: str, args: list[str]) -> argparse.Namespace | int:
    """Parse `skillmake explain|report [SPEC…] [--root DIR]`; an int is the exit code to return."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("specs", nargs="*", help="spec names (default: all)")
    parser.add_argument("--root", default=None, help="project root (default: the current folder)")
    try:
        return parser.parse_args(args)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE


def _explain(args: list[str]) -> int:
    opts = _spec_command("skillmake explain", "Say why each stale trial and grade would run, without running.", args)
    if isinstance(opts, int):
        return opts
    from .build.explain import explain, render

    project, plans = _load(opts.root, opts.specs)
    if project.broken:
        from .validate import Validation, render_text

        errors = [e for errs in project.broken.values() for e in errs]
        print(render_text(Validation(errors=errors)), file=sys.stderr)
    stale, totals = explain(project, plans)
    print(render(stale, totals))
    from .build.tasks import judge_preflight

    for line in judge_preflight(plans):
        print(f"would stop before running: {line}")
    return EXIT_INVALID if project.broken else EXIT_OK


def _report(args: list[str]) -> int:
    opts = _spec_command("skillmake report", "Re-render the reports from the stored records; runs nothing.", args)
    if isinstance(opts, int):
        return opts
    from .build.report import build_and_write

    project, plans = _load(opts.root, opts.specs)
    failed = [message for plan in plans if (message := build_and_write(project, plan))]
    for message in failed:
        print(message, file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _load(root: str | None, names: list[str]) -> tuple[Any, tuple[Any, ...]]:
    from .build.tasks import current_root, plans_at, project_at

    where = os.path.abspath(root) if root else current_root()
    project = project_at(where)
    plans = plans_at(where)
    if names:
        unknown = set(names) - {p.spec.name for p in plans}
        if unknown:
            raise SkillmakeError(f"no spec named {', '.join(sorted(unknown))}",
                                 hint="spec names are the file names without .eval.yaml; see `skillmake validate`")
        plans = tuple(p for p in plans if p.spec.name in names)
    return project, plans


def _run_doit(args: list[str]) -> int:
    from . import process

    # SIGINT and SIGTERM stop every trial's processes at once, then raise KeyboardInterrupt so doit saves what
    # finished (its db is written only at the end) and main() exits 130.
    process.install_interrupt_handlers(raise_keyboard_interrupt=True)
    try:
        from .build.main import run_doit
    except ImportError as exc:  # pragma: no cover - a broken install
        print(f"skillmake: cannot load the build engine: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    return run_doit(args)


if __name__ == "__main__":
    sys.exit(main())
