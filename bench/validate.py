"""Editor-save benchmark: `skillmake validate FILE` next to check-jsonschema on the same spec, in one table.

Generates two realistic specs (30 cases, several checks each, staged input files, a judge, variants; the second
adds an inline JSON Schema check per case) and times, in one run on this machine, N interleaved runs each of:
  - `python -m skillmake validate --quiet FILE`         (schema + every rule the schema cannot express)
  - the same with an older checkout (`--before DIR`, e.g. `git worktree add /tmp/before <commit>`)
  - the installed `skillmake validate --quiet FILE`      (when a `skillmake` script is on PATH)
  - `check-jsonschema --schemafile schemas/spec.schema.json FILE`   (schema only)
  - `python -c pass`                                     (the interpreter's own start-up, for scale)
Each row: median and min wall time, median CPU time (user + sys: what a quiet machine's wall time would be),
both as a ratio to check-jsonschema's, and peak RSS. Runs are interleaved (A B C D, A B C D, …) so a busy
moment slows every command alike. `--load N` runs N busy loops meanwhile (the loaded measurement). Goal:
≤ 0.5× check-jsonschema.

    python bench/validate.py [--cases 30] [--runs 15] [--before DIR] [--load 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table

REPO = Path(__file__).resolve().parent.parent

HEAD = """\
# yaml-language-server: $schema={schema}
description: A generated spec the size of a real one.
skill: skills/report
agent: {{kind: claude-code, model: claude-sonnet-4-5, max_turns: 8, allowed_tools: [Read, Write, Bash]}}
judge: {{provider: anthropic, model: claude-haiku-4-5, pass_threshold: 4}}
trials: 3
baseline: true
variants:
  - name: codex
    agent: {{kind: codex, model: gpt-5-codex}}
thresholds: {{min_pass_rate: 0.8, min_baseline_delta: 0.1}}
sandbox:
  forbidden_files: ['answers/.*\\.json$', 'expected/']
cases:
"""
CASE = """\
  - id: case-{i:02d}
    description: Report number {i}.
    prompt: |
      Read data-{i:02d}.csv and notes-{i:02d}.md, then write report.md with a summary,
      a table of the top five rows and a list of follow-ups. Keep it under 400 words.
    input_files: [fixtures/data-{i:02d}.csv, fixtures/notes-{i:02d}.md]
    output_files: [report.md, "out/*.json"]
    rubric: The report is accurate, complete and concise.
    expectations:
      - The summary names the largest value
      - Every follow-up is actionable
    checks:
      - {{id: has-table, type: regex, pattern: '^\\|.+\\|$'}}
      - {{type: min_count, pattern: '^- ', count: 3}}
      - {{type: contains, needle: Summary}}
      - {{type: not_contains, needle: TODO}}
      - {{type: max_tokens, count: 600}}
      - {{type: has_format, format: date_iso}}
      - {{type: has_format, format: 'R-\\d{{4}}'}}
      - {{type: file_exists, file: report.md}}
      - {{type: python, code: "assert len(output.split()) < 400"}}
"""
JSON_SCHEMA_CHECK = """\
      - {{type: json_schema, file: out/result.json, schema: {{type: object, required: [total]}}}}
