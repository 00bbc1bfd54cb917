"""`skillmake promote [SPEC…]`: move a spec's prompt or skill one step through draft → tested → ready, as eva's
`promote` moves a prompt, and only on passing results.

eva gates each step on its last `.eval.jsonl` row. skillmake gates on the same verdict (the row is written from
it) and also asks that the results be of the spec as it is now: a prompt edited after its last run is not
promoted on the old prompt's results. The state is a decision people make and commit, so it lives beside the
spec in the user's tree — eva's `promotion.json` in the eval folder, `<name>.promotion.json` beside a native
`<name>.eval.yaml` — not in `.skillmake/`, which is a cache that `doit clean` and a fresh clone do not keep.
No file means draft. Native specs take part too: a skill goes from draft to ready on the same evidence.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from skillmake.commands.argparser import Parser, parsed
from skillmake.core import atomic
from skillmake.core.console import write_line
from skillmake.core.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, RecordError, SkillmakeError
from skillmake.spec.model import Skill
from skillmake.spec.schema import validate_record

STATES = ("draft", "tested", "ready")
PROMOTION_SCHEMA = "promotion.schema.json"
PROMOTION_ID = "skillmake/promotion@1"
# `x.eval.yaml` → `x.promotion.json`; eva's `eval.yml` and skill-creator's `evals.json` → `promotion.json`.
_SPEC_SUFFIX = re.compile(r"(^|\.)evals?\.(ya?ml|json)$")


def state_path(spec_path: str) -> Path:
    """Where the promotion state of the spec at `spec_path` is kept: beside it, named after it."""
    folder, name = os.path.split(spec_path)
    renamed, found = _SPEC_SUFFIX.subn(r"\1promotion.json", name)
    return Path(folder) / (renamed if found else f"{name}.promotion.json")


def read_state(path: Path) -> dict[str, Any] | None:
    """The promotion state at `path`; None when there is none (draft). A file that does not match its schema
    is an error: it is the only copy of a decision, so it is never silently reset."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "it is not JSON"
        raise SkillmakeError(f"cannot read the promotion state {path}: {why}",
                             hint="fix or delete the file (deleting it makes the spec a draft again)") from None
    validate_record(PROMOTION_SCHEMA, data, what=f"promotion state {path}")
    return dict(data)


def promoted(state: dict[str, Any] | None, *, spec: str, results: str, ts: str) -> dict[str, Any]:
    """The state one step further than `state` (None: draft), recording which results allowed the step."""
    current = state["state"] if state else "draft"
    target = STATES[STATES.index(current) + 1]
    history = [*(state["history"] if state else []), {"from": current, "to": target, "ts": ts, "results": results}]
    data = {"schema": PROMOTION_ID, "spec": spec, "state": target, "history": history}
    validate_record(PROMOTION_SCHEMA, data, what=f"promotion state of {spec}")
    return data


def main(args: list[str]) -> int:
    parser = Parser(
        prog="skillmake promote", epilog="every command also takes --root DIR, --color and --no-color",
        description="Move each spec's prompt or skill one step: draft → tested → ready. A step needs the spec's "
                    "latest results to be of the spec as it is now and to have passed.")
    parser.add_argument("specs", nargs="*", help="spec names (default: all)")
    parser.add_argument("--status", action="store_true", help="show each spec's state and whether it may move; "
                                                              "change nothing")
    opts = parsed(parser, args)
    if isinstance(opts, int):
        return opts
    try:
        return _promote(opts.specs, status=opts.status)
    except RecordError as exc:
        write_line(sys.stderr, f"skillmake promote: {exc.render()}")
        return EXIT_FAILED


def _promote(names: Sequence[str], *, status: bool) -> int:
    from skillmake.commands.specs import project_root
    from skillmake.engine.report import results_gate
    from skillmake.engine.tasks import plans_at, project_at

    root = project_root()
    project = project_at(root)  # no spec at all: it says so and exits 5, as every command does
    plans = plans_at(root)
    unknown = sorted(set(names) - {p.spec.name for p in plans})
    if unknown:
        write_line(sys.stderr, f"skillmake promote: no spec named {', '.join(unknown)}\n"
                               f"  hint: spec names are listed by `skillmake validate`")
        return EXIT_USAGE
    chosen = [p for p in plans if not names or p.spec.name in names]
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    refused = 0
    for plan in chosen:
        spec = plan.spec
        path = state_path(spec.path)
        shown = os.path.relpath(path, root)
        state = read_state(path)
        current = state["state"] if state else "draft"
        gate = results_gate(project, plan)
        why = (gate.removeprefix(f"{spec.name}: ") if gate else None) or _inside_skill(spec.skill, path, shown)
        if status:
            write_line(sys.stdout, f"{spec.name}: {current}" + (f" (may not move: {why})" if why and
                                                                current != "ready" else ""))
            continue
        if current == "ready":
            write_line(sys.stdout, f"{spec.name}: already ready")
            continue
        target = STATES[STATES.index(current) + 1]
        if why:
            refused += 1
            write_line(sys.stderr, f"skillmake promote: {spec.name} stays {current}, not {target}: {why}")
            continue
        digest = plan.inputs_digest()
        assert digest is not None  # the gate passed: every trial and grade is cached
        data = promoted(state, spec=spec.name, results=digest, ts=now)
        try:
            atomic.write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        except OSError as exc:
            refused += 1
            write_line(sys.stderr, f"skillmake promote: {spec.name} stays {current}: cannot write {shown}: "
                                   f"{exc.strerror}")
            continue
        write_line(sys.stdout, f"{spec.name}: {current} → {target} ({shown})")
    return EXIT_FAILED if refused else EXIT_OK


def _inside_skill(skill: Skill, path: Path, shown: str) -> str | None:
    """Why the state file may not be written where it goes: inside a skill folder it would be part of the skill
    (hashed and installed), and promoting would re-run every trial."""
    from skillmake.core.paths import not_skill, within

    top = os.path.realpath(skill.path)
    target = os.path.realpath(path)
    if skill.kind != "folder" or not within(target, top):
        return None
    # Not part of the skill when the file, or any folder on its way down from the skill's top, is left out
    # (skill-creator's evals/promotion.json sits in evals/, which is not part of the skill).
    folder, rest = top, os.path.relpath(target, top).split(os.sep)
    for name in rest:
        if not_skill(folder, name, top=top):
            return None
        folder = os.path.join(folder, name)
    return (f"its promotion file {shown} would sit inside the skill folder and change the skill; keep the "
            f"spec outside the skill's folder")
