"""Which tool's format a file is in, from its name and top-level keys only (cheap: discovery calls it on every
file it finds, before anything is parsed in full)."""

from __future__ import annotations

import os

# Names other tools give their spec files, besides skillmake's own suffixes (.eval.yaml/.eval.yml/.eval.json).
SEED_NAMES = frozenset({"evals.json", "eval.yml", "eval.yaml", "eval.json"})
# clauditor's top-level keys that no level of a skillmake spec has, and what a skillmake spec writes instead: a
# native spec that uses one is told so (a fuzzy "did you mean" would send `variance` to `variants`).
CLAUDITOR_KEYS: dict[str, str] = {
    "skill_name": "`name:` for the spec, or `id:` in the case",
    "test_args": "`args:` in the case (the prompt is `/<skill> <args>`)",
    "assertions": "`checks:` in the case",
    "grading_criteria": "`criteria:` in the case",
    "grading_model": "`judge: {model: …}`",
    "grading_provider": "`judge: {provider: …}`",
    "transport": "`judge: {provider: claude-code}` (cli) or `{provider: anthropic}` (api)",
    "harness": "`agent: {kind: …}`",
    "grade_thresholds": "`thresholds:`",
    "variance": "`trials: N` for n_runs and `thresholds: {min_stability: …}`",
}


def seed_file(path: str) -> bool:
    """Whether a file with this name may hold another tool's eval spec (skill-creator's evals/evals.json, eva's
    eval.yml, clauditor's eval.json beside a SKILL.md); skillmake's own suffixes are matched by the caller."""
    name = os.path.basename(path)
    if name == "evals.json":
        return os.path.basename(os.path.dirname(path)) == "evals"
    if name == "eval.json":  # too generic a name to claim anywhere else (a stat, only for files of this name)
        return os.path.isfile(os.path.join(os.path.dirname(path), "SKILL.md"))
    return name in SEED_NAMES


def foreign_format(keys: frozenset[str], path: str = "", data: object = None) -> str | None:
    """The other tool whose eval format a file with these top-level keys is in (docs/formats.md), None for a
    skillmake spec. With the parsed `data`, a file is also told by its values: a `skill:` mapping is caliper's
    (a native `skill:` is a path), so a caliper file missing `tasks:` is reported under caliper's names."""
    name = os.path.basename(path)
    if (isinstance(data, dict) and isinstance(data.get("skill"), dict) and "tasks" not in keys
            and not keys & {"cases", "agent"}):
        return "caliper"
    if name == "evals.json" or (keys & {"skill_name", "evals"} == {"skill_name", "evals"}):
        return "skill-creator"  # evals/evals.json: skill_name + evals[] (integer ids, prompt, expectations)
    if keys & {"skill", "agent"}:
        if "tasks" in keys and not keys & {"cases", "agent"}:
            return "caliper"  # caliper's .eval.yaml: skill {path, backend}, judge {backend}, tasks — no cases
        return None
    if name in ("eval.yml", "eval.yaml") or ("cases" in keys and keys & {"defaults", "triggering"}):
        return "eva"  # eva's eval.yml: defaults + cases with name/assert/inputs, and no skill or agent
    if "tasks" in keys and "cases" not in keys:
        return "caliper"
    if keys & {"skill_name", "test_args", "assertions", "sections", "grading_criteria", "grade_thresholds",
               "trigger_tests", "user_prompt"} and "cases" not in keys:
        return "clauditor"  # <skill>.eval.json: one case (test_args), assertions, sections, grading_criteria
    return None


def seed_spec_name(fmt: str, path: str) -> str | None:
    """The spec name (task names, report folders) of a seed file whose own file name says nothing: skill-creator's
    `<skill>/evals/evals.json` and eva's `<name>/eval.yml` are named after their folder. None: the file's stem
    (`<name>.eval.json`, `<name>.eval.yaml`), as for a native spec. Adapters set this as the translation's `name`."""
    folder = os.path.dirname(os.path.abspath(path))
    if fmt == "skill-creator" and os.path.basename(path) == "evals.json":
        return os.path.basename(os.path.dirname(folder))
    if fmt == "eva" and os.path.basename(path) in ("eval.yml", "eval.yaml"):
        return os.path.basename(folder)
    if fmt == "clauditor" and os.path.basename(path) in ("SKILL.eval.json", "eval.json"):
        return os.path.basename(folder)  # clauditor's spec inside a SKILL.md folder: named after the skill
    return None
