"""The `skillmake` front end: its own options and fast commands, otherwise doit with a built-in loader."""

from __future__ import annotations  # noqa: I001 - interrupts comes first on purpose

# First, before anything slow: from here on Ctrl-C or SIGTERM stops the run in one line (interrupts.py).
from skillmake.core import interrupts

import os
import sys
from collections.abc import Sequence

from skillmake import __version__
from skillmake.core import console
from skillmake.commands import argv as cmdline
from skillmake.commands import runner
from skillmake.core.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, SkillmakeError, UsageError, exit_code_lines

COMMANDS = """\
commands:
  (none) [TASK…]                run what is stale: every spec, or the tasks named (same as doit)
  validate [FILE…]              check specs (no files: the whole project); --format json for tools
  explain [TASK|CELL|SPEC…]     why each stale trial and grade would run, and the cost; --format json
  report [SPEC…]                re-render the last results without running anything
  watch [OPTIONS] [TASK…]       run again whenever a spec, a skill or a fixture changes
  init [SKILL]                  write a spec beside a skill (a starter skill if there is none)
  schema [NAME]                 print a JSON Schema; --path, --write DIR (for editors)
  grade --output FILE [SPEC]    grade an output you already have, without running the agent (clauditor's)
  import FILE [-o OUT]          write the native spec of a clauditor/skill-creator/caliper/eva file
  promote [SPEC…]               move a skill or prompt draft → tested → ready on passing results
  compare SPEC [A B | --against REV|DIR | --previous]
                                blind A/B: a judge picks the better output, both orders, unlabeled
  bisect [SPEC/]CASE [--good REV] [--bad REV]
                                the first commit of the skill at which the case fell below its threshold
  optimize-description SPEC     improve the skill's description on its trigger_tests (skill-creator's loop)
  rejudge N [SPEC…]             judge cached outputs N more times: flip rate and Fleiss' kappa per criterion
  view [SPEC…]                  browse results, outputs and transcripts on 127.0.0.1, with feedback
  push | pull [SPEC…]           send every stored result to the remote store / fetch what the specs need
  clauditor grade|validate|triggers SKILL.md [FLAGS]
                                clauditor's own command lines, flags and exit codes (0 1 2 3)
  caliper run|validate SPEC [FLAGS]
                                caliper's own command lines, results file and exit codes (run: 0 1 2)
  list, info, clean, forget, …  doit's commands (`skillmake help` lists them; `skillmake CMD --help`)"""


def usage() -> str:
    groups = [("options (every command)", cmdline.GLOBAL), ("which cells (run, explain, watch)", cmdline.SELECT),
              ("run settings, for this run only (run, explain, watch)", cmdline.OVERRIDES),
              ("output and parallelism (run)", cmdline.OUTPUT),
              ("caliper's flags (`caliper run`'s, with caliper's meaning; --model is above)", cmdline.CALIPER),
              ("clauditor's flags (`clauditor grade`'s: flag > CLAUDITOR_* > spec > auto; `skillmake clauditor` "
               "takes its whole command line)", cmdline.CLAUDITOR)]
    return (f"skillmake {__version__} — Make-style evals for agent skills\n\n"
            f"usage: skillmake [COMMAND] [OPTIONS] [TASK…]\n\n{COMMANDS}\n\n{cmdline.help_table(groups)}\n"
            "  doit's run options work too: -n N (processes), -P thread|process, -a (always), -c (continue),\n"
            "  -s (single), -v N (doit's verbosity), -o FILE, -r REPORTER, --db-file, --backend\n\n"
            f"exit codes (the README's table says more):\n{exit_code_lines()}")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(args)
    except UsageError as exc:
        _error(exc.message, exc.hint)
        return EXIT_USAGE
    except SkillmakeError as exc:
        # An error may say its own code (errors.py's table): no spec found 5, a bad -k or setting 3.
        code = getattr(exc, "exit_code", EXIT_INVALID)
        console.write_line(sys.stderr, f"skillmake: {exc.render()}")
        return int(code)
    except BrokenPipeError:
        # The reader left (`skillmake -h | head`): stop quietly, as Unix tools do.
        console.silence(sys.stdout)
        return EXIT_OK
    except KeyboardInterrupt:
        from skillmake.run import process

        # Stop every trial's processes before saying so: none may outlive the run, and none is waited for.
        process.interrupt()
        try:
            process.wait_for_all()
        except KeyboardInterrupt:
            pass
        print(f"skillmake: {process.INTERRUPTED_MESSAGE}", file=sys.stderr)
        return 130


def _error(message: str, hint: str | None) -> None:
    """A usage error: its message, then its usage line as it is, or any other fix as every error says one."""
    if hint and not hint.startswith("usage:"):
        hint = f"  hint: {hint}"
    console.write_line(sys.stderr, f"skillmake: {message}" + (f"\n{hint}" if hint else ""))


