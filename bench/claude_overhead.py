"""Per-trial overhead with a real agent: the real `claude` CLI and the Anthropic judge against an instant loopback
fake API (tests/fakeapi), `skillmake -j 1` next to the bare work it drives, in one table.

Each round (interleaved, so a busy moment costs every side alike) times, over N cases × 1 trial:
  - `skillmake -j 1` on a fresh copy of the project (every trial and grade stale), this checkout;
  - the same with an older checkout (`--before DIR`, e.g. `git worktree add /tmp/before <commit>`);
  - bare: N runs of the same `claude -p … --output-format stream-json` command line, in a fresh workspace with the
    skill installed and a fresh config folder each, then N judge requests (the same tool-forced call, through
    urllib: no SDK), one after the other.
Overhead per trial = (side − bare) / N: what skillmake adds to a trial and its grade (process supervision,
workspaces, the store, views, reports, imports: the anthropic SDK alone is ~1.6 s once per run when it sits on the
critical path). Goal: ≤ 0.5 s per trial.

    python bench/claude_overhead.py [--cases 4] [--rounds 3] [--before DIR]

Larger: --cases 20 --rounds 5 (about 1 minute per round on this machine).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from common import table  # noqa: E402

from tests.fakeapi import FAKE_KEY, FakeAPI, Recorded, Reply  # noqa: E402

MODEL = "claude-sonnet-4-6"
SKILL = "---\nname: greet\ndescription: Greets people warmly.\n---\nGreet the person by name, warmly.\n"
HEAD = f"""\
skill: skills/greet
agent: {{kind: claude-code, model: {MODEL}, max_turns: 2}}
judge: {{provider: anthropic, model: {MODEL}}}
trials: 1
cases:
"""
CASE = """\
  - id: c{i}
    prompt: Greet person number {i}.
    rubric: Is the greeting warm?
"""
VERDICT_TOOL = {"name": "record_verdict", "description": "Record the verdict.",
                "input_schema": {"type": "object", "properties": {"score": {"type": "integer"},
                                                                  "reason": {"type": "string"}},
                                 "required": ["score", "reason"]}}
BARE = r'''
import json, os, shutil, subprocess, sys, tempfile, urllib.request
claude, base, key, model, n, quiet = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
skill, tool = sys.argv[7], json.loads(sys.argv[8])
for i in range(n):
    top = tempfile.mkdtemp(prefix="bare-trial-")
    work, home = os.path.join(top, "workspace"), os.path.join(top, "home")
    os.makedirs(os.path.join(work, ".claude", "skills", "greet"))
    os.makedirs(home)
    with open(os.path.join(work, ".claude", "skills", "greet", "SKILL.md"), "w") as f:
        f.write(skill)
    env = {"PATH": os.environ["PATH"], "HOME": home, "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
           "ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": key, **json.loads(quiet)}
    argv = [claude, "-p", "--output-format", "stream-json", "--verbose", "--no-session-persistence", "--model", model,
            "--max-turns", "2"]
    done = subprocess.run(argv, cwd=work, env=env, input=f"Greet person number {i}.".encode(), capture_output=True)
    if done.returncode != 0:
        sys.exit(f"claude exited {done.returncode}: {done.stderr.decode()[-500:]}")
    shutil.rmtree(top)
for i in range(n):
    body = {"model": model, "max_tokens": 1024, "messages": [{"role": "user", "content": f"Judge greeting {i}."}],
            "tools": [tool], "tool_choice": {"type": "tool", "name": "record_verdict"}}
    request = urllib.request.Request(base + "/v1/messages", data=json.dumps(body).encode(), method="POST",
                                     headers={"x-api-key": key, "anthropic-version": "2023-06-01",
                                              "content-type": "application/json"})
    with urllib.request.urlopen(request) as reply:
        json.load(reply)
'''


def model(request: Recorded) -> Reply:
    """Instant answers: a verdict for the judge's tool-forced call, a greeting for the agent."""
    tools = (request.json or {}).get("tools") or []
    if any(t.get("name") == "record_verdict" for t in tools if isinstance(t, dict)):
        return Reply.tool_use("record_verdict", {"score": 5, "reason": "warm"})
    return Reply.text("Hello, dear friend!")


CPU: dict[str, list[float]] = {}  # side → CPU seconds (user + system) of the run's whole process tree, per round


