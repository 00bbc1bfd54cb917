"""caliper's `.eval.yaml` (caliper 0.1: skill/judge backends, sandbox, tasks with expect/assert) as a native spec."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..source import Source
from . import Translation

# caliper's backend names (and the aliases its loader normalises) → skillmake's agent kinds and judge providers.
AGENT_KINDS = {"claude-code": "claude-code", "claude": "claude-code", "codex": "codex",
               "claude-api": "anthropic", "anthropic": "anthropic", "openai-api": "openai", "openai": "openai"}
JUDGE_PROVIDERS = AGENT_KINDS  # the same four backends judge; the native judge names are the agent kinds
DEFAULT_BACKEND = "claude-code"  # caliper's default for both skill.backend and judge.backend


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
    "assert: runs in the trial's workspace after cleanup (caliper: in the spec's folder, before cleanup)",
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


class CaliperAdapter:
    format = "caliper"
    schema = "caliper.schema.json"
    run_defaults = RUN_DEFAULTS

    def translate(self, src: Source, *, path: str, root: str) -> Translation:
        seed: dict[str, Any] = src.data
        skill = seed.get("skill") or {}
        # No skill.path: caliper runs the bare agent, and so does skillmake (`skill: null`, docs/formats.md).
        data: dict[str, Any] = {"skill": skill.get("path")}
        origin: dict[str, str] = {"/skill": "/skill/path" if "path" in skill else "/skill", "/agent": "/skill"}
        agent: dict[str, Any] = {"kind": AGENT_KINDS[skill.get("backend", DEFAULT_BACKEND)]}
        origin["/agent/kind"] = "/skill/backend" if "backend" in skill else "/skill"
        if "model" in skill:
            agent["model"] = skill["model"]
            origin["/agent/model"] = "/skill/model"
        data["agent"] = agent
        judge_seed = seed.get("judge") or {}
        judge: dict[str, Any] = {"provider": JUDGE_PROVIDERS[judge_seed.get("backend", DEFAULT_BACKEND)]}
        origin["/judge"] = "/judge" if "judge" in seed else ""
        origin["/judge/provider"] = "/judge/backend" if "backend" in judge_seed else origin["/judge"]
        if "model" in judge_seed:
            judge["model"] = judge_seed["model"]
            origin["/judge/model"] = "/judge/model"
        data["judge"] = judge
        if "sandbox" in seed:
            data["sandbox"] = dict(seed["sandbox"])  # the same two keys, with the same meaning
            origin["/sandbox"] = "/sandbox"
        data["cases"] = [self._case(task, i, origin) for i, task in enumerate(seed["tasks"])]
        origin["/cases"] = "/tasks"
        notes = NOTES
        return Translation(data=data, origin=origin, notes=notes)

    @staticmethod
    def _case(task: dict[str, Any], i: int, origin: dict[str, str]) -> dict[str, Any]:
        native, seed = f"/cases/{i}", f"/tasks/{i}"
        case: dict[str, Any] = {"id": task_id(i), "description": task["name"], "prompt": task["prompt"]}
        origin.update({native: seed, f"{native}/id": seed, f"{native}/description": f"{seed}/name"})
        for key in ("setup", "cleanup"):
            if key in task:
                case[key] = task[key]
        if "expect" in task:
            case["expectations"] = [task["expect"]]
            origin[f"{native}/expectations"] = f"{seed}/expect"
            origin[f"{native}/expectations/0"] = f"{seed}/expect"
        if "assert" in task:
            check = assert_check(task["assert"])
            case["checks"] = [check]
            origin[f"{native}/checks"] = f"{seed}/assert"
            for key in ("", "/type", "/code", "/script"):
                origin[f"{native}/checks/0{key}"] = f"{seed}/assert"
        return case


ADAPTER = CaliperAdapter()