"""


def generate(folder: Path, cases: int) -> tuple[Path, Path]:
    """Two specs over the same fixtures: a typical one, and one with an inline JSON Schema check per case."""
    (folder / "skills" / "report").mkdir(parents=True)
    (folder / "skills" / "report" / "SKILL.md").write_text("---\nname: report\n---\nWrite short reports.\n")
    (folder / "fixtures").mkdir()
    for i in range(cases):
        (folder / "fixtures" / f"data-{i:02d}.csv").write_text("name,value\n" + "".join(
            f"row{j},{j * i}\n" for j in range(20)))
        (folder / "fixtures" / f"notes-{i:02d}.md").write_text(f"# Notes {i}\n\n- check the totals\n")
    schema = REPO / "schemas" / "spec.schema.json"
    plain, with_schema = folder / "report.eval.yaml", folder / "report-jsonschema.eval.yaml"
    plain.write_text(HEAD.format(schema=schema) + "".join(CASE.format(i=i) for i in range(cases)))
    with_schema.write_text(HEAD.format(schema=schema) + "".join(CASE.format(i=i) + JSON_SCHEMA_CHECK.format()
                                                                 for i in range(cases)))
    return plain, with_schema


@dataclass
class Timed:
    label: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: int = 0  # KiB


def run_once(argv: list[str], *, cwd: str, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s of user + sys, peak RSS KiB) of one run; a non-zero exit stops the bench."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode} in {cwd}")
    return wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)


def interleaved(commands: list[tuple[str, list[str], dict[str, str]]], *, cwd: str, runs: int) -> list[Timed]:
    """Every command `runs` times, round-robin, so every command sees the same load."""
    timed = [Timed(label) for label, _, _ in commands]
    for _ in range(runs):
        for (_, argv, env), t in zip(commands, timed, strict=True):
            wall, cpu, rss = run_once(argv, cwd=cwd, env=env)
            t.wall.append(wall)
            t.cpu.append(cpu)
            t.rss = max(t.rss, rss)
    return timed


def burn() -> None:  # one busy loop, for --load
    while True:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=30)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", help="an older checkout of skillmake to time beside this one")
    parser.add_argument("--load", type=int, default=0, help="busy loops to run meanwhile (a loaded machine)")
    parser.add_argument("--keep", help="generate into this folder and keep it")
    opts = parser.parse_args()

    folder = Path(opts.keep) if opts.keep else Path(tempfile.mkdtemp(prefix="skillmake-bench-validate-"))
    folder.mkdir(parents=True, exist_ok=True)
    burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(opts.load)]
    try:
        specs = generate(folder, opts.cases)
        # Bytecode as users have it: the warm-up run writes skillmake's .pyc files (git-ignored __pycache__).
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = base_env | {"PYTHONPATH": str(REPO)}
        schema = str(REPO / "schemas" / "spec.schema.json")
        script, cjs = shutil.which("skillmake"), shutil.which("check-jsonschema")
        if not cjs:
            raise SystemExit("check-jsonschema is not on PATH (pip install check-jsonschema): nothing to pair with")
        for burner in burners:
            burner.start()
        rows = []
        worst = 0.0
        for spec in specs:
            ours = [sys.executable, "-m", "skillmake", "validate", "--quiet", spec.name]
            commands: list[tuple[str, list[str], dict[str, str]]] = [("python -m skillmake validate", ours, env)]
            if opts.before:
                before = str(Path(opts.before).resolve())
                commands.append((f"python -m skillmake validate ({before})", ours, base_env | {"PYTHONPATH": before}))
            if script:
                commands.append(("skillmake validate (script)", [script, "validate", "--quiet", spec.name], env))
            commands += [("check-jsonschema --schemafile", [cjs, "--schemafile", schema, spec.name], env),
                         ("python -c pass (start-up floor)", [sys.executable, "-c", "pass"], env)]
            for _, argv, cmd_env in commands:  # warm the page cache and the .pyc files
                subprocess.run(argv, cwd=folder, env=cmd_env, capture_output=True, check=True)
            timed = interleaved(commands, cwd=str(folder), runs=opts.runs)
            base = next(t for t in timed if t.label.startswith("check-jsonschema"))
            base_wall, base_cpu = statistics.median(base.wall), statistics.median(base.cpu)
            for t in timed:
                wall, cpu = statistics.median(t.wall), statistics.median(t.cpu)
                rows.append((spec.name, t.label, f"{wall * 1000:.0f} ms", f"{min(t.wall) * 1000:.0f} ms",
                             f"{cpu * 1000:.0f} ms", f"{wall / base_wall:.2f}x", f"{cpu / base_cpu:.2f}x",
                             f"{t.rss // 1024} MiB"))
            worst = max(worst, statistics.median(timed[0].wall) / base_wall, statistics.median(timed[0].cpu) / base_cpu)
        size = specs[0].stat().st_size
        print(f"specs: {opts.cases} cases each, ~{size // 1024} KiB, {2 * opts.cases} input files; {opts.runs} "
              f"interleaved runs per command; {opts.load} busy loops; load average {os.getloadavg()[0]:.2f}")
        print(table(("spec", "command", "wall median", "wall min", "CPU median", "wall vs check-jsonschema",
                     "CPU vs check-jsonschema", "peak RSS"), rows))
        print(f"goal: skillmake validate ≤ 0.5x check-jsonschema, wall and CPU → "
              f"{'met' if worst <= 0.5 else 'NOT met'} (worst {worst:.2f}x)")
    finally:
        for burner in burners:
            burner.terminate()
        if not opts.keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