def timed(argv: list[str], *, cwd: Path, env: dict[str, str], label: str = "") -> float:
    """The wall time of `argv`; its process tree's CPU time (every waited-for descendant: the supervisors and the
    claude CLIs too) goes to CPU[label]. On a loaded machine the CPU time is the steadier measure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(label, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}… exited {done.returncode}:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="an older checkout of skillmake to time beside this one")
    opts = parser.parse_args()
    from skillmake.run.agents.claude_code import QUIET_ENV
    from skillmake.run.agents.cli_common import find_cli

    claude = find_cli("claude", "SKILLMAKE_CLAUDE")
    if not claude:
        raise SystemExit("the claude CLI is not installed: run scripts/setup.sh (or set SKILLMAKE_CLAUDE)")
    scratch = Path(tempfile.mkdtemp(prefix="skillmake-bench-claude-"))
    template = scratch / "template"
    (template / "skills" / "greet").mkdir(parents=True)
    (template / "skills" / "greet" / "SKILL.md").write_text(SKILL)
    (template / "greet.eval.yaml").write_text(HEAD + "".join(CASE.format(i=i) for i in range(opts.cases)))
    trees = [("skillmake -j 1", REPO)]
    if opts.before:
        trees.append((f"skillmake -j 1 ({Path(opts.before).resolve()})", Path(opts.before).resolve()))
    walls: dict[str, list[float]] = {label: [] for label, _ in trees} | {"bare: claude CLI + judge requests": []}
    try:
        with FakeAPI() as api:
            api.script = model
            home = scratch / "home"
            home.mkdir()
            # Bytecode cached as an install has it (a side without its .pyc files would pay compiling every module on
            # every run): PYTHONDONTWRITEBYTECODE off, and each tree compiled once before the clock starts.
            base_env = {k: v for k, v in os.environ.items()
                        if not k.startswith(("ANTHROPIC_", "SKILLMAKE_")) and k != "PYTHONDONTWRITEBYTECODE"}
            for _, tree in trees:
                subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "skillmake")], env=base_env,
                               check=True, capture_output=True)
            env = base_env | api.anthropic_env() | {"HOME": str(home), "SKILLMAKE_CLAUDE": claude}
            for r in range(opts.rounds):
                for label, tree in trees:
                    project = scratch / f"round-{r}-{len(walls[label])}-{tree.name}"
                    shutil.copytree(template, project)
                    before = api.count("/v1/messages")
                    walls[label].append(timed([sys.executable, "-m", "skillmake", "-j", "1"], cwd=project,
                                              env=env | {"PYTHONPATH": str(tree)}, label=label))
                    if api.count("/v1/messages") - before < 2 * opts.cases:
                        raise SystemExit(f"{label}: fewer requests than {opts.cases} trials and grades make")
                    shutil.rmtree(project, ignore_errors=True)
                walls["bare: claude CLI + judge requests"].append(timed(
                    [sys.executable, "-c", BARE, claude, api.anthropic_env()["ANTHROPIC_BASE_URL"], FAKE_KEY, MODEL,
                     str(opts.cases), json.dumps(QUIET_ENV), SKILL, json.dumps(VERDICT_TOOL)],
                    cwd=scratch, env=base_env, label="bare: claude CLI + judge requests"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    bare_label = "bare: claude CLI + judge requests"
    bare = statistics.median(walls[bare_label])
    bare_cpu = statistics.median(CPU[bare_label])
    rows: list[tuple[Any, ...]] = []
    for label, values in walls.items():
        wall = statistics.median(values)
        cpu = statistics.median(CPU[label])
        rows.append((label, f"{wall:.2f} s", f"{min(values):.2f} s", f"{wall / opts.cases:.2f} s",
                     f"{(wall - bare) / opts.cases:+.2f} s", f"{wall / bare:.2f}x", f"{cpu:.2f} s",
                     f"{(cpu - bare_cpu) / opts.cases:+.2f} s", f"{cpu / bare_cpu:.2f}x"))
    print(f"{opts.cases} cases × 1 trial, claude-code + anthropic judge against an instant fake API, -j 1; "
          f"median of {opts.rounds} interleaved rounds; load average {os.getloadavg()[0]:.2f}")
    print(table(("side", "wall median", "wall min", "per trial", "overhead per trial vs bare", "vs bare",
                 "CPU median", "CPU overhead per trial", "CPU vs bare"), rows))
    ours = (statistics.median(walls["skillmake -j 1"]) - bare) / opts.cases
    ours_cpu = (statistics.median(CPU["skillmake -j 1"]) - bare_cpu) / opts.cases
    print(f"goal: overhead ≤ 0.5 s per trial → {'met' if ours <= 0.5 else 'NOT met'} ({ours:+.2f} s wall, "
          f"{ours_cpu:+.2f} s CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
