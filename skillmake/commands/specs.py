"""The commands that read specs without running them: `validate`, `explain` and `report`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from skillmake.commands.argparser import Parser, parsed
from skillmake.commands.argv import Invocation
from skillmake.core.console import write_line
from skillmake.core.errors import (
    EXIT_FAILED,
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_NO_SPECS,
    EXIT_OK,
    UsageError,
)

if TYPE_CHECKING:
    from skillmake.run.project import Project

NO_SPECS = ("skillmake: no spec found (*.eval.yaml, *.eval.yml, *.eval.json) under {root}\n"
            "  hint: write one (see examples/), or point at the project with --root DIR")


def project_root() -> str:
    """--root (through SKILLMAKE_ROOT), else the project found upward from here (config.find_root)."""
    from skillmake.spec.config import find_root

    return find_root()


def _out(text: str, *, err: bool = False) -> None:
    write_line(sys.stderr if err else sys.stdout, text)


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    return Parser(prog=prog, description=description,
                  epilog="every command also takes --root DIR, --color and --no-color")


def validate(args: list[str]) -> int:
    from skillmake.spec.validate import render_json, render_skipped, render_text, validate_files

    parser = _parser("skillmake validate", "Check eval specs.")
    parser.add_argument("files", nargs="*", help="spec files (default: every spec under the project root)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when all specs are valid")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also print what a translation from another tool's format did not carry over")
    opts = parsed(parser, args)
    if isinstance(opts, int):
        return opts
    root = project_root()
    try:
        result = validate_files(opts.files or None, root=root)
    except Exception as exc:  # a bug, not a user error: one line and exit 4, never a traceback in an editor
        _out(f"skillmake: internal error while validating: {type(exc).__name__}: {exc}\n"
             "  hint: this is a bug in skillmake; please report it with the spec that triggers it", err=True)
        return EXIT_INTERNAL
    no_specs = getattr(result, "no_specs", None)  # the discovery's own message, when it gives one
    none = no_specs is not None or (not opts.files and not result.files)
    if opts.format == "json":
        import orjson

        payload: dict[str, Any] = {"valid": result.ok, "files": len(result.files), "errors": render_json(result)}
        notes = _notes(result.specs)
        if notes:  # only then: a native project's payload stays as it was
            payload["notes"] = [{"file": file, "note": note} for file, note in notes]
        _out(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode())
    elif result.errors:
        _verbose_notes(result.specs, opts.verbose)
        _out(render_text(result), err=True)
        bad = len({e.loc.path for e in result.errors if e.loc})
        _out(f"{len(result.errors)} error(s) in {bad} of {len(result.files)} spec(s)", err=True)
    elif none:
        _out(f"skillmake: {no_specs.render()}" if no_specs is not None else NO_SPECS.format(root=root), err=True)
    elif not opts.quiet:
        _verbose_notes(result.specs, opts.verbose)
        _out(f"{len(result.files)} spec(s) valid")
    note = render_skipped(result, root)
    if note and opts.format == "text" and not opts.quiet:
        _out(note, err=True)
    if not result.ok:
        return EXIT_INVALID
    return EXIT_NO_SPECS if none else EXIT_OK


def _notes(specs: Sequence[Any]) -> list[tuple[str, str]]:
    """(file, note) for every note of a translation from another tool's format (Spec.notes), in file order."""
    return [(spec.relpath, note) for spec in sorted(specs, key=lambda s: s.relpath) for note in spec.notes]


def _verbose_notes(specs: Sequence[Any], verbose: bool) -> None:
    """-v: one line per note, `note: FILE: TEXT`, before the closing line (stdout: they are not errors). A note
    that is a warning (an adapter accepted what is surely a mistake) is shown without -v too, on stderr."""
    for file, text in _notes(specs):
        if text.startswith("warning: "):
            _out(f"warning: {file}: {text.removeprefix('warning: ')}", err=True)
        elif verbose:
            _out(f"note: {file}: {text}")


def explain(inv: Invocation) -> int:
    from skillmake.engine import explain as explaining
    from skillmake.engine import select
    from skillmake.engine.tasks import judge_preflight

    root = project_root()
    project, plans = _load(root, ())
    if not project.spec_files:
        _out(NO_SPECS.format(root=root), err=True)
        return EXIT_NO_SPECS
    explaining.matcher(plans, inv.targets)  # a pattern that names nothing is a usage error
    targets = select.Targets(tuple(inv.targets))
    nothing = select.nothing_selected(plans, select.current(), targets)
    if nothing:  # as the run says it, with the run's code
        _out(f"skillmake: {nothing}", err=True)
        return EXIT_NO_SPECS
    from skillmake.engine import shard

    chosen = shard.narrow(select.choose(project, plans, select.current()), plans, shard.current())  # as a run
    invalid: list[str] = []
    if project.broken:
        from skillmake.spec.validate import Validation, render_text

        invalid = render_text(Validation(errors=[e for errs in project.broken.values() for e in errs])).splitlines()
    stale, totals = explaining.explain(project, plans, chosen=chosen, targets=targets, resample=chosen.resample)
    blocked = judge_preflight(plans, chosen, targets)
    from skillmake.run import budget

    cap = budget.cap_of(project)
    if cap is not None and totals["cost_usd"] > cap + 1e-9:  # what the run would stop with (build/tasks.py)
        blocked.append(budget.refusal(totals["cost_usd"], cap, trials=totals["trials"] + totals["triggers"],
                                      unknown=not totals["cost_known"]))
    settings = _override_lines(project)
    if inv.format == "json":
        import orjson

        payload = explaining.to_json(stale, totals, overrides=settings, blocked=blocked, invalid=invalid)
        _out(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode())
    else:
        if invalid:
            _out("\n".join(invalid), err=True)
        lines = [*(f"run setting {line}" for line in settings), explaining.render(stale, totals),
                 *(f"would stop before running: {line}" for line in blocked)]
        _out("\n".join(lines))
    return EXIT_INVALID if project.broken else EXIT_OK


