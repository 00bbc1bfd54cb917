"""Spreading the suite over xdist's workers so that neither idles at the end.

`--dist loadfile` keeps each test file on one worker (a file's module-scoped fixtures, such as one populated project,
are built once), and hands files out in the order the workers collected them. xdist's own order is by number of tests
(`--loadscope-reorder`), which sent the functional files (few tests of seconds each) last: one worker ran a long file
alone at the end. With `--no-loadscope-reorder` (pyproject.toml) the order is this module's: heaviest file first
(longest-processing-time first), so the last files handed out are short and both workers finish together.

A file's weight is its seconds in the last measured full run (WEIGHTS), else its number of tests times its
folder's usual seconds per test. The table only orders: a stale entry costs a little balance, never a test. (Groups
by `xdist_group` are not used: `--dist loadgroup` silently stops grouping on pytest 9.2, pytest-xdist#1386.)
"""

from __future__ import annotations

from collections import defaultdict

import pytest

# Seconds per file (setup + call + teardown of every test, summed from `--durations=0` of the whole suite with 2
# workers on the 2-core machine, lightly loaded), files of 5 s and more; measured 2026-11-26 01:20 UTC.
WEIGHTS: dict[str, float] = {
    "tests/functional/test_cluster.py": 64,
    "tests/functional/test_interrupt.py": 57,
    "tests/functional/test_remote.py": 51,
    "tests/functional/test_incremental.py": 48,
    "tests/functional/test_hermetic.py": 40,
    "tests/functional/test_trust.py": 35,
    "tests/functional/test_output.py": 34,
    "tests/functional/test_selection.py": 34,
    "tests/e2e/test_triggers_claude_cli.py": 33,
    "tests/functional/test_spending_cap.py": 31,
    "tests/functional/test_clauditor_cli.py": 29,
    "tests/functional/test_settled.py": 27,
    "tests/functional/test_incremental_seeds.py": 26,
    "tests/differential/test_clauditor_grade_e2e.py": 26,
    "tests/functional/test_processes.py": 25,
    "tests/functional/test_adaptive.py": 25,
    "tests/functional/test_batch_judging.py": 25,
    "tests/differential/test_caliper_end_to_end.py": 24,
    "tests/functional/test_triggers.py": 24,
    "tests/functional/test_newcomer_wave3.py": 23,
    "tests/functional/test_doit_entry.py": 22,
    "tests/functional/test_watch.py": 21,
    "tests/functional/test_run_fragment_keys.py": 21,
    "tests/functional/test_remote_lease.py": 20,
    "tests/functional/test_cli_conventions.py": 17,
    "tests/functional/test_shards.py": 16,
    "tests/functional/test_newcomer.py": 16,
    "tests/functional/test_compare.py": 15,
    "tests/functional/test_intervals_everywhere.py": 13,
    "tests/functional/test_resample.py": 13,
    "tests/unit/run/test_ratelimit_fakeapi.py": 13,
    "tests/functional/test_state_links.py": 13,
    "tests/e2e/test_activation.py": 11,
    "tests/unit/run/test_agents_api.py": 11,
    "tests/e2e/test_claude_code.py": 10,
    "tests/functional/test_bisect.py": 10,
    "tests/functional/test_report_settings.py": 10,
    "tests/unit/spec/test_draft7.py": 10,
    "tests/functional/test_discovery.py": 9,
    "tests/functional/test_seed_eva.py": 9,
    "tests/e2e/test_codex.py": 8,
    "tests/browser/test_viewer_browser.py": 8,
    "tests/functional/test_seed_caliper.py": 8,
    "tests/fakeapi/test_server.py": 8,
    "tests/functional/test_integrity.py": 8,
    "tests/functional/test_rejudge.py": 7,
    "tests/functional/test_seed_skill_creator.py": 7,
    "tests/functional/test_doit_views.py": 7,
    "tests/functional/test_skill_creator_results.py": 7,
    "tests/functional/test_isolation.py": 7,
    "tests/unit/run/test_process.py": 7,
    "tests/functional/test_sdk_warm.py": 7,
    "tests/functional/test_validate_corpus.py": 7,
    "tests/functional/test_promote.py": 7,
    "tests/unit/spec/test_wellformed.py": 6,
    "tests/e2e/test_pipeline.py": 6,
    "tests/e2e/test_requests.py": 6,
    "tests/functional/test_seed_clauditor.py": 6,
    "tests/functional/test_eva_history.py": 6,
    "tests/e2e/test_optimize_claude_cli.py": 6,
    "tests/functional/test_max_connections.py": 6,
    "tests/functional/test_import_zero_calls.py": 5,
    "tests/test_collection.py": 5,  # three tests, two of them collecting in a child: not a unit file's 0.1 s
}

PER_TEST = {"tests/e2e/": 2.0, "tests/differential/": 0.5, "tests/browser/": 1.0, "tests/functional/": 1.0}
UNLISTED = 10.0
UNIT_PER_TEST = 0.03
def weight_of(path: str, tests: int) -> float:
    if path in WEIGHTS:
        return WEIGHTS[path]
    per_test = next((s for folder, s in PER_TEST.items() if path.startswith(folder)), UNIT_PER_TEST)
    return min(tests * per_test, UNLISTED)  # a file missing from the table took under 5 s then, or is new


def order(items: list[pytest.Item]) -> list[pytest.Item]:
    """`items` heaviest file first, each file's tests together and in their own order."""
    by_file: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        by_file[item.nodeid.split("::", 1)[0]].append(item)
    files = sorted(by_file, key=lambda path: (-weight_of(path, len(by_file[path])), path))
    return [item for path in files for item in by_file[path]]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, after selection (-k, -m): the files in the order above. Every worker collects and orders
    the same way (xdist checks); a plain `pytest -n 0` keeps the collection order."""
    if hasattr(config, "workerinput"):
        items[:] = order(items)
