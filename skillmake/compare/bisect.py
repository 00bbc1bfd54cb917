"""Bisect a skill's git history for the first commit at which a case got worse: its pass rate fell below the
threshold (or a chosen check's did). Each version's skill tree is exported from git (the work tree is never
checked out); its trials are keyed by content like every other trial, so what the store already has is reused."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillmake.compare import git, versions
from skillmake.core.errors import SkillmakeError, UsageError
from skillmake.core.stats import VERDICT_OUTCOMES, adaptive_stop
from skillmake.run import grade as grading
from skillmake.run import trial as trials
from skillmake.run.keys import KeyMaker
from skillmake.run.project import Project
from skillmake.spec.model import Arm, Case, Spec

_EPS = 1e-9


class BisectError(SkillmakeError):
    """The history cannot be bisected as asked (a revision git does not know, a good version that fails): exit 3."""

    exit_code = 3


@dataclass(slots=True, kw_only=True)
class Probe:
    """One version of the skill evaluated on the case: its trials' verdicts and whether it counts as bad."""

    commit: str
    subject: str
    passed: int = 0
    n: int = 0
    bad: bool = False
    ran: int = 0  # trials run now (agent calls); the rest came from the store
    decision: str | None = None  # adaptive trials: above | below | None
    failures: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return self.passed / self.n if self.n else None


@dataclass(slots=True, kw_only=True)
class Bisection:
    rel: str  # the skill's path in the repository
    history: list[tuple[str, str]]  # (commit, subject), oldest first: good .. bad
    threshold: float
    probes: dict[str, Probe] = field(default_factory=dict)  # by commit, in the order evaluated
    first_bad: str | None = None
    last_good: str | None = None


def threshold_of(spec: Spec) -> float:
    """What a version's pass rate must reach to count as good: the adaptive `decide`, else min_pass_rate, else
    1.0 (with no threshold declared every trial must pass, the default gate)."""
    if spec.adaptive is not None:
        return spec.adaptive.decide
    return spec.thresholds.min_pass_rate if spec.thresholds.min_pass_rate is not None else 1.0


def _top_and_rel(spec: Spec) -> tuple[str, str]:
    real = os.path.realpath(spec.skill.path)
    try:
        top = git.toplevel(real if spec.skill.kind == "folder" else os.path.dirname(real))
    except git.GitError:
        raise BisectError(f"the skill {spec.skill.name} ({spec.skill.path}) is not inside a git repository",
                          hint="bisect reads the skill's versions from git history; commit the skill first") \
            from None
    return top, os.path.relpath(real, top).replace(os.sep, "/")


def _rev(top: str, given: str, which: str) -> str:
    try:
        return git.commit_of(top, given)
    except git.GitError as exc:
        raise BisectError(f"--{which} {given}: {exc.message}",
                          hint="name a commit, branch or tag; `git log --oneline -- <skill folder>` lists the "
                               "skill's commits") from None


def _lines(top: str, args: list[str]) -> list[str]:
    return [line for line in git._git(args, cwd=top).decode().splitlines() if line.strip()]


def history(spec: Spec, *, good: str | None, bad: str | None) -> tuple[str, str, list[tuple[str, str]]]:
    """(work-tree root, the skill's path in it, [(commit, subject)] oldest first): the good revision, then every
    commit after it up to the bad one that changed the skill's files. Default bad: HEAD; default good: the first
    commit that has the skill."""
    if spec.skill.kind not in ("folder", "command"):
        raise BisectError(f"spec {spec.name} has no skill file or folder to bisect ({spec.skill.kind})")
    top, rel = _top_and_rel(spec)
    bad_commit = _rev(top, bad or "HEAD", "bad")
    if good is None:
        first = _lines(top, ["rev-list", "--reverse", bad_commit, "--", rel])
        if not first:
            raise BisectError(f"no commit up to {bad or 'HEAD'} has {rel}", hint="commit the skill first")
        good_commit = first[0]
    else:
        good_commit = _rev(top, good, "good")
    try:
        git._git(["merge-base", "--is-ancestor", good_commit, bad_commit], cwd=top)
    except git.GitError:
        raise BisectError(f"--good {good or good_commit[:12]} is not an ancestor of --bad {bad or 'HEAD'}",
                          hint="give a good revision older than the bad one, on the same history") from None
    between = _lines(top, ["rev-list", "--reverse", f"{good_commit}..{bad_commit}", "--", rel])
    if not between:
        raise BisectError(f"no commit changed {rel} after {good or good_commit[:12]} up to {bad or 'HEAD'}: there is "
                          "nothing to bisect", hint="pass an older --good, or a newer --bad")
    commits = [good_commit, *between]
    subjects = {line.split(" ", 1)[0]: [*line.split(" ", 1), ""][1]
                for line in _lines(top, ["log", "--format=%H %s", "--no-walk", *commits])}
    return top, rel, [(c, subjects.get(c, "")) for c in commits]


