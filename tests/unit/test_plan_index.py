"""The plan's index is used while a record's file is unchanged, and only then; the timeout boundary; what
makes a spec's plan complete (pins found by bench/mutation.py)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from skillmake.build.plan import plan_spec
from skillmake.canonical import digest_json
from skillmake.project import Project
from skillmake.trial import execute
from tests.unit.test_plan import make


def _run_all(project: Project) -> None:
    spec = project.specs[0]
    for item in plan_spec(project, spec).items:
        execute(project, spec, item.case, item.arm, item.k, item.tkey)


def _rewrite_in_place(path: Path, edit: dict) -> None:
    """Change a record's content keeping its inode, size and mtime: only the index can still see the old one."""
    st = os.stat(path)
    record = orjson.loads(path.read_bytes())
    record.update(edit)
    data = orjson.dumps(record, option=orjson.OPT_INDENT_2)
    data = data + b" " * (st.st_size - len(data)) if len(data) <= st.st_size else data[: st.st_size]
    os.chmod(path, 0o644)
    with open(path, "r+b") as f:
        f.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_the_index_serves_an_unchanged_record_file_and_nothing_else(tmp_path: Path) -> None:
    project = make(tmp_path)
    spec = project.specs[0]
    plan_spec(project, spec)
    _run_all(project)
    first = plan_spec(project, spec).items[0]
    index = orjson.loads((project.state_dir / "index" / f"{spec.name}.json").read_bytes())
    # inode, size, mtime, outputs, agent time, workspace tree, the objects it names (each with its stat)
    entry = index["trials"][first.tkey.key]
    assert len(entry) == 7 and entry[6] and all(h in index["objects"] for h in entry[6])
    path = project.store.action_path(first.tkey.key)
    record = orjson.loads(path.read_bytes())
    changed = dict(record["outputs"], output=record["outputs"]["stderr"])  # another object the store has
    _rewrite_in_place(path, {"outputs": changed})
    assert plan_spec(project, spec).items[0].outputs == first.outputs  # from the index: the file looks the same
    os.utime(path, ns=(1, 1))
    assert plan_spec(project, spec).items[0].outputs == digest_json(changed)  # read again once it looks changed


def test_a_record_under_another_key_is_not_this_trials(tmp_path: Path) -> None:
    project = make(tmp_path)
    spec = project.specs[0]
    _run_all(project)
    key = plan_spec(project, spec).items[0].tkey.key
    path = project.store.action_path(key)
    record = orjson.loads(path.read_bytes())
    path.chmod(0o644)
    path.write_bytes(orjson.dumps(dict(record, key="sha256:" + "0" * 64)))
    (project.state_dir / "index").joinpath(f"{spec.name}.json").unlink(missing_ok=True)
    assert not plan_spec(project, spec).items[0].trial_cached


def test_timeout_boundary_and_completeness(tmp_path: Path) -> None:
    project = make(tmp_path)
    spec = project.specs[0]
    plan = plan_spec(project, spec)
    assert not plan.complete and not any(i.grade_cached for i in plan.items) and plan.inputs_digest() is None
    _run_all(project)
    key = plan.items[0].tkey.key
    path = project.store.action_path(key)
    record = orjson.loads(path.read_bytes())
    for took, cached in ((spec.timeout * 1000, True), (spec.timeout * 1000 + 0.5, False)):
        path.chmod(0o644)
        record["timing"]["agent_ms"] = took
        path.write_bytes(orjson.dumps(record))
        os.utime(path, ns=(int(took * 1000), int(took * 1000)))
        assert plan_spec(project, spec).items[0].trial_cached is cached, took
    path.chmod(0o644)
    record["timing"]["agent_ms"] = 1.0
    path.write_bytes(orjson.dumps(record))
    plan = plan_spec(project, spec)
    assert all(i.trial_cached and not i.grade_cached for i in plan.items)
    assert not plan.complete  # every trial cached but no grade: not complete
