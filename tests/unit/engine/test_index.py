"""The plan's index is used while a record's file is unchanged, and only then; the timeout boundary; what
makes a spec's plan complete (pins found by bench/mutation.py)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from skillmake.core.canonical import digest_json
from skillmake.engine.plan import plan_spec
from skillmake.run.project import Project
from skillmake.run.trial import execute
from tests.unit.engine.test_plan import make


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


def _object_path(project: Project, digest: str) -> Path:
    return project.store.object_path(digest)


def test_a_touched_but_intact_object_is_hashed_again_and_still_serves(tmp_path: Path) -> None:
    project = make(tmp_path)
    spec = project.specs[0]
    _run_all(project)
    first = plan_spec(project, spec).items[0]
    record = orjson.loads(project.store.action_path(first.tkey.key).read_bytes())
    obj = _object_path(project, record["outputs"]["output"])
    os.utime(obj, ns=(1, 1))  # `touch`, a copy that kept no times: the stat changed, the content did not
    again = plan_spec(project, spec).items[0]
    assert again.trial_cached and again.damaged is None and again.outputs == first.outputs
    index = orjson.loads((project.state_dir / "index" / f"{spec.name}.json").read_bytes())
    assert index["objects"][record["outputs"]["output"][7:]][2] == 1  # its new stat is noted: hashed once


def test_a_corrupt_or_lost_object_sets_its_record_aside_and_says_which(tmp_path: Path) -> None:
    project = make(tmp_path)
    spec = project.specs[0]
    _run_all(project)
    items = plan_spec(project, spec).items
    records = [orjson.loads(project.store.action_path(i.tkey.key).read_bytes()) for i in items]
    obj = _object_path(project, records[0]["outputs"]["output"])
    obj.chmod(0o644)
    obj.write_bytes(b"0" * obj.stat().st_size)  # same size, other content
    _object_path(project, records[1]["workspace"]).unlink()
    plan = plan_spec(project, spec)
    assert [i.trial_cached for i in plan.items] == [False, False]
    digest = records[0]["outputs"]["output"]
    assert plan.items[0].damaged is not None
    assert plan.items[0].damaged.startswith(f"output object {digest[:19]}… is corrupt")
    assert plan.items[1].damaged is not None
    assert plan.items[1].damaged.startswith(f"workspace tree object {records[1]['workspace'][:19]}… is missing")
    assert not any(project.store.action_path(i.tkey.key).exists() for i in items)  # set aside: a miss everywhere
    assert not obj.exists()  # the corrupt object is quarantined too
    assert len(list((project.store.root / "quarantine").iterdir())) == 3


def test_refresh_takes_the_records_the_report_read_and_reads_only_a_file_changed_since(tmp_path: Path,
                                                                                       monkeypatch: pytest.MonkeyPatch
                                                                                       ) -> None:
    from skillmake.engine import index as index_module
    from skillmake.store.objects import TRIAL_SCHEMA

    project = make(tmp_path)
    spec = project.specs[0]
    _run_all(project)
    keys = [item.tkey.key for item in plan_spec(project, spec).items]
    (project.state_dir / "index" / f"{spec.name}.json").unlink()
    records = {key: project.store.get_action(key, schema=TRIAL_SCHEMA) for key in keys}
    old, new = 10**18, 3 * 10**18  # before and after the reading began (1.5e18)
    for key in keys:
        os.utime(project.store.action_path(key), ns=(new, new) if key == keys[0] else (old, old))
    read: list[str] = []
    real_read = index_module.Index._read
    monkeypatch.setattr(index_module.Index, "_read", lambda self, key: read.append(key) or real_read(self, key))
    index_module.refresh(project, spec.name, keys, records, before_ns=int(1.5e18))
    assert read == [keys[0]]  # the others came from the records in hand: no file opened again
    saved = orjson.loads((project.state_dir / "index" / f"{spec.name}.json").read_bytes())
    for key in keys:
        st = os.stat(project.store.action_path(key))
        assert saved["trials"][key][:4] == [st.st_ino, st.st_size, st.st_mtime_ns,
                                            digest_json(records[key]["outputs"])]
