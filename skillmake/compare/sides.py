"""The two sides of a comparison — A and B — from the command line's forms: two arms of a spec (by default
with_skill against the baseline), or one arm run with the skill as it is now against another version of it."""

from __future__ import annotations

import dataclasses
import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillmake.compare import versions
from skillmake.compare.versions import Version, VersionError
from skillmake.core.errors import UsageError
from skillmake.run.keys import KeyMaker, Part, TrialKey, part
from skillmake.run.project import Project
from skillmake.spec.model import WITH_SKILL, WITHOUT_SKILL, Arm, Case, Spec


@dataclass(frozen=True, slots=True, kw_only=True)
class Side:
    """One side: the spec its trials run under (a copy holding another version of the skill, for a version), the
    arm, and the key maker that names its trials."""

    label: str
    title: str
    spec: Spec
    arm: Arm
    keys: KeyMaker
    version: Version | None  # the skill it runs with; None for an arm without the skill

    def trial_key(self, case: Case, k: int) -> TrialKey:
        return self.keys.trial_key(self.spec, case, self.arm, k)

    @property
    def runnable(self) -> bool:
        """False when the version's files could not be recovered: its stored trials serve, none can run."""
        return self.version is None or self.version.path is not None

    def to_json(self) -> dict[str, Any]:
        skill = None
        if self.version is not None:
            skill = {"digest": self.version.digest, "source": self.version.source, "path": None, "revision": None,
                     "commit": None, "snapshot": None, **self.version.details,
                     "recovered": self.version.path is not None}
        return {"label": self.label, "title": self.title, "arm": self.arm.name, "skill": skill}


class _PinnedSkill(KeyMaker):
    """Trial keys of a skill version known by its manifest alone (its files are gone): the same keys its trials
    were stored under, so they can still be read."""

    def __init__(self, root: str, recorded: dict[str, Any]) -> None:
        super().__init__(root)
        self._pinned = part(recorded)

    def skill_part(self, spec: Spec) -> Part:
        return self._pinned


def resolve(project: Project, spec: Spec, arms: list[str], *, against: str | None, previous: bool,
            scratch: Path) -> tuple[Side, Side]:
    """(A, B) for `skillmake compare SPEC [ARM…] [--against REV|DIR | --previous]`."""
    if against is not None or previous:
        if len(arms) > 1:
            raise UsageError(f"with {'--previous' if previous else '--against'}, name at most one arm (the one both "
                             f"versions run under), not {len(arms)}", hint=_usage(spec))
        arm = _arm(spec, arms[0] if arms else WITH_SKILL)
        if not arm.skill:
            raise UsageError(f"arm {arm.name} runs without the skill: both versions would give the same outputs",
                             hint="name an arm that uses the skill (with_skill, or a variant)")
        current = _side(project, spec, arm, versions.current(spec), label="current")
        if previous:
            other = versions.previous(spec, reports=project.reports_dir, store=project.store, root=project.root,
                                      scratch=scratch)
        elif against is not None and os.path.exists(against):
            other = versions.from_folder(spec, against)
        else:
            other = versions.from_revision(spec, str(against), scratch=scratch)
        assert current.version is not None
        if other.digest == current.version.digest:
            raise VersionError(f"{other.title} is the same as the skill now (digest {other.digest[7:19]}…): there is "
                               "nothing to compare", hint="pass another revision or folder")
        return current, _side(project, spec, arm, other, label=other.label)
    if not arms:
        names = [a.name for a in spec.arms]
        if WITHOUT_SKILL not in names:
            raise UsageError(f"spec {spec.name} has no {WITHOUT_SKILL} arm to compare {WITH_SKILL} with "
                             "(it sets no `baseline: true`)", hint=_usage(spec))
        arms = [WITH_SKILL, WITHOUT_SKILL]
    if len(arms) != 2:
        raise UsageError(f"name two arms to compare, not {len(arms)}", hint=_usage(spec))
    if arms[0] == arms[1]:
        raise UsageError(f"both sides are arm {arms[0]}", hint=_usage(spec))
    a, b = (_arm(spec, name) for name in arms)
    return (_side(project, spec, a, versions.current(spec) if a.skill else None, label=a.name),
            _side(project, spec, b, versions.current(spec) if b.skill else None, label=b.name))


def _side(project: Project, spec: Spec, arm: Arm, version: Version | None, *, label: str) -> Side:
    if version is None or version.source == "current":
        title = f"arm {arm.name}" if label == arm.name else f"{version.title if version else ''} (arm {arm.name})"
        return Side(label=label, title=title, spec=spec, arm=arm, keys=project.keys, version=version)
    if version.path is not None:
        # A key maker of its own: KeyMaker memoises parts by the spec's path, which the copy shares.
        copy = dataclasses.replace(spec, skill=dataclasses.replace(spec.skill, path=version.path))
        keys = KeyMaker(project.root)
    else:
        copy, keys = spec, _PinnedSkill(project.root, version.manifest)
    shown = version.title if arm.name == WITH_SKILL else f"{version.title} (arm {arm.name})"
    return Side(label=label, title=shown, spec=copy, arm=arm, keys=keys, version=version)


def _arm(spec: Spec, name: str) -> Arm:
    for arm in spec.arms:
        if arm.name == name:
            return arm
    names = [a.name for a in spec.arms]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    raise UsageError(f"spec {spec.name} has no arm {name!r}" + (f"; did you mean {close[0]!r}?" if close else ""),
                     hint=f"its arms: {', '.join(names)}")


def _usage(spec: Spec) -> str:
    arms = ", ".join(a.name for a in spec.arms)
    return (f"usage: skillmake compare {spec.name} [ARM_A ARM_B] | [ARM] --against REV|DIR | [ARM] --previous "
            f"(its arms: {arms})")