def _main(args: list[str]) -> int:
    if args[:1] == ["grade"] and any(a == "--output" or a.startswith("--output=") for a in args[1:]):
        # clauditor's captured-output mode; without --output, `grade` stays doit's task group.
        from skillmake.commands.captured import main as captured_main

        return captured_main(args[1:])
    args = _rejudge_flag(args)
    inv = cmdline.parse(args, doit_commands=runner.doit_commands)
    if inv.root is not None:
        root = os.path.abspath(os.path.expanduser(inv.root))
        if not os.path.isdir(root):
            raise UsageError(f"--root {inv.root}: no such folder", hint="usage: skillmake --root DIR [COMMAND] …")
        os.environ["SKILLMAKE_ROOT"] = root  # before anything loads: every command and doit's loader read it
    if inv.remote is not None or inv.offline:
        from skillmake.store import remote

        if inv.remote is not None:
            if "://" not in inv.remote:
                raise UsageError(f"--remote needs a URL (s3://bucket/prefix, file:///folder), not {inv.remote!r}",
                                 hint="usage: skillmake --remote URL [COMMAND] …")
            os.environ[remote.REMOTE_VAR] = inv.remote  # through the environment: doit's workers see it too
        if inv.offline:
            os.environ[remote.OFFLINE_VAR] = "1"
    if inv.executor is not None:
        from skillmake.engine import cluster

        if inv.executor not in ("threads", "local"):
            cluster.address(inv.executor)  # a UsageError for anything but dask://HOST:PORT
        os.environ[cluster.EXECUTOR_VAR] = inv.executor  # through the environment: doit's workers see it too
    if inv.batch:
        os.environ["SKILLMAKE_BATCH"] = "1"  # through the environment: doit's workers see it too (run/batch.py)
    if inv.version:
        from importlib.metadata import version  # doit's installed version, without importing doit (~70 ms)

        return _say(f"skillmake {__version__}\ndoit {version('doit')}")
    console.configure(quiet=inv.quiet, verbose=bool(inv.verbose), color=inv.color)
    if inv.command in cmdline.OWN_COMMANDS and inv.command != "explain":
        if inv.command == "report":
            runner.set_run_options(inv)  # `skillmake --adaptive report`: the settings the runs had (argv.parse)
        return _own(inv.command, [*inv.args, *(["--help"] if inv.help else [])])
    if inv.command == "explain":
        if inv.help:
            return _say(f"usage: skillmake explain [OPTIONS] [TASK|CELL|SPEC…]\n\n"
                        f"{cmdline.help_table([('options', cmdline.EXPLAIN + cmdline.SELECT + cmdline.OVERRIDES)])}")
        runner.set_run_options(inv)
        from skillmake.store import remote

        os.environ[remote.OFFLINE_VAR] = "1"  # explain reads the local store only: no round trip per trial
        from skillmake.commands.specs import explain

        return explain(inv)
    if (inv.command == "help" and not inv.targets) or (inv.command == "run" and inv.help):
        return _say(usage())
    if inv.help:
        from skillmake.engine.main import doit_help

        return doit_help(inv.command)
    if inv.command == "run":
        runner.set_run_options(inv)
    code = runner.run_doit(list(inv.doit_args), verbose=bool(inv.verbose) and inv.command == "run")
    if inv.command == "run" and inv.output is not None:
        from skillmake.commands.output import write_output

        # Whatever the verdict, as caliper saves its results: the file is what the run found.
        write_output(inv.output, judge_strategy=inv.caliper_judge or "autorater")
    return code


def _rejudge_flag(args: list[str]) -> list[str]:
    """`skillmake --rejudge N [SPEC…]` (the issue's spelling) is `skillmake rejudge N [SPEC…]`."""
    for i, arg in enumerate(args):
        if arg == "--rejudge" or arg.startswith("--rejudge="):
            value = [arg.split("=", 1)[1]] if "=" in arg else args[i + 1:i + 2]
            rest = args[:i] + args[i + (1 if "=" in arg else 2):]
            return ["rejudge", *value, *rest]
    return args


def _say(text: str) -> int:
    console.write_line(sys.stdout, text)
    return EXIT_OK


def _own(command: str, args: list[str]) -> int:
    interrupts.arm()  # the command unwinds on Ctrl-C (KeyboardInterrupt), as its own code expects
    if command == "watch":
        from skillmake.engine.watch import main as watch_main

        return watch_main(args)
    if command in ("init", "schema"):
        from skillmake.commands import scaffold

        return int(scaffold.init_main(args) if command == "init" else scaffold.schema_main(args))
    if command == "import":
        from skillmake.commands.importer import main as import_main

        return import_main(args)
    if command == "promote":
        from skillmake.commands.promote import main as promote_main

        return promote_main(args)
    if command == "compare":
        from skillmake.commands.compare import main as compare_main

        return compare_main(args)
    if command == "bisect":
        from skillmake.commands.bisect import main as bisect_main

        return bisect_main(args)
    if command == "optimize-description":
        from skillmake.commands.optimize_description import main as optimize_main

        return optimize_main(args)
    if command == "rejudge":
        from skillmake.commands.rejudge import main as rejudge_main

        return rejudge_main(args)
    if command == "clauditor":
        from skillmake.commands.clauditor import main as clauditor_main

        return clauditor_main(args)
    if command == "caliper":
        from skillmake.commands.caliper import main as caliper_main

        return caliper_main(args)
    if command == "view":
        from skillmake.commands.view import main as view_main

        return view_main(args)
    if command in ("push", "pull"):
        from skillmake.commands import sync

        return sync.push_main(args) if command == "push" else sync.pull_main(args)
    from skillmake.commands import specs

    return specs.validate(args) if command == "validate" else specs.report(args)


if __name__ == "__main__":
    sys.exit(main())