def diff_stat(top: str, commit: str, rel: str) -> str:
    """`git show --stat` of `commit`, limited to the skill's files."""
    return git._git(["show", "--stat", "--format=", commit, "--", rel], cwd=top).decode().rstrip()


def _check_passed(grade: dict[str, Any], check: str) -> bool | None:
    for item in grade.get("expectations", ()):
        if check in (str(item.get("id") or ""), str(item.get("text") or "")):
            return bool(item["passed"])
    return None


def evaluate(project: Project, spec: Spec, case: Case, arm: Arm, commit: str, subject: str, *, scratch: Path,
             check: str | None, threshold: float, say: Callable[[str], None]) -> Probe:
    """Run (or read from the store) the case's trials with the skill as it is at `commit`, grade them, and say
    whether the version is bad: with adaptive trials, as soon as the confidence sequence decides."""
    version = versions.from_revision(spec, commit, scratch=scratch)
    assert version.path is not None
    copy = dataclasses.replace(spec, skill=dataclasses.replace(spec.skill, path=version.path))
    keys = KeyMaker(project.root)  # its own: KeyMaker memoises the skill's part by the spec's path
    probe = Probe(commit=commit, subject=subject)
    verdicts: list[bool] = []
    adaptive = spec.adaptive
    k = 0
    while True:
        target = spec.trials if adaptive is None else _next_look(adaptive, verdicts)
        while k < target:
            tkey = keys.trial_key(copy, case, arm, k)
            run = trials.execute(project, copy, case, arm, k, tkey)
            probe.ran += run.ran
            graded = grading.execute(project, copy, case, arm, k, run.record).record
            if graded["outcome"] not in VERDICT_OUTCOMES:
                raise BisectError(f"at {commit[:12]}, trial {k} of {case.id} ended in {graded['outcome']}: "
                                  f"{str(graded.get('error') or run.record.get('error') or '')[:200]}",
                                  hint="fix what made it fail to run, then bisect again (what ran is kept)")
            ok = graded["outcome"] == "pass" if check is None else _check_passed(graded, check)
            if ok is None:
                assert check is not None
                ids = sorted({str(e.get("id") or e.get("text")) for e in graded.get("expectations", ())})
                raise UsageError(f"case {case.id} has no check {check!r}", hint=f"its checks: {', '.join(ids)}")
            verdicts.append(ok)
            if not ok:
                for item in graded.get("expectations", ()):
                    if not item["passed"] and (check is None or _check_passed({"expectations": [item]}, check)
                                               is not None):
                        evidence = " ".join(str(item["evidence"]).split())[:200]
                        probe.failures.append(f"trial {k}: {item['text']} — {evidence}")
            k += 1
        if adaptive is None:
            break
        stop = adaptive_stop(verdicts, least=adaptive.least, most=adaptive.most, batch=adaptive.batch,
                             threshold=adaptive.decide, alpha=adaptive.alpha)
        if stop.used is not None:
            probe.decision = stop.decision
            break
    probe.n, probe.passed = len(verdicts), sum(verdicts)
    if probe.decision is not None:
        probe.bad = probe.decision == "below"
    else:
        probe.bad = (probe.rate or 0.0) + _EPS < threshold
    return probe


