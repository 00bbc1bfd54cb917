"""Settled specs: a spec whose every trial and grade is stored with a result, whose report passed and is as it
wrote it, and whose inputs are those of then — a plain run checks one digest and a few stats for it, and plans
(and makes doit check) none of its trials.

A spec's stamp (.skillmake/index/<spec>.settled.json) is written when a full plan finds it so (plans_at) or when
its report task has just written a passing report over a complete plan. It holds:
- `inputs`: what its trial and grade keys read and what its plan decides by (inputs_digest): the spec as loaded
  (every case, arm, check, timeout and setting, this run's overrides applied), the skill tree's digest, each arm's
  agent part (resolved model, CLI version, program files), the API arms' system prompts, the judged cases' judge
  parts, and the content digest of every fixture and check file;
- `state`: the stat of what the run would otherwise check per trial, one level up: the report files, the spec's
  index files and the folders above every cell's view (a removed case, arm or trial view changes one of them).

The store is trusted as a whole (trust.json): the stat of every fan-out folder of objects/ and actions/, as the
end of this project's last run left it. A deleted or added object or record changes its folder, so any change
made outside a run makes every spec be planned in full (checking each record's objects, as before) once. A run
records the store's new state when it ends, unless something was quarantined meanwhile.

What this does not see, by design: an in-place edit of a (read-only) object or of a file inside a cell's view;
the next full plan of the spec (an input change, a selection, `explain`, `report`) finds and repairs both."""

from __future__ import annotations

import atexit
import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from skillmake.core import atomic
from skillmake.core.canonical import KEY_VERSION, digest_json
from skillmake.results.checkout import VIEWS
from skillmake.run.keys import API_AGENTS
from skillmake.run.project import Project
from skillmake.spec.model import Spec
from skillmake.spec.skillfiles import file_digest, resolve_system_prompt
from skillmake.store.objects import Store

VERSION = 1
REPORT_FILES = (".inputs.json", "report.json", "benchmark.json", "junit.xml", "report.html")  # report.STAMP, WRITTEN
TRUST = "trust.json"


def eligible(spec: Spec) -> bool:
    """Specs whose plan depends on more than their own inputs and records are always planned in full: trigger
    tests (their keys read every skill on offer) and adaptive trials (the plan depends on stored outcomes)."""
    return spec.trigger_tests is None and spec.adaptive is None


def stamp_path(project: Project, name: str) -> Path:
    return project.state_dir / "index" / f"{name}.settled.json"


