"""`--shard I/N` (skillmake/engine/shard.py): its values, and a partition of the trial keys."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace
from typing import Any

import pytest

from skillmake.engine import shard
from skillmake.engine.shard import Shard, ShardError


def keys(n: int) -> list[str]:
    return [f"sha256:{hashlib.sha256(str(i).encode()).hexdigest()}" for i in range(n)]


@pytest.mark.parametrize(("text", "index", "count"), [("1/4", 1, 4), ("4/4", 4, 4), (" 2 / 3 ", 2, 3), ("1/1", 1, 1)])
def test_parse_takes_i_of_n(text: str, index: int, count: int) -> None:
    assert shard.parse(text) == Shard(index, count)
    assert str(shard.parse(text)) == f"{index}/{count}"


@pytest.mark.parametrize(("text", "says"), [
    ("0/4", "I must be 1 to 4 (shards count from 1)"),
    ("5/4", "I must be 1 to 4"),
    ("1/0", "N (the number of jobs) must be 1 or more"),
    ("2", "is not I/N"),
    ("a/b", "is not I/N"),
    ("-1/4", "is not I/N"),
    ("1/4/2", "is not I/N"),
    ("", "is not I/N"),
])
def test_a_bad_value_says_what_is_wrong_and_what_is_meant(text: str, says: str) -> None:
    with pytest.raises(ShardError, match=r"--shard") as caught:
        shard.parse(text)
    assert says in caught.value.render() and "--shard" in caught.value.render()


def test_the_shards_of_n_split_every_key_exactly_once_and_evenly() -> None:
    every = keys(4000)
    for n in (1, 2, 4, 7):
        shares = [[k for k in every if Shard(i, n).has(k)] for i in range(1, n + 1)]
        assert sorted(k for share in shares for k in share) == sorted(every)  # disjoint and covering
        assert min(map(len, shares)) > 0.85 * len(every) / n  # even: the key is a sha256


def test_the_same_key_is_in_the_same_shard_in_every_process() -> None:
    key = keys(1)[0]
    assert Shard(int(key[7:23], 16) % 4 + 1, 4).has(key)  # the rule the docs state, nothing that varies per run


def test_current_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(shard.SHARD_VAR, raising=False)
    assert shard.current() is None
    monkeypatch.setenv(shard.SHARD_VAR, "3/8")
    assert shard.current() == Shard(3, 8)
    monkeypatch.setenv(shard.SHARD_VAR, "9/8")
    with pytest.raises(ShardError):
        shard.current()


def _plan(n_items: int, n_triggers: int) -> Any:
    every = keys(n_items + n_triggers)
    items = [SimpleNamespace(name=f"s/c{i}/with_skill/0", tkey=SimpleNamespace(key=every[i])) for i in range(n_items)]
    triggers = [SimpleNamespace(name=f"s/q{i}/0", tkey=SimpleNamespace(key=every[n_items + i]))
                for i in range(n_triggers)]
    return SimpleNamespace(items=items, triggers=triggers, spec=SimpleNamespace(adaptive=None))


def test_narrow_gives_each_shard_its_cells_and_trigger_trials_and_keeps_the_selection() -> None:
    from skillmake.engine.select import Chosen

    plan = _plan(40, 12)
    everything = Chosen(names=None, resample=False)
    parts = [shard.narrow(everything, [plan], Shard(i, 3)).names for i in (1, 2, 3)]
    names = [n for part in parts for n in part or ()]
    assert sorted(names) == sorted([i.name for i in plan.items] + [f"trigger:{t.name}" for t in plan.triggers])
    assert len(names) == len(set(names))
    assert shard.narrow(everything, [plan], None) is everything
    picked = Chosen(names=frozenset({plan.items[0].name, plan.items[1].name}), resample=True)
    narrowed = shard.narrow(picked, [plan], Shard(1, 1))
    assert narrowed.names == picked.names and narrowed.resample  # a shard of 1 is the selection as it was


@pytest.mark.parametrize(("value", "says"), [("9/4", "SKILLMAKE_SHARD='9/4': I must be 1 to 4"),
                                             ("two", "SKILLMAKE_SHARD='two' is not I/N")])
def test_a_bad_environment_value_names_the_variable(monkeypatch: pytest.MonkeyPatch, value: str, says: str) -> None:
    """A CI job that exports SKILLMAKE_SHARD typed no --shard: the error and its fix name the variable."""
    monkeypatch.setenv(shard.SHARD_VAR, value)
    with pytest.raises(ShardError) as caught:
        shard.current()
    text = caught.value.render()
    assert says in text and "--shard" not in text, text
    assert "SKILLMAKE_SHARD=" in (caught.value.hint or ""), text