def _next_look(adaptive: Any, verdicts: list[bool]) -> int:
    stop = adaptive_stop(verdicts, least=adaptive.least, most=adaptive.most, batch=adaptive.batch,
                         threshold=adaptive.decide, alpha=adaptive.alpha)
    return stop.needed if stop.used is None else len(verdicts)


def bisect(project: Project, spec: Spec, case: Case, arm: Arm, *, good: str | None, bad: str | None,
           check: str | None, scratch: Path, say: Callable[[str], None]) -> Bisection:
    """Binary search over the skill's commits between good and bad (the versions in between are assumed to turn
    bad once and stay bad): the bad end is evaluated first (it must be bad), the good end only when the answer
    would be the commit right after it."""
    _, rel, commits = history(spec, good=good, bad=bad)
    result = Bisection(rel=rel, history=commits, threshold=threshold_of(spec))
    subject = dict(commits)

    def probe(i: int) -> Probe:
        commit = commits[i][0]
        if commit not in result.probes:
            found = evaluate(project, spec, case, arm, commit, subject[commit], scratch=scratch, check=check,
                             threshold=result.threshold, say=say)
            result.probes[commit] = found
            say(_probe_line(found, result.threshold))
        return result.probes[commit]

    if not probe(len(commits) - 1).bad:
        raise BisectError(f"the case is not bad at {bad or 'HEAD'} ({commits[-1][0][:12]}): "
                          f"{_rate_text(result.probes[commits[-1][0]])} reaches {result.threshold:.2f}",
                          hint="pass --bad REV with a revision where it fails")
    lo, hi = 0, len(commits) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if probe(mid).bad:
            hi = mid
        else:
            lo = mid
    if lo == 0 and probe(0).bad:
        if good is None:  # the skill's first commit: there is no older revision to offer
            raise BisectError(f"the case fails at every version of {rel} in git, down to its first commit "
                              f"({commits[0][0][:12]}): {_rate_text(result.probes[commits[0][0]])}",
                              hint="no commit of the skill made it fail: check the case's checks and prompt "
                                   "(`skillmake -k CASE` lists what failed in each trial)")
        raise BisectError(f"the case is already bad at the good end, {good} "
                          f"({commits[0][0][:12]}): {_rate_text(result.probes[commits[0][0]])}",
                          hint="pass --good REV with an older revision where it passes")
    result.first_bad, result.last_good = commits[hi][0], commits[lo][0]
    return result


def _rate_text(p: Probe) -> str:
    return f"pass rate {p.rate:.2f} ({p.passed}/{p.n})" if p.rate is not None else "no trial"


def _probe_line(p: Probe, threshold: float) -> str:
    verdict = "bad" if p.bad else "good"
    how = f"; decided {p.decision} {threshold:.2f}" if p.decision else ""
    return (f"{p.commit[:12]}  {_rate_text(p)}  {verdict}{how}  ({p.ran} trial(s) run, {p.n - p.ran} from the "
            f"store)  {p.subject}")


def render(result: Bisection, *, top: str | None = None) -> list[str]:
    """The answer: the first bad commit, its diff stat (the skill's files), and the evidence on both sides."""
    assert result.first_bad is not None
    bad = result.probes[result.first_bad]
    lines = [f"first bad commit: {bad.commit} {bad.subject}"]
    if top is not None:
        lines += ["  " + line for line in diff_stat(top, bad.commit, result.rel).splitlines()]
    lines.append(f"evidence: at {bad.commit[:12]} {_rate_text(bad)} < {result.threshold:.2f}"
                 + (f" (decided below after {bad.n} trials)" if bad.decision else ""))
    good = result.probes.get(result.last_good or "")
    if good is not None:
        lines.append(f"  at the version before it, {good.commit[:12]}, {_rate_text(good)} ≥ {result.threshold:.2f}")
    else:
        lines.append(f"  at the version before it, {str(result.last_good)[:12]} (the good end, taken as good)")
    lines += [f"  ✗ {f}" for f in bad.failures[:8]]
    ran = sum(p.ran for p in result.probes.values())
    lines.append(f"versions evaluated: {len(result.probes)} of {len(result.history)}; trials run {ran}, from the "
                 f"store {sum(p.n for p in result.probes.values()) - ran}")
    return lines