def _default(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    raise TypeError(f"{type(value).__name__} is not serialisable")


def inputs_digest(project: Project, spec: Spec) -> str | None:
    """The digest of everything the spec's trial and grade keys read and its plan decides by (the module's
    docstring lists them); None when something cannot be read (a missing fixture): then it is planned in full,
    which says what is wrong."""
    from skillmake.run.grade import judge_part

    try:
        loaded = orjson.dumps(spec, default=_default, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
        keys = project.keys
        skill = keys.skill_part(spec).digest if spec.skill.present else None
        agents = [keys.agent_part(spec, arm.agent).digest for arm in spec.arms]
        prompts = [resolve_system_prompt(spec, spec.skill if arm.skill and spec.skill.present else None, project.root)
                   for arm in spec.arms if arm.agent.kind in API_AGENTS]
        files: set[str] = set()
        judges: list[str] = []
        for case in spec.cases:
            files.update(f.source for f in case.input_files)
            for check in case.checks:
                files.update(os.path.join(spec.folder, check.raw[k]) for k in ("schema_file", "script")
                             if isinstance(check.raw.get(k), str))
            if case.has_judge:
                judges.append(judge_part(spec, case).digest)
        digests = {path: file_digest(path) for path in sorted(files)}
    except (OSError, TypeError, ValueError):
        return None
    return digest_json({"version": VERSION, "key_version": KEY_VERSION,
                        "spec": "sha256:" + hashlib.sha256(loaded).hexdigest(), "skill": skill, "agents": agents,
                        "system_prompts": prompts, "judges": judges, "files": digests})


def state_signature(project: Project, spec: Spec) -> str:
    """The stat of the spec's report files, its index files and every folder above its cells' views."""
    stats: list[Any] = []
    reports = project.reports_dir / spec.name
    index = project.state_dir / "index"
    paths = [str(reports / name) for name in REPORT_FILES]
    paths += [str(index / f"{spec.name}.json"), str(index / VIEWS.format(spec.name))]
    runs = f"{project.runs_dir}/{spec.name}"
    paths.append(runs)
    for case in spec.cases:
        paths.append(f"{runs}/{case.id}")
        paths.extend(f"{runs}/{case.id}/{arm.name}" for arm in spec.arms)
    for path in paths:
        try:
            st = os.lstat(path)
            stats.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            stats.append(None)
    return digest_json(stats)


def is_settled(project: Project, spec: Spec) -> bool:
    """Whether the spec's stamp still holds: same inputs, same state (the store is trusted separately)."""
    if not eligible(spec):
        return False
    try:
        stamp = orjson.loads(stamp_path(project, spec.name).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    if not isinstance(stamp, dict) or stamp.get("version") != VERSION:
        return False
    # The state first: a few stats, where the inputs may hash a fixture.
    if stamp.get("state") != state_signature(project, spec):
        return False
    try:
        return stamp.get("inputs") == inputs_digest(project, spec)
    except Exception:  # whatever went wrong, the full plan meets it again and says so, for this spec only
        return False


def settle(project: Project, spec: Spec) -> None:
    """Stamp the spec as settled: called only once its plan is complete and its report passed and is intact."""
    if not eligible(spec):
        return
    try:
        inputs = inputs_digest(project, spec)
        if inputs is None:
            return
        stamp = {"version": VERSION, "inputs": inputs, "state": state_signature(project, spec)}
        atomic.write_bytes(stamp_path(project, spec.name), orjson.dumps(stamp), durable=False)
    except Exception:  # a stamp is only a fast path: without it the spec is planned in full, never wrongly skipped
        unsettle(project, spec.name)


def unsettle(project: Project, spec_name: str) -> None:
    """Forget the spec's stamp (its report failed, or is being rewritten)."""
    try:
        os.unlink(stamp_path(project, spec_name))
    except OSError:
        pass


# --- the store, trusted as a whole ---------------------------------------------------------------------------

def store_signature(store: Store) -> str:
    """The stat of objects/, actions/ and each of their fan-out folders: an object or record added or removed
    (by a run, by hand, by another project sharing the store) changes one of them."""
    stats: list[Any] = []
    for base in (store.objects, store.actions):
        try:
            st = os.stat(base)
            stats.append((str(base), st.st_ino, st.st_mtime_ns))
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            stats.append((str(base), None))
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            stats.append((entry.name, st.st_ino, st.st_mtime_ns))
    return digest_json(stats)


def quarantine_mark(store: Store) -> list[int] | None:
    """The quarantine folder's stat: it changes whenever something is set aside (a deletion from the store)."""
    try:
        st = os.stat(store.quarantine_dir)
    except OSError:
        return None
    return [st.st_ino, st.st_mtime_ns]


def _trust_path(project: Project) -> Path:
    return project.state_dir / "index" / TRUST


def store_trusted(project: Project, signature: str) -> bool:
    """Whether the store is as this project's last run left it (then a settled spec's records are all there)."""
    try:
        trust = orjson.loads(_trust_path(project).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(trust, dict) and trust.get("store") == signature


_AT_EXIT: dict[str, tuple[Project, list[int] | None]] = {}  # project root → (project, quarantine mark at start)


def begin(project: Project) -> bool:
    """A run starts planning: whether the store is as this project's last run left it. When this process ends,
    the store is recorded as it is then (trust_store), from the quarantine mark taken now."""
    if not _AT_EXIT:
        atexit.register(_trust_all)
    _AT_EXIT.setdefault(project.root, (project, quarantine_mark(project.store)))  # the earliest mark counts
    return store_trusted(project, store_signature(project.store))


def _trust_all() -> None:
    for project, mark in _AT_EXIT.values():
        trust_store(project, mark)
    _AT_EXIT.clear()


def trust_store(project: Project, quarantine_then: list[int] | None) -> None:
    """At the end of a run: record the store as it is now — unless something was set aside since the run began
    (`quarantine_then`): a record of a spec this run did not plan in full may be gone, so every spec is planned
    in full once more."""
    if not (project.state_dir / "index").is_dir():  # the project is gone (a test's folder): nothing to record
        return
    try:
        if quarantine_mark(project.store) != quarantine_then:
            distrust_store(project)
            return
        atomic.write_bytes(_trust_path(project), orjson.dumps({"store": store_signature(project.store)}),
                           durable=False)
    except OSError:  # the next run plans every spec in full: slower, never wrong
        distrust_store(project)


def distrust_store(project: Project) -> None:
    try:
        os.unlink(_trust_path(project))
    except OSError:
        pass
