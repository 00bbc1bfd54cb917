"""What a 200-grade rubric pass costs, as the cost line reports it: synchronous judge calls vs one batch (--batch),
each without and with prompt-cache hits, against the loopback fake API (real CLI, real anthropic SDK).

The fake reports the token counts a rubric judge of this size would: 2,100 tokens of fixed prefix (system prompt,
tool, rubric, task: sent cacheable) and 800 tokens of output judged, 60 tokens out. "no cache" answers every call with
all 2,900 input tokens fresh; "cache" has the first call write the prefix to the cache and every later one read it.
The same 200 trials (a `command` agent) are judged four times; each pass changes judge.temperature only, so every
grade key is new while the price stays the same. Prices: claude-sonnet-4-6, $3 / $15 per million in / out, cache
reads $0.30, 5-minute writes $3.75, batch half of all of it.

    python bench/batch_cost.py [--grades 200]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from common import table  # noqa: E402

from tests.fakeapi import FakeAPI, Recorded, Reply  # noqa: E402

PREFIX, JUDGED, OUT = 2100, 800, 60
# A rubric long enough that the prefix really is ~2,100 tokens: the fake, as the real API, caches no prefix below the
# model's minimum (1,024 tokens on claude-sonnet-4-6), whatever the script says.
RUBRIC = "Is the greeting friendly? " + " ".join(
    f"Point {i}: a friendly greeting is warm, addresses the reader directly and has no sarcasm or filler."
    for i in range(70))


def script(cache: bool) -> Any:
    lock, seen = threading.Lock(), [0]

    def answer(request: Recorded) -> Reply:
        with lock:
            first = seen[0] == 0
            seen[0] += 1
        usage = ({"input_tokens": PREFIX + JUDGED, "output_tokens": OUT} if not cache else
                 {"input_tokens": JUDGED, "output_tokens": OUT, "cache_creation_input_tokens": PREFIX if first else 0,
                  "cache_read_input_tokens": 0 if first else PREFIX})
        return Reply.tool_use("record_verdict", {"score": 5, "reason": "friendly"}, usage=usage)

    return answer


def spec(grades: int, temperature: float) -> str:
    return ("skill: skills/s\nagent: {kind: command, command: [sh, -c, 'echo hello $SKILLMAKE_TRIAL']}\n"
            f"trials: {grades}\njudge: {{provider: anthropic, model: claude-sonnet-4-6, temperature: {temperature}}}\n"
            f"cases:\n  - id: one\n    prompt: say hi\n    rubric: '{RUBRIC}'\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=200)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeAPI() as api:
        root = Path(tmp) / "p"
        (root / "skills/s").mkdir(parents=True)
        (root / "skills/s/SKILL.md").write_text("---\nname: s\ndescription: says hi\n---\nSay hi.\n")
        env = dict(os.environ, **api.anthropic_env(), HOME=str(Path(tmp) / "home"), SKILLMAKE_BATCH_POLL="0.05")
        base = None
        for n, (name, batch, cache) in enumerate((("synchronous", False, False), ("synchronous + cache", False, True),
                                                  ("batch", True, False), ("batch + cache", True, True))):
            (root / "s.eval.yaml").write_text(spec(args.grades, 0.1 * (n + 1)))
            api.reset()
            api.script = script(cache)
            argv = [sys.executable, "-m", "skillmake", "-j", "8", *(["--batch"] if batch else [])]
            done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=1800)
            line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
            m = re.search(r"spent [\d,]+ tokens \$([\d.]+)(?: \(cache saved \$(-?[\d.]+)\))?", line)
            if done.returncode != 0 or m is None:
                sys.exit(f"{name}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
            cost, saved = float(m.group(1)), float(m.group(2) or 0)
            base = base or cost
            rows.append([name, api.count("/v1/messages"), len(api.batches.created), f"${cost:.4f}", f"${saved:.4f}",
                         f"{cost / base:.2f}x"])
    print(table(["judge pass (200 rubric grades)", "sync judge calls", "batches", "cost line",
                 "cache saved", "vs synchronous"], rows))


if __name__ == "__main__":
    main()
