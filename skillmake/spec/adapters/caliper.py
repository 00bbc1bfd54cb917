"""caliper's `.eval.yaml` (caliper 0.1.0: skill/judge backends, sandbox, tasks with expect/assert) as a native spec.

What it accepts is what caliper 0.1.0's own loader (`caliper.schema.spec.load_spec`, pydantic) accepts: the top
level is closed, but unknown keys inside skill, judge, sandbox and a task are ignored (warned about here), a task's
`id:` is replaced by the automatic one, an empty or null string field means "none" (caliper tests them for truth),
`tasks: []` runs nothing, and a duplicate YAML key keeps its last value. tests/differential/test_caliper_loader.py
holds both loaders to that over a corpus; docs/formats.md lists what still differs, and why."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from skillmake.core.errors import SpecError, SpecErrors, did_you_mean
from skillmake.spec.adapters import Translation
from skillmake.spec.source import Source

# caliper's backend names (and the aliases its loader normalises) → skillmake's agent kinds and judge providers.
AGENT_KINDS = {"claude-code": "claude-code", "claude": "claude-code", "codex": "codex",
               "claude-api": "anthropic", "anthropic": "anthropic", "openai-api": "openai", "openai": "openai"}
JUDGE_PROVIDERS = AGENT_KINDS  # the same four backends judge; the native judge names are the agent kinds
DEFAULT_BACKEND = "claude-code"  # caliper's default for both skill.backend and judge.backend

# The keys caliper's models read; any other key inside these mappings is ignored by caliper (pydantic's default).
KNOWN: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "skill": ("path", "backend", "model"), "judge": ("backend", "model"),
    "sandbox": ("extra_path", "forbidden_files"),
    "task": ("id", "name", "prompt", "expect", "assert", "setup", "cleanup"),
})

# `caliper run`'s --k and --timeout defaults: what a caliper file runs with when nobody says, below the project
# config (overrides.py). Not written into the translation: a file cannot declare them, so they must not beat
# `[tool.skillmake] trials`/`timeout` as a spec's own value would.
RUN_DEFAULTS: Mapping[str, Any] = MappingProxyType({"trials": 3, "timeout": 120.0})

NOTES = (
    "caliper run's defaults apply: --k 3 trials and --timeout 120 s, unless the command line (--k, --trials, "
    "--timeout), the environment (SKILLMAKE_TRIALS, SKILLMAKE_TIMEOUT) or the project config (trials, timeout) says "
    "otherwise; --workers 4 is parallelism only: skillmake's -j (default 1) applies",
    "caliper's pass@k (1 - (1 - c/k)^k) is reported first, as pass_at_k_caliper, beside skillmake's unbiased "
    "pass_at_k",
    "assert: runs over the workspace as the task left it, before cleanup (as caliper runs it before cleanup); "
    "caliper runs it in the spec's folder, skillmake in the trial's workspace",
)


def task_id(index: int) -> str:
    """caliper's automatic id of the task at position `index` (0-based): task-001, task-002, …"""
    return f"task-{index + 1:03d}"


def assert_check(text: str) -> dict[str, Any]:
    """A task's `assert` as a python check: caliper reads one line ending in .py as a script path (relative to
    the spec), anything else as inline code."""
    stripped = text.strip()
    if "\n" not in stripped and stripped.endswith(".py"):
        return {"type": "python", "script": stripped}
    return {"type": "python", "code": text}


def _text(value: Any) -> str | None:
    """A caliper string field as caliper uses it: tested for truth, so null and "" both mean none."""
    return value if isinstance(value, str) and value else None


