"""Running one trigger trial: the query on the trigger agent, in a fresh workspace holding the stand-in of the skill
under test and of each distractor; the record is an ordinary trial record (labels: case = the query's id,
arm = "trigger") whose `activation.skills` says whether the skill fired."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from skillmake.core import fstree
from skillmake.run import trial as trials
from skillmake.run.keys import TrialKey
from skillmake.run.project import Project, current_run_id
from skillmake.run.workspace import prepare, scratch_dir
from skillmake.spec.model import TRIGGER_ARM, Arm, Case, Skill, Spec, TriggerQuery, TriggerTests
from skillmake.triggers.keys import Offered
from skillmake.triggers.stub import install_distractors, write_stub


def timeout_of(spec: Spec, tests: TriggerTests) -> float:
    return tests.timeout or spec.timeout


def trigger_case(query: TriggerQuery, *, timeout: float) -> Case:
    """The case a trigger trial runs: the query as the prompt, nothing staged, nothing graded."""
    return Case(id=query.id, index=query.index, prompt=query.query, timeout=timeout)


def triggered(record: dict[str, Any], name: str) -> bool:
    """Whether the trial's transcript shows the skill `name` activated (agents/: a Skill call the CLI accepted,
    a read of its SKILL.md, `/name` or `$name` in the prompt)."""
    return name in ((record.get("activation") or {}).get("skills") or ())


def execute(project: Project, spec: Spec, tests: TriggerTests, query: TriggerQuery, k: int, tkey: TrialKey,
            offered: Offered, *, resample: bool = False) -> trials.TrialRun:
    """The trigger trial's record: stored (its key names the description it tried), else run now."""
    timeout = timeout_of(spec, tests)
    return trials.reuse_or_run(project, tkey, timeout, resample=resample,
                               run=lambda replacing: _run(project, spec, tests, query, k, tkey, offered,
                                                          timeout=timeout, replacing=replacing))


def _run(project: Project, spec: Spec, tests: TriggerTests, query: TriggerQuery, k: int, tkey: TrialKey,
         offered: Offered, *, timeout: float, replacing: dict[str, Any] | None) -> dict[str, Any]:
    for piece in tkey.parts():  # readable later by `explain`
        project.store.put(piece.data)
    run_id = current_run_id()
    tdir = scratch_dir(project.work_dir, tkey.key, run_id)
    case = trigger_case(query, timeout=timeout)
    try:
        prepare(tdir, case)
        stand_in = write_stub(Path(tdir.root) / "stand-in", offered.name, offered.description, offered.settings)
        install_distractors(tdir.workspace, list(offered.distractors))
        # The agent installs `spec.skill` as usual: here, the stand-in. Forbidden files are the cases' business.
        shown = dataclasses.replace(spec, skill=Skill(name=offered.name, path=str(stand_in), kind="folder"),
                                    forbidden_files=(), system_prompt=None)
        arm = Arm(name=TRIGGER_ARM, agent=tests.agent, skill=True)
        return trials.run_in(project, shown, case, arm, k, tkey, tdir, run_id, replacing=replacing)
    finally:
        fstree.remove_tree(tdir.root)
