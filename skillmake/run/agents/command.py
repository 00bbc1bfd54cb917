"""The command agent: any executable runs the trial (the offline default)."""

from __future__ import annotations

import os
import shlex

from skillmake.run import process
from skillmake.run.agents.base import AgentResult, TrialRequest, Usage
from skillmake.spec.model import AgentConfig


class CommandAgent:
    """Runs `agent.command` in the workspace. The prompt arrives on stdin and in $SKILLMAKE_PROMPT;
    the skill's path in $SKILLMAKE_SKILL (empty for an arm without the skill); case args are appended
    to the argv (or exported as $SKILLMAKE_ARGS for a shell command). stdout is the output."""

    kind = "command"

    def version(self, config: AgentConfig) -> str | None:
        return None

    def run(self, request: TrialRequest) -> AgentResult:
        config = request.agent
        env = dict(request.env)
        env.update(dict(config.env))
        env.update({
            "SKILLMAKE_PROMPT": request.prompt,
            "SKILLMAKE_ARGS": request.case.args or "",
            "SKILLMAKE_SKILL": request.skill.path if request.skill else "",
            "SKILLMAKE_SKILL_NAME": request.skill.name if request.skill else "",
            "SKILLMAKE_WORKSPACE": request.workspace,
            "SKILLMAKE_CASE": request.case.id,
            "SKILLMAKE_ARM": request.arm_name,
            "SKILLMAKE_TRIAL": str(request.k),
        })
        if isinstance(config.command, tuple):
            argv: list[str] | str = [*config.command, *shlex.split(request.case.args or "")]
            # Program paths are relative to the spec's folder, like every other path in a spec: the words the
            # trial key named as files there (no stat a word: the key looked when the run was planned).
            folder = request.spec.folder
            argv = [os.path.join(folder, a) if a in request.program_files else a for a in argv]
            shell = False
        else:
            argv, shell = str(config.command), True
        done = process.run(argv, cwd=request.workspace, env=env, timeout=request.timeout,
                           stdin=request.prompt.encode(), shell=shell)
        stdout = done.stdout.decode("utf-8", "replace")
        if done.error:
            return AgentResult(outcome="error", output="", error=done.error, usage=Usage(num_turns=0))
        if done.timed_out:
            return AgentResult(outcome="timeout", output=stdout, stdout=done.stdout, stderr=done.stderr,
                               error=f"timed out after {request.timeout:g}s; the process group was killed")
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            return AgentResult(outcome="error", output=stdout, stdout=done.stdout, stderr=done.stderr,
                               exit_code=done.returncode,
                               error=f"agent exited with {done.returncode}" + (f": {' / '.join(tail)}" if tail else ""))
        return AgentResult(outcome="completed", output=stdout, stdout=done.stdout, stderr=done.stderr,
                           exit_code=0)


AGENT = CommandAgent()