def _override_lines(project: Project) -> list[str]:
    """The run settings this command line (or the environment) sets for every spec: `trials: 5 (command line)`;
    then those a spec takes from its format's defaults: `my-skill: trials: 3 (caliper's default)`."""
    from skillmake.spec import overrides

    given = {name: setting for name in overrides.SETTINGS if (setting := overrides.overridden(name)) is not None}
    return [*overrides.describe(given), *overrides.format_default_lines(project.settings)]


def report(args: list[str]) -> int:
    parser = _parser("skillmake report", "Re-render the reports from the stored records; runs nothing.")
    parser.add_argument("specs", nargs="*", help="spec names (default: all)")
    opts = parsed(parser, args)
    if isinstance(opts, int):
        return opts
    from skillmake.engine.report import build_and_write

    root = project_root()
    project, plans = _load(root, opts.specs)
    if not project.spec_files:
        _out(NO_SPECS.format(root=root), err=True)
        return EXIT_NO_SPECS
    invalid = _say_invalid(project, opts.specs)  # an invalid spec has no plan: its errors, and exit 2 (as a run)
    if not any(_has_results(project, plan) for plan in plans):  # nothing to re-render: not a red verdict
        if invalid:
            return EXIT_INVALID
        _out("skillmake report: no results yet; run `skillmake` first", err=True)
        return EXIT_NO_SPECS
    # Re-rendering evaluates nothing: no eva history row (build/report.py).
    unchanged: list[tuple[str, int, bool]] = []
    failed = [message for plan in plans
              if (message := build_and_write(project, plan, evaluated=False, unchanged=unchanged))]
    if unchanged:  # one line for every spec whose results did not change, not one each
        failing = [name for name, _, passed in unchanged if not passed]
        state = f"{len(failing)} failing: {', '.join(failing)}" if failing else "all gates pass"
        _out(f"nothing changed: {len(unchanged)} spec(s), {sum(n for _, n, _ in unchanged)} cell(s) up to date; "
             f"{state}")
    # the viewer's static pages
    from skillmake.view.site import refresh_site  # the viewer's static pages
    refresh_site(project)
    _out(f"skillmake report: reports in {_shown(project.reports_dir)}/, the viewer's pages in "
         f"{_shown(project.state_dir / 'site' / 'index.html')}")
    for message in failed:
        _out(message, err=True)
    return EXIT_INVALID if invalid else EXIT_FAILED if failed else EXIT_OK


def _say_invalid(project: Project, names: Sequence[str]) -> bool:
    """Print the errors of the invalid specs (those named, when names are given); whether there were any."""
    from skillmake.spec.loader import spec_name_of
    from skillmake.spec.validate import Validation, render_text

    errors = [e for path, errs in project.broken.items() if not names or spec_name_of(path) in names for e in errs]
    if errors:
        _out(render_text(Validation(errors=errors)), err=True)
    return bool(errors)


def _has_results(project: Project, plan: Any) -> bool:
    """Whether any trial or trigger trial of the spec has a record to show (a result or a last attempt): read cell
    by cell up to the first that has one (reading every cell's records first made `report` on 6,000 trials take
    1.2 s longer, only to learn that the first had one)."""
    from skillmake.engine.report import cell_of
    from skillmake.results.checkout import records_of
    from skillmake.triggers.views import record_of

    return any(records_of(project, cell_of(i)).trial is not None for i in plan.items) or any(
        record_of(project, plan.spec, t.tkey.key) is not None for t in plan.triggers)


def _shown(path: Any) -> str:
    import os

    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(path)


def _load(root: str, names: Sequence[str]) -> tuple[Any, tuple[Any, ...]]:
    from skillmake.engine.tasks import plans_at, project_at

    project = project_at(root)
    plans = plans_at(root)
    if names:
        unknown = set(names) - {p.spec.name for p in plans}
        if unknown:
            raise UsageError(f"no spec named {', '.join(sorted(unknown))}",
                             hint="spec names are the file names without .eval.yaml; see `skillmake validate`")
        plans = tuple(p for p in plans if p.spec.name in names)
    return project, plans