class CaliperAdapter:
    format = "caliper"
    schema = "caliper.schema.json"
    run_defaults = RUN_DEFAULTS

    def translate(self, src: Source, *, path: str, root: str) -> Translation:
        seed: dict[str, Any] = src.data
        warnings = _ignored_keys(seed) + _duplicates(src)
        skill = seed.get("skill") or {}
        # No (or an empty) skill.path: caliper runs the bare agent, and so does skillmake (`skill: null`).
        data: dict[str, Any] = {"skill": _text(skill.get("path"))}
        origin: dict[str, str] = {"/skill": "/skill/path" if "path" in skill else "/skill", "/agent": "/skill"}
        agent: dict[str, Any] = {"kind": AGENT_KINDS[skill.get("backend", DEFAULT_BACKEND)]}
        origin["/agent/kind"] = "/skill/backend" if "backend" in skill else "/skill"
        if _text(skill.get("model")):
            agent["model"] = skill["model"]
            origin["/agent/model"] = "/skill/model"
        data["agent"] = agent
        judge_seed = seed.get("judge") or {}
        judge: dict[str, Any] = {"provider": JUDGE_PROVIDERS[judge_seed.get("backend", DEFAULT_BACKEND)]}
        origin["/judge"] = "/judge" if "judge" in seed else ""
        origin["/judge/provider"] = "/judge/backend" if "backend" in judge_seed else origin["/judge"]
        if _text(judge_seed.get("model")):
            judge["model"] = judge_seed["model"]
            origin["/judge/model"] = "/judge/model"
        data["judge"] = judge
        sandbox = {k: v for k, v in (seed.get("sandbox") or {}).items() if k in KNOWN["sandbox"]}
        if sandbox:
            data["sandbox"] = sandbox  # the same two keys, with the same meaning
            origin["/sandbox"] = "/sandbox"
        errors: list[SpecError] = _yaml11_errors(src, path)
        data["cases"] = [self._case(task, i, origin, src, errors) for i, task in enumerate(seed["tasks"])]
        origin["/cases"] = "/tasks"
        if errors:
            raise SpecErrors(errors)
        if not seed["tasks"]:
            warnings.append("warning: tasks: [] — there is nothing to run (caliper runs nothing either)")
        # caliper's default backend (no skill.backend written) is what the project's agent overrides (§ precedence:
        # spec > project config > the format's default); a backend the file names is the spec's own choice.
        return Translation(data=data, origin=origin, notes=(*warnings, *NOTES),
                           agent_is_default="backend" not in skill, empty=not seed["tasks"])

    @staticmethod
    def _case(task: dict[str, Any], i: int, origin: dict[str, str], src: Source,
              errors: list[SpecError]) -> dict[str, Any]:
        native, seed = f"/cases/{i}", f"/tasks/{i}"
        case: dict[str, Any] = {"id": task_id(i), "prompt": task["prompt"]}
        origin.update({native: seed, f"{native}/id": seed, f"{native}/prompt": f"{seed}/prompt"})
        if task["name"].strip():
            case["description"] = task["name"]
            origin[f"{native}/description"] = f"{seed}/name"
        for key in ("setup", "cleanup"):
            # caliper hands a blank command to the shell, which does nothing: the same as none.
            if _text(task.get(key)) and task[key].strip():
                case[key] = task[key]
                origin[f"{native}/{key}"] = f"{seed}/{key}"
        if _text(task.get("expect")):
            case["expectations"] = [task["expect"]]
            origin[f"{native}/expectations"] = f"{seed}/expect"
            origin[f"{native}/expectations/0"] = f"{seed}/expect"
        text = _text(task.get("assert"))
        if text is None and "expectations" not in case:  # both written, both null or empty: caliper refuses
            errors.append(SpecError("needs a non-empty 'expect' or 'assert' (caliper treats null and \"\" as absent)",
                                    loc=src.locate(seed), hint="write what success looks like in 'expect', or "
                                                               "Python assertions in 'assert'"))
        elif text is not None and not text.strip():
            # caliper runs a blank assert as an empty script, which always passes: surely not what was meant.
            errors.append(SpecError("assert is blank; caliper runs it as an empty script that always passes",
                                    loc=src.locate(f"{seed}/assert"),
                                    hint="write the Python assertions (or a path to a .py file), or remove the key"))
        elif text is not None:
            case["checks"] = [assert_check(text)]
            origin[f"{native}/checks"] = f"{seed}/assert"
            for key in ("", "/type", "/code", "/script"):
                origin[f"{native}/checks/0{key}"] = f"{seed}/assert"
        return case


def _ignored_keys(seed: dict[str, Any]) -> list[str]:
    """A warning for every key caliper ignores (inside skill, judge, sandbox or a task), with a did-you-mean."""
    places: list[tuple[str, str, Any]] = [(name, name, seed.get(name)) for name in ("skill", "judge", "sandbox")]
    places += [(f"tasks[{i}]", "task", task) for i, task in enumerate(seed.get("tasks") or [])]
    out = []
    for shown, kind, block in places:
        for key in block or {}:
            if key not in KNOWN[kind]:
                guess = did_you_mean(key, KNOWN[kind])
                out.append(f"warning: {shown}.{key} is not a caliper key; caliper ignores it and so does skillmake"
                           + guess)
    for i, task in enumerate(seed.get("tasks") or []):
        if "id" in task:
            out.append(f"warning: tasks[{i}].id is replaced by caliper's automatic id {task_id(i)}, here too")
    return out


def _yaml11_errors(src: Source, path: str) -> list[SpecError]:
    """Text fields caliper cannot read as text: PyYAML (YAML 1.1) makes a plain `yes`, `off` or `2024-01-01` a
    boolean or a date, which caliper's loader refuses where it wants a string. skillmake reads them as text (YAML
    1.2), so the file would pass here and fail under caliper: refused, with the fix."""
    import datetime

    import yaml

    try:
        with open(path, encoding="utf-8-sig") as f:
            theirs = yaml.load(f.read(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    if not isinstance(theirs, dict):
        return []
    fields: list[tuple[str, Any]] = []
    for block, keys in (("skill", ("path", "model")), ("judge", ("model",))):
        if isinstance(theirs.get(block), dict):
            fields += [(f"/{block}/{k}", theirs[block].get(k)) for k in keys]
    if isinstance(theirs.get("sandbox"), dict):
        for key in KNOWN["sandbox"]:
            items = theirs["sandbox"].get(key)
            fields += [(f"/sandbox/{key}/{i}", v) for i, v in enumerate(items)] if isinstance(items, list) else []
    tasks = theirs.get("tasks")
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        if isinstance(task, dict):
            fields += [(f"/tasks/{i}/{k}", task.get(k))
                       for k in ("name", "prompt", "expect", "assert", "setup", "cleanup")]
    out = []
    for pointer, value in fields:
        what = "a boolean" if isinstance(value, bool) else "a date" if isinstance(
            value, (datetime.date, datetime.datetime)) else None
        if what:
            out.append(SpecError(f"caliper reads this value as {what} (YAML 1.1), not as text, and refuses the file",
                                 loc=src.locate(pointer), hint="quote it: \"…\""))
    return out


def _duplicates(src: Source) -> list[str]:
    """caliper reads YAML with PyYAML, whose last duplicate key wins: accepted, with a warning for each."""
    return [f"warning: duplicate key {key!r} at line {line} (first at line {first}); caliper keeps the last value, "
            "and so does skillmake" for key, line, first in getattr(src, "duplicates", ())]


ADAPTER = CaliperAdapter()
