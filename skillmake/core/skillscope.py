"""What belongs to a skill: the one rule that decides which files of a SKILL.md folder are hashed into the skill
tree digest and installed into a trial (docs/keys.md, "What belongs to the skill").

A SKILL.md folder often holds more than the skill: the evals written about it (clauditor's `SKILL.eval.json`,
caliper's `.eval.yaml` and its `assertions/`, skill-creator's `evals/`), the project's configuration, what the
tools wrote there (caliper's `.caliper/results/`, a `--output` file, a schema copy) and caches. None of it is
the skill: hashing it would make every run re-run every `with_skill` trial (a results file changes each run),
and installing it would show the agent the expected answers. The rule is a function of the folder's content
only (names, places and, for JSON files, what they hold), so every clone and every run agrees on it.
"""

from __future__ import annotations

import os
import threading

# Anywhere in the tree: version control, caches, and the state folders of skillmake and the tools it reads.
SKILL_SKIP = frozenset({".git", ".hg", ".svn", "__pycache__", ".DS_Store", "node_modules", ".pytest_cache",
                        ".mypy_cache", ".ruff_cache", ".skillmake", ".caliper", ".clauditor"})
# Anywhere in the tree: specs of every format and the files skillmake keeps beside them.
EVAL_SUFFIXES = (".eval.yaml", ".eval.yml", ".eval.json", ".eval.jsonl", ".promotion.json")
CONFIG_NAMES = frozenset({"skillmake.toml"})  # the project's configuration, wherever the project root is
RESULTS_MAX_BYTES = 8 << 20  # a JSON file larger than this is never taken for a results file
SCHEMA_ID_PREFIX = "https://skillmake.dev/schemas/"  # the $id of every schema skillmake writes out

_memo: dict[tuple[str, int, int, int], bool] = {}
_memo_lock = threading.Lock()


def not_skill(folder: str, name: str, *, top: str) -> bool:
    """Whether the entry `name` of `folder`, inside the skill folder `top`, is not part of the skill:

    - anywhere: SKILL_SKIP names (VCS, caches, `.skillmake/`, `.caliper/`, `.clauditor/`), spec files
      (EVAL_SUFFIXES), `skillmake.toml`, and a JSON file that is a results file or a schema copy (results_file);
    - at the top of the folder: clauditor's `eval.json` (beside SKILL.md), skill-creator's `evals/` (holding
      `evals.json` or a spec), and caliper's `assertions/` when a spec sits beside it.
    """
    if name in SKILL_SKIP or name in CONFIG_NAMES or name.endswith(EVAL_SUFFIXES):
        return True
    full = os.path.join(folder, name)
    if name.endswith(".json") and results_file(full):
        return True
    if name not in ("eval.json", "evals", "assertions") or not _same(folder, top):
        return False
    if name == "eval.json":
        return os.path.isfile(os.path.join(folder, "SKILL.md"))
    if name == "evals":  # also once evals.json is gone and the spec `skillmake import` wrote stands in for it
        return os.path.isfile(os.path.join(full, "evals.json")) or _has_spec(full)
    return os.path.isdir(full) and _has_spec(folder)


def results_file(path: str) -> bool:
    """Whether the regular file at `path` is JSON a tool wrote about a run, not skill content: skillmake's
    `--output` file (an object with `run_id` and `reports`), caliper's results file (`task_results` and
    `aggregate`), or a copy of one of skillmake's schemas (`$id` under SCHEMA_ID_PREFIX). Memoised on the file's
    identity, size and mtime; a link, an unreadable file or one over RESULTS_MAX_BYTES is not one."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not os.path.isfile(path) or os.path.islink(path) or st.st_size > RESULTS_MAX_BYTES:
        return False
    sig = (path, st.st_ino, st.st_size, st.st_mtime_ns)
    known = _memo.get(sig)
    if known is None:
        known = _sniff(path)
        with _memo_lock:
            _memo[sig] = known
    return known


def _sniff(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            data = f.read(RESULTS_MAX_BYTES + 1)
    except OSError:
        return False
    if not any(marker in data for marker in (b'"run_id"', b'"task_results"', b'"$id"')):
        return False  # most JSON files: decided without parsing
    import orjson  # here, not at the top: paths imports this module on the editor-save path (validate FILE)

    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(value, dict):
        return False
    if {"run_id", "reports"} <= value.keys() or {"task_results", "aggregate"} <= value.keys():
        return True
    return str(value.get("$id", "")).startswith(SCHEMA_ID_PREFIX)


def _same(folder: str, top: str) -> bool:
    try:
        return os.path.samefile(folder, top)
    except OSError:
        return False


def _has_spec(folder: str) -> bool:
    try:
        return any(n.endswith(EVAL_SUFFIXES) for n in os.listdir(folder))
    except OSError:
        return False
