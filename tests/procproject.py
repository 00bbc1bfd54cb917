"""A project of one case whose agent is a Python script, run `trials` times, with the three-line dodo.py: what the
tests that interrupt or kill runs (and bench/interrupts.py) start and stop."""

from __future__ import annotations

from pathlib import Path

DODO = '"""Evals of this project."""\nfrom skillmake.dodo import *  # noqa: F403\n'


def one_case_spec(trials: int) -> str:
    """A spec whose one case runs agent.py `trials` times and passes when it prints "done"."""
    return ("skill: skills/s\nagent: {kind: command, command: [python3, agent.py]}\n"
            f"trials: {trials}\ncases: [{{id: a, prompt: work, checks: [{{type: contains, needle: done}}]}}]\n")


def write_project(root: Path, *, agent: str, spec: str, name: str = "s", dodo: str = DODO) -> Path:
    """`root` with skills/s/SKILL.md, agent.py (`agent`), `name`.eval.yaml (`spec`) and dodo.py (`dodo`)."""
    (root / "skills" / "s").mkdir(parents=True)
    (root / "skills" / "s" / "SKILL.md").write_text("body\n")
    (root / "agent.py").write_text(agent)
    (root / f"{name}.eval.yaml").write_text(spec)
    (root / "dodo.py").write_text(dodo)
    return root


def daemon_lines(seconds: int) -> str:
    """Lines of an agent script (which imports os and time) that leave a daemon the classic way — fork, setsid,
    fork, stdio on /dev/null — asleep for `seconds`: what no run may leave behind."""
    return ("if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
            "        fd = os.open(os.devnull, os.O_RDWR)\n        for i in (0, 1, 2):\n            os.dup2(fd, i)\n"
            f"        time.sleep({seconds})\n    os._exit(0)\n")
