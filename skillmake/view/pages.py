"""Each page of the viewer, gathered from the store (data.py) and rendered: the one place the served viewer and the
static export both get their pages from, so the two never differ but for how feedback is saved."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from skillmake.results.report import report_digest
from skillmake.view import casepage, comparepage, data, indexpage, specpage
from skillmake.view.compare import runs as compare_runs
from skillmake.view.html import Rendered


class Pages:
    """Renders pages of one store. `served`: pages for `skillmake view` (with its `token`); else for the export."""

    def __init__(self, source: data.Source, *, served: bool, token: str | None = None, root: str = "") -> None:
        self.source = source
        self.served = served
        self.token = token
        self.root = root

    def names(self) -> list[str]:
        return data.spec_names(self.source)

    def report(self, name: str) -> dict[str, Any] | None:
        return data.report_of(self.source, name) if name in self.names() else None

    def index(self, reports: Mapping[str, dict[str, Any]] | None = None) -> Rendered:
        """The index page; `reports`: the specs' reports already read (the export reads each once)."""
        rows = []
        for name in self.names():
            report = reports[name] if reports is not None and name in reports else data.report_of(self.source, name)
            if report is None:
                continue
            rows.append(indexpage.Row(name=name, report=report, previous=data.previous(self.source, name, report),
                                      feedback=data.feedback_of(self.source, name)))
        return indexpage.render(rows, served=self.served, token=self.token, root=self.root)

    def _tags(self, name: str) -> dict[str, tuple[str, ...]]:
        spec = self.source.specs.get(name)
        return {c.id: c.tags for c in spec.cases} if spec is not None else {}

    def spec_data(self, name: str, report: Mapping[str, Any]) -> specpage.SpecData:
        spec = report["spec"]
        trials = int(spec["trials"])
        outcomes = {(case, arm): data.outcomes(self.source, name, case, arm, trials)
                    for case in spec["cases"] for arm in spec["arms"]}
        prompts = {case: str(data.case_meta(self.source, name, case).get("prompt") or "") for case in spec["cases"]}
        return specpage.SpecData(name=name, report=report, previous=data.previous(self.source, name, report),
                                 history=data.history(self.source, name), feedback=data.feedback_of(self.source, name),
                                 outcomes=outcomes, prompts=prompts, tags=self._tags(name),
                                 run_ids=data.run_ids(self.source, report))

    def spec(self, name: str, report: Mapping[str, Any] | None = None) -> Rendered | None:
        report = report if report is not None else self.report(name)
        if report is None:
            return None
        return specpage.render(self.spec_data(name, report), served=self.served, token=self.token)

    def case(self, name: str, case: str, report: Mapping[str, Any] | None = None) -> Rendered | None:
        report = report if report is not None else self.report(name)
        if report is None or case not in report["spec"]["cases"]:
            return None
        spec = report["spec"]
        cases = list(spec["cases"])
        i = cases.index(case)
        trials = {(arm, k): data.trial_view(self.source, name, case, arm, k)
                  for arm in spec["arms"] for k in range(int(spec["trials"]))}
        meta = data.case_meta(self.source, name, case)
        d = casepage.CaseData(name=name, case=case, report=report, eval_id=data.eval_id(self.source, report, case),
                              prompt=str(meta.get("prompt") or ""), tags=self._tags(name).get(case, ()),
                              trials=trials, feedback=data.feedback_of(self.source, name),
                              prev_case=cases[i - 1] if i > 0 else None,
                              next_case=cases[i + 1] if i + 1 < len(cases) else None)
        return casepage.render(self.source, d, served=self.served, token=self.token)

    def compare(self, name: str, a: str | None = None, b: str | None = None,
                report: Mapping[str, Any] | None = None) -> Rendered | None:
        """Runs `a` and `b` (digest prefixes from the history) compared, older first; by default the latest
        report against the run before it."""
        report = report if report is not None else self.report(name)
        if report is None:
            return None
        history = data.history(self.source, name)
        kept = [r for r in history if r.archived]
        note = ""
        if a or b:
            found = [next((r for r in kept if r.digest[7:].startswith(x)), None) if x else None for x in (a, b)]
            if None in found or found[0] == found[1]:
                note = ("pick two different runs kept in the history (the viewer keeps a run's report from the "
                        "first time it shows or exports it)")
                chosen = None
            else:
                older, newer = sorted(found, key=lambda r: kept.index(r), reverse=True)  # type: ignore[arg-type]
                chosen = (data.archived(self.source, name, older.digest),  # type: ignore[union-attr]
                          data.archived(self.source, name, newer.digest))  # type: ignore[union-attr]
        else:
            chosen = (data.previous(self.source, name, report), dict(report))
        comparison = None
        if (chosen is not None and chosen[0] is not None and chosen[1] is not None
                and report_digest(chosen[0]) != report_digest(chosen[1])):
            comparison = compare_runs(self.source, name, chosen[0], chosen[1])
        return comparepage.render(name, comparison, served=self.served, token=self.token, history=history,
                                  note=note)
