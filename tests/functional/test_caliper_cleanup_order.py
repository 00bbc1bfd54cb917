"""caliper runs a task's assert before its cleanup, and so does skillmake: the reference document's own pattern
(setup writes a file, assert reads it, cleanup removes it; here, as there, outside the workspace) passes 3/3, as it
does under caliper 0.1.0 (runner.py: the judge runs inside the attempt's try, the cleanup in its finally)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from .project import Project

SKILL = "---\nname: s\ndescription: writes files\n---\nWrite what you are asked to.\n"
CONFIG = 'agent = {kind = "command", command = ["python3", "agent.py"]}\n'
AGENT = "print('done')\n"
SPEC = """\
skill: {{path: ./SKILL.md}}
tasks:
  - name: reference pattern
    setup: echo hello world > {out}
    cleanup: rm -f {out}
    prompt: Write hello world to {out}
    expect: ""
    assert: |
      from pathlib import Path

      path = Path("{out}")
      assert path.exists(), "Output file was not created"
      assert path.read_text().strip() == "{want}"
"""


def test_the_reference_pattern_passes_3_of_3_and_cleanup_still_runs(tmp_path: Path) -> None:
    out = Path("/tmp") / f"skillmake-caliper-{uuid.uuid4().hex}.txt"
    p = Project.empty(tmp_path / "p", {"skillmake.toml": CONFIG, "agent.py": AGENT, "skill/SKILL.md": SKILL,
                                       "skill/ref.eval.yaml": SPEC.format(out=out, want="hello world")})
    done = p.run()
    assert done.code == 0, done.out + done.err
    report = json.loads((p.root / ".skillmake" / "reports" / "ref" / "report.json").read_text())
    assert [(r["case"], r["passed"]) for r in report["rows"]] == [("task-001", 3)]
    assert not out.exists()  # the cleanup ran after the assert

    # The assert is part of what the trial does now: editing it runs the trials again, and they fail as written.
    p.replace("skill/ref.eval.yaml", 'strip() == "hello world"', 'strip() == "goodbye"')
    again = p.run()
    assert again.code == 1 and again.trials == 3, again.out + again.err
    assert "case field python checks (run before cleanup) changed" in again.out
    report = json.loads((p.root / ".skillmake" / "reports" / "ref" / "report.json").read_text())
    assert [(r["case"], r["passed"]) for r in report["rows"]] == [("task-001", 0)]
    assert not out.exists()
