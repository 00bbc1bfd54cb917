"""The plan decides staleness from the action cache; its index never hides a rewritten record."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from skillmake.core.canonical import digest_json
from skillmake.engine.plan import plan_spec
from skillmake.run.project import Project
from skillmake.run.trial import execute
from skillmake.store.objects import TRIAL_SCHEMA


def make(root: Path) -> Project:
    (root / "skills/s").mkdir(parents=True)
    (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: d\n---\nbody\n")
    (root / "p.eval.yaml").write_text(
        "skill: skills/s\nagent: {kind: command, command: 'echo $SKILLMAKE_TRIAL'}\n"
        "trials: 2\ncases: [{id: a, prompt: hi, checks: [{type: contains, needle: x}]}]\n")
    return Project.open(str(root))


def test_plan_reflects_the_store_and_survives_a_rewritten_record(tmp_path: Path) -> None:
    project = make(tmp_path)
    spec = project.specs[0]
    plan = plan_spec(project, spec)
    assert [i.trial_cached for i in plan.items] == [False, False]
    for item in plan.items:
        execute(project, spec, item.case, item.arm, item.k, item.tkey)
    plan = plan_spec(project, spec)  # reads the records, writes the index
    assert all(i.trial_cached and not i.grade_cached for i in plan.items)
    first = plan.items[0]
    assert plan_spec(project, spec).items[0].outputs == first.outputs  # from the index

    # The record is quarantined and the trial re-runs with other outputs under the same key.
    record = project.store.get_action(first.tkey.key, schema=TRIAL_SCHEMA)
    assert record is not None
    record["outputs"]["output"] = project.store.put(b"something else\n")
    path = project.store.action_path(first.tkey.key)
    os.unlink(path)
    project.store.put_action(record, schema=TRIAL_SCHEMA)
    again = plan_spec(project, spec).items[0]
    assert again.outputs == digest_json(orjson.loads(path.read_bytes())["outputs"]) != first.outputs
