"""A synthetic results store for the viewer's tests and benchmark: specs, reports built by the real report code,
cell views, records and artifacts — optionally hostile (outputs carrying HTML, script and `javascript:` links)."""

from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from skillmake.core.canonical import digest_json
from skillmake.results.publish import publish
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, AgentConfig, Arm, Case, Skill, Spec
from skillmake.store.objects import Store

# A 1×1 PNG.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJ"
                       "RU5ErkJggg==")
HOSTILE = ('<script>window.__pwned = "script"</script></textarea><img src=x onerror="window.__pwned=\'img\'">'
           '" onmouseover="window.__pwned=\'attr\'" x="<b>not bold</b> [click me](javascript:window.__pwned=\'md\') '
           "[data](data:text/html,<script>alert(1)</script>) </pre></details></main><iframe src=\"javascript:1\">")
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>window.__pwned="svg"</script><rect width="9" height="9"/></svg>'


@dataclass(frozen=True, slots=True, kw_only=True)
class Built:
    root: Path
    state: Path
    store: Store
    specs: dict[str, Spec]


def _spec(root: Path, name: str, cases: int, arms: tuple[str, ...], trials: int, tags: bool) -> Spec:
    skill_dir = root / "skills" / name
    skill_dir.mkdir(parents=True, exist_ok=True)
    (skill_dir / "SKILL.md").write_text(f"---\nname: {name}\ndescription: synthetic\n---\nDo the thing.\n")
    agent = AgentConfig(kind="command", command=("true",))
    arm_objs = tuple(Arm(name=a, agent=agent, skill=a != WITHOUT_SKILL) for a in arms)
    case_objs = tuple(Case(id=f"case-{i:04d}", index=i, prompt=f"task {i} of {name}: list the venues",
                           tags=(("slow",) if i % 2 else ("fast",)) if tags else ()) for i in range(cases))
    path = root / f"{name}.eval.yaml"
    path.write_text("# synthetic\n")
    return Spec(name=name, path=str(path), relpath=path.name,
                skill=Skill(name=name, path=str(skill_dir), kind="folder"), agent=agent, arms=arm_objs,
                cases=case_objs, trials=trials)


def _key(*parts: Any) -> str:
    return digest_json(list(parts))


def _transcript(text: str) -> bytes:
    events = [
        {"type": "system", "subtype": "init", "model": "claude-test", "tools": ["Bash", "Skill"], "skills": ["s"]},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "text", "text": "Let me look. " + text},
            {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": "s"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Launching skill: s"}]}},
        {"type": "assistant", "message": {"id": "m2", "role": "assistant",
                                          "content": [{"type": "text", "text": text}]}},
        {"type": "result", "subtype": "success", "num_turns": 2, "duration_ms": 1234, "total_cost_usd": 0.0123},
    ]
    return b"\n".join(orjson.dumps(e) for e in events) + b"\n"


def build(root: Path, *, specs: int = 1, cases: int = 3, arms: tuple[str, ...] = (WITH_SKILL, WITHOUT_SKILL),
          trials: int = 2, hostile: bool = False, files: bool = True, tags: bool = True,
          fail_every: int = 3, now: str = "2026-01-02T03:04:05+00:00", prefix: str = "spec",
          run_id: str = "20260102T030405-1-abcdef") -> Built:
    """A project at `root` whose `.skillmake/` holds reports, views, records and artifacts for the given suite."""
    state = root / ".skillmake"
    store = Store(state)
    text = HOSTILE if hostile else "Blue Door Cafe, Maple Library, Riverside Park"
    out_digest = store.put((text + "\n").encode())
    empty = store.put(b"")
    transcript = store.put(_transcript(text))
    file_digests: dict[str, str] = {}
    if files:
        file_digests = {"report.md": store.put(f"# Venues\n\n- **Blue Door**\n- {text}\n".encode()),
                        "table.csv": store.put(f"name,url\nBlue Door,https://b.example\n\"{text}\",x\n".encode()),
                        "data.json": store.put(orjson.dumps({"venues": ["Blue Door"], "note": text})),
                        "chart.png": store.put(PNG)}
        if hostile:
            file_digests |= {"evil.svg": store.put(SVG), "page.html": store.put(HOSTILE.encode()),
                             "fake.png": store.put(b"<html><script>window.__pwned='fake png'</script></html>")}
    run_fragment = store.put_json({"prompt": "p", "input_files": {"venues.csv": store.put(b"name,url\nA,b\n")}})
    tree = store.put_json({name: {"file": d} for name, d in file_digests.items()}
                          | {"notes/extra.txt": {"file": store.put(b"left behind\n")}})
    built: dict[str, Spec] = {}
    for s in range(specs):
        name = f"{prefix}-{s:02d}" if specs > 1 else prefix
        spec = _spec(root, name, cases, arms, trials, tags)
        built[name] = spec
        trial_records, grade_records = [], []
        for ci, case in enumerate(spec.cases):
            case_dir = state / "runs" / name / case.id
            case_dir.mkdir(parents=True, exist_ok=True)
            (case_dir / "eval_metadata.json").write_bytes(orjson.dumps(
                {"eval_id": case.index, "eval_name": case.id, "prompt": (case.prompt or "") + (" " + text if hostile
                                                                                               else ""),
                 "assertions": []}))
            for arm in spec.arms:
                for k in range(trials):
                    labels = {"spec": name, "skill": name, "case": case.id, "arm": arm.name, "k": k}
                    tkey = _key("t", name, case.id, arm.name, k)
                    failed = bool(fail_every and (ci + k) % fail_every == 0) or not arm.skill
                    trial = {"schema": "skillmake/trial-record@1", "kind": "trial", "key": tkey,
                             "inputs": {"key_version": 1, "skill": None, "run": run_fragment,
                                        "agent": _key("agent"), "k": k},
                             "labels": labels, "agent": {"kind": "claude-code", "model": "claude-test", "version": "1"},
                             "outcome": "completed", "error": None, "exit_code": 0,
                             "outputs": {"output": out_digest, "stdout": out_digest, "stderr": empty,
                                         "transcript": transcript, "files": dict(file_digests)},
                             "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                                       "cost_usd": 0.0123, "num_turns": 2, "requests": 2},
                             "timing": {"started": now, "duration_ms": 1234.5, "agent_ms": 1200.0},
                             "activation": {"skills": ["s"] if arm.skill else [], "forbidden_reads": []},
                             "workspace": tree, "workspace_note": None, "run_id": run_id}
                    expectations = [
                        {"text": "output names Blue Door", "passed": not failed, "source": "check", "id": "venue",
                         "evidence": text if failed else "found 'Blue Door' at char 0"},
                        {"text": "the answer is friendly", "passed": True, "source": "judge", "id": "friendly",
                         "evidence": "reads well: " + text, "score": 0.8}]
                    grade = {"schema": "skillmake/grade-record@1", "kind": "grade", "key": _key("g", tkey),
                             "trial_key": tkey, "inputs": {"key_version": 1, "outputs": _key("o"),
                                                           "grade": _key("gp"), "judge": _key("jp")},
                             "labels": labels, "outcome": "fail" if failed else "pass", "error": None,
                             "score": 0.5 if failed else 1.0, "expectations": expectations,
                             "usage": {"total_tokens": 50, "cost_usd": 0.001}, "timing": {"started": now,
                                                                                           "duration_ms": 10.0},
                             "run_id": run_id}
                    trial_records.append(trial)
                    grade_records.append(grade)
                    folder = case_dir / arm.name / f"trial-{k}"
                    folder.mkdir(parents=True, exist_ok=True)
                    (folder / "trial.json").write_bytes(orjson.dumps(trial))
                    (folder / "grade.json").write_bytes(orjson.dumps(grade))
                    for record in (trial, grade):
                        path = store.action_path(record["key"])
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_bytes(orjson.dumps(record))
        publish(state / "reports" / name, spec, trial_records, grade_records, now=now, run_id=run_id)
    return Built(root=root, state=state, store=store, specs=built)


def with_triggers(built: Built, name: str, *, hostile: bool = False) -> None:
    """Add report.json's optional `triggers` block (trigger evals) to a spec's report, as a hand-made report."""
    path = built.state / "reports" / name / "report.json"
    report = orjson.loads(path.read_bytes())
    query = HOSTILE if hostile else "list the venues in my csv"
    key = _key("trigger", name)
    record_path = built.store.action_path(key)
    record_path.parent.mkdir(parents=True, exist_ok=True)
    record_path.write_bytes(orjson.dumps({"key": key, "kind": "trial", "note": "a trigger trial"}))
    report["triggers"] = {
        "agent": "claude-code", "runs": 3, "threshold": 0.5,
        "queries": [
            {"id": "q-venues", "query": query, "should_trigger": True, "runs": 3, "triggers": 2, "errors": 0,
             "trigger_rate": 0.6667, "pass": True,
             "trials": [{"k": 0, "triggered": True, "outcome": "completed", "record": key},
                        {"k": 1, "triggered": True, "outcome": "completed", "record": key},
                        {"k": 2, "triggered": False, "outcome": "completed", "record": key}]},
            {"id": "q-weather", "query": "what is the weather", "should_trigger": False, "runs": 3, "triggers": 1,
             "errors": 0, "trigger_rate": 0.3333, "pass": True, "trials": []}],
        "summary": {"total": 2, "passed": 2, "failed": 0, "tp": 1, "fp": 0, "tn": 1, "fn": 0, "precision": 1.0,
                    "recall": 1.0, "f1": 1.0, "accuracy": 1.0},
        "false_positives": []}
    path.write_bytes(orjson.dumps(report))


def later(now: str, seconds: int) -> str:
    return (dt.datetime.fromisoformat(now) + dt.timedelta(seconds=seconds)).isoformat()
