"""Views of many cells are checked out several at a time (checkout.THREADS): every cell still gets its own
folder from its own records, and a link among the shared folders is cut once, never written through."""

from __future__ import annotations

import os
from pathlib import Path

from skillmake.results import checkout

from .project import AGENT, Project

SPEC = """\
skill: skills/s
agent: {kind: command, command: [python3, agent.py]}
trials: 6
baseline: true
cases:
  - {id: one, prompt: say one, checks: [{type: contains, needle: one}]}
  - {id: two, prompt: say two, checks: [{type: contains, needle: two}]}
"""


def test_many_cells_each_get_their_own_view_and_no_link_is_followed(tmp_path: Path) -> None:
    assert 2 * checkout.THREADS <= 2 * 2 * 6  # enough cells for the threads
    p = Project.empty(tmp_path / "many", {"agent.py": AGENT, "skills/s/SKILL.md": "body\n", "m.eval.yaml": SPEC})
    outside = tmp_path / "outside"
    outside.mkdir()
    (p.root / ".skillmake" / "runs" / "m").mkdir(parents=True)
    os.symlink(outside, p.root / ".skillmake" / "runs" / "m" / "one")  # shared by 12 cells checked out at once
    run = p.run("-j", "2")  # p.run checks every cell's folder against report.json
    assert run.code == 0, run.err
    assert list(outside.iterdir()) == []
    assert not (p.root / ".skillmake" / "runs" / "m" / "one").is_symlink()
    outputs = {(case, arm, k): (p.root / ".skillmake" / "runs" / "m" / case / arm / f"trial-{k}" / "output.txt")
               .read_text() for case in ("one", "two") for arm in ("with_skill", "without_skill") for k in range(6)}
    assert all(text.startswith(f"say {case}") and f"[{arm} {k}]" in text for (case, arm, k), text in outputs.items())
