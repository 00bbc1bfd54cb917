"""`--shard I/N`: one CI job's share of the stale trials, so a matrix of N jobs runs each stale trial exactly once.

A trial belongs to shard `int(key hex[:16]) mod N + 1`: decided by its trial key alone, so every job of the
matrix agrees without talking to the others, two cells with the same key (one shared record) fall in one shard,
and a trial's grade and a trigger trial follow their key too. The key is a sha256: the shares are even.
In an adaptive spec a cell's trials all follow its first trial's key (_owners): a look reads the trials before it.

A shard runs its trials and grades and sends them to the remote store; it writes no report and checks no
threshold (its share is not the suite): the matrix's last job runs `skillmake report`, which pulls every record
from the store and builds every report without running anything. The front end passes the setting through
$SKILLMAKE_SHARD, which plain `doit` reads too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillmake.core.errors import UsageError

if TYPE_CHECKING:
    from skillmake.engine.plan import Item, SpecPlan
    from skillmake.engine.select import Chosen

SHARD_VAR = "SKILLMAKE_SHARD"
_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # 1 … count
    count: int

    def has(self, key: str) -> bool:
        """Whether the trial of `key` (`sha256:<hex>`) is this shard's."""
        return int(key[7:23], 16) % self.count == self.index - 1

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class ShardError(UsageError):
    """A `--shard` value that is not I/N with 1 ≤ I ≤ N (exit 3)."""


def parse(text: str, *, given: str = "--shard") -> Shard:
    """`2/4` → Shard(2, 4); ShardError for anything else, saying what is wrong and what is meant. `given` names
    what the user set: the option, or $SKILLMAKE_SHARD (a CI job that exports it never typed --shard)."""
    flag = given.startswith("-")
    shown, usage = (f"{given} {text!r}", f"{given} I/N") if flag else (f"{given}={text!r}", f"{given}=I/N")
    m = _FORM.fullmatch(text)
    if m is None:
        raise ShardError(f"{shown} is not I/N", hint=_hint(usage, given, flag))
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1:
        raise ShardError(f"{shown}: N (the number of jobs) must be 1 or more", hint=_hint(usage, given, flag))
    if not 1 <= index <= count:
        runs = (f"{given} 1/{count} … {given} {count}/{count}" if flag else
                f"{given}=1/{count} … {given}={count}/{count} (or unset {given})")
        raise ShardError(f"{shown}: I must be 1 to {count} (shards count from 1)",
                         hint=f"a matrix of {count} jobs runs {runs}")
    return Shard(index, count)


def _hint(usage: str, given: str, flag: bool) -> str:
    example = f"{given} 2/4" if flag else f"{given}=2/4 (or unset {given})"
    return f"{usage} takes this job's number I (1 to N) and the number of jobs N, e.g. {example}"


def current() -> Shard | None:
    """This run's shard ($SKILLMAKE_SHARD, which `--shard` sets), or None; ShardError for a bad value. A bad value
    here is the environment's: the front end checked --shard before setting it."""
    text = os.environ.get(SHARD_VAR, "").strip()
    return parse(text, given=SHARD_VAR) if text else None


def narrow(chosen: Chosen, plans: Sequence[SpecPlan], shard: Shard | None) -> Chosen:
    """`chosen` cut down to the shard's cells (every cell when `shard` is None)."""
    if shard is None:
        return chosen
    from skillmake.engine.select import Chosen

    names = {i.name for p in plans for owner in (_owners(p),) for i in p.items if chosen.has(i) and shard.has(owner(i))}
    names |= {f"trigger:{t.name}" for p in plans for t in p.triggers if chosen.has_trigger(t) and shard.has(t.tkey.key)}
    return Chosen(names=frozenset(names), resample=chosen.resample, stored_failures=chosen.stored_failures)


def _owners(plan: SpecPlan) -> Callable[[Item], str]:
    """The key that decides an item's shard: its own, or, in an adaptive spec, its cell's first trial's — a cell's
    sequence is one job's, since each look reads the trials before it (in another job, they would be missing)."""
    if plan.spec.adaptive is None:
        return lambda item: item.tkey.key
    first: dict[tuple[str, str], Item] = {}
    for item in plan.items:
        cell = (item.case.id, item.arm.name)
        if cell not in first or item.k < first[cell].k:
            first[cell] = item
    return lambda item: first[(item.case.id, item.arm.name)].tkey.key
