"""A built wheel carries the schemas: installed anywhere, skillmake finds them without this checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path


def test_wheel_ships_the_schemas_and_validates_from_them(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(repo)], check=True, capture_output=True, timeout=300)
    [wheel] = out.glob("skillmake-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {Path(n).name for n in names if n.startswith("skillmake/schemas/")}
    assert {p.name for p in (repo / "schemas").glob("*.schema.json")} <= shipped
    assert "skillmake/engine/tasks.py" in names and "skillmake/run/agents/command.py" in names

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    (tmp_path / "proj" / "skills" / "s").mkdir(parents=True)
    (tmp_path / "proj" / "skills" / "s" / "SKILL.md").write_text("body\n")
    (tmp_path / "proj" / "p.eval.yaml").write_text(
        "skill: skills/s\nagent: {kind: command, command: echo}\ncases: [{id: a, prompt: hi, checks: "
        "[{type: regexp, pattern: x}]}]\n")
    code = ("import sys, skillmake.spec.schema as s; "
            "assert str(s.schema_dir()).startswith(sys.argv[1]), s.schema_dir(); "
            "from skillmake.commands.cli import main; sys.exit(main(['validate', 'p.eval.yaml']))")
    run = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(site)!r}); {code}",
                          str(site)], cwd=tmp_path / "proj", capture_output=True, text=True, timeout=60)
    assert run.returncode == 2, run.stderr
    assert "p.eval.yaml:3:45 /cases/0/checks/0/type: 'regexp' is not a check type" in run.stderr
