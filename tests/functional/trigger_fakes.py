"""A stand-in `claude` (SKILLMAKE_CLAUDE) for trigger tests: it picks a skill the way a model would have to, from the
names and descriptions installed in the workspace's .claude/skills, and answers in Claude Code 2.1.328's
stream-json shapes (a `Skill` tool_use, then its tool_result). Every call is logged with its prompt.

Rule: the first installed skill (in name order) whose description shares a word of five letters or more with the
query is activated. A query containing FAIL-HARD makes the process exit 1 before any output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FAKE_CLAUDE = r'''
import json, os, re, sys
from pathlib import Path
if "--version" in sys.argv:
    print("2.1.328 (Claude Code)"); sys.exit(0)
prompt = sys.stdin.read()
log = Path(LOG)
with log.open("a") as f:
    f.write(json.dumps({"prompt": prompt}) + "\n")
def words(text):
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 5}
chosen = None
skills = Path(".claude/skills")
for folder in sorted(skills.iterdir()) if skills.is_dir() else []:
    text = (folder / "SKILL.md").read_text()
    desc = json.loads(re.search(r"^description: (.*)$", text, re.M).group(1))
    if words(desc) & words(prompt):
        chosen = folder.name
        break
if "FAIL-HARD" in prompt:
    sys.stderr.write("boom\n"); sys.exit(1)
names = sorted(p.name for p in skills.iterdir()) if skills.is_dir() else []
out = [{"type": "system", "subtype": "init", "skills": names}]
if chosen:
    out.append({"type": "assistant", "message": {"id": "m1", "content": [
        {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": chosen}}]}})
    out.append({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "Launching skill: " + chosen}]}})
out.append({"type": "assistant", "message": {"id": "m2", "content": [{"type": "text", "text": "done"}]}})
out.append({"type": "result", "subtype": "success", "is_error": False, "result": "done", "num_turns": 2,
            "total_cost_usd": 0.002, "usage": {"input_tokens": 50, "output_tokens": 5}})
print("\n".join(json.dumps(e) for e in out))
'''


def install_fake_claude(folder: Path) -> Path:
    """Write the stand-in as folder/bin/claude, logging to folder/claude.log; its path."""
    fake = folder / "bin" / "claude"
    fake.parent.mkdir(parents=True, exist_ok=True)
    fake.write_text(f"#!{sys.executable}\nLOG = {str(folder / 'claude.log')!r}\n{FAKE_CLAUDE}")
    fake.chmod(0o755)
    return fake


def claude_log(folder: Path) -> list[str]:
    """The prompts of every call so far."""
    log = folder / "claude.log"
    return [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []
