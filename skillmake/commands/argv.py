"""Reading `skillmake`'s command line: its own options out, doit's options checked and passed on.

skillmake is doit with a built-in loader, so a run accepts doit's options too (`-n 4`, `-a`, `-s`, `-v 2`, …).
Every option is checked here, against skillmake's table and doit's own, so a typo is one line with a
did-you-mean and exit 3 — never doit's dump of its option objects. Options may come after task names, as
make and pytest allow; doit needs them first, so they are moved there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillmake.core.errors import UsageError

# The commands skillmake implements itself (everything else is a doit command or a task name).
OWN_COMMANDS = ("validate", "explain", "report", "watch", "init", "schema", "import", "promote", "compare",
                "bisect", "optimize-description", "view", "rejudge", "clauditor", "caliper", "push", "pull")


@dataclass(frozen=True, slots=True)
class Opt:
    """One option: `kind` is flag, value, multi (repeatable value) or verbosity (`-v`: ours bare, doit's `-v N`)."""

    short: str
    long: str
    dest: str
    kind: str = "flag"
    owner: str = "skillmake"  # or "doit": passed on, not read here
    help: str = ""
    metavar: str = ""

    @property
    def takes_value(self) -> bool:
        return self.kind in ("value", "multi")


GLOBAL = (
    Opt("", "root", "root", "value", help="the project root (default: found upward from here)", metavar="DIR"),
    Opt("", "color", "color", help="colour the output even when it is not a terminal"),
    Opt("", "no-color", "no_color", help="never colour the output (also: NO_COLOR=1)"),
    Opt("h", "help", "help", help="show this help (after a command: that command's help)"),
    Opt("", "version", "version", help="print skillmake's and doit's versions"),
    Opt("", "remote", "remote", "value", help="a shared remote store for this run: s3://bucket/prefix or "
        "file:///folder (also: SKILLMAKE_REMOTE; beats the config's `remote`)", metavar="URL"),
    Opt("", "offline", "offline", help="ignore every remote store (also: SKILLMAKE_OFFLINE=1)"),
    Opt("", "executor", "executor", "value", help="run trials and grades on a Dask cluster: dask://HOST:PORT, or "
        "threads to run them here (also: SKILLMAKE_EXECUTOR; beats the config's `executor`)", metavar="URL"),
    Opt("", "batch", "batch", help="judge the stale grades as one provider batch at half price, waiting for it "
                                   "(also: judge.batch, SKILLMAKE_BATCH=1)"),
)

SELECT = (
    Opt("k", "", "k", "value", help="only cases whose spec/case/arm name matches EXPR (pytest's -k)",
        metavar="EXPR"),
    Opt("", "tag", "tags", "multi", help="only cases with this tag (repeatable)", metavar="TAG"),
    Opt("", "spec", "specs", "multi", help="only this spec's cells (its exact name; repeatable)", metavar="NAME"),
    Opt("", "failed", "failed", help="only the cells that failed last time (pytest's --lf)"),
    Opt("", "resample", "resample", help="run the selected trials again even though they are cached"),
    Opt("", "shard", "shard", "value", help="only shard I of N of the stale trials, by trial key (a CI matrix "
        "of N jobs; no report: `skillmake report` builds them from the store)", metavar="I/N"),
)

OVERRIDES = (
    Opt("", "trials", "trials", "value", help="trials per case and arm, for every spec", metavar="N"),
    Opt("", "adaptive", "adaptive", help="adaptive trials for specs with a fixed count: 3 to 30 per case and arm, "
        "stopping once each is surely above or below min_pass_rate (else 0.8); also SKILLMAKE_ADAPTIVE=1"),
    Opt("", "timeout", "timeout", "value", help="each trial's timeout", metavar="SECONDS"),
    Opt("", "model", "model", "value", help="the agent's model, for every spec", metavar="M"),
    Opt("", "judge-model", "judge_model", "value", help="the judges' model", metavar="M"),
    Opt("", "judge-provider", "judge_provider", "value", help="the judges' provider", metavar="P"),
    Opt("", "max-cost", "max_cost", "value", help="a spending cap in US dollars: refuse a run estimated over it, "
        "start no trial that would cross it (exit 6)", metavar="USD"),
    Opt("", "max-connections", "max_connections", "value", help="the most requests in flight to one provider and "
        "model (API agents and judges; default 32, shrunk on HTTP 429/529 and grown back)", metavar="N"),
)

OUTPUT = (
    Opt("j", "jobs", "jobs", "value", help="run N tasks at once, in threads (doit -n N -P thread)", metavar="N"),
    Opt("q", "quiet", "quiet", help="print only failures and the closing line"),
    Opt("v", "verbose", "verbose", "verbosity",
        help="a line for every task, up-to-date ones too, with the reason (`-v N` is doit's verbosity)"),
)

# caliper's `caliper run` flags, with caliper's meaning, so its users' command lines run as they are.
CALIPER = (
    Opt("", "k", "trials", "value", help="attempts per task: --trials N", metavar="N"),
    Opt("", "workers", "jobs", "value", help="parallel workers: -j N", metavar="N"),
    Opt("", "judge", "caliper_judge", "value",
        help="autorater (the default) or script: skillmake's way; autorater-sdk: --judge-provider anthropic; "
        "another word is the judge model", metavar="MODE|M"),
    Opt("", "baseline", "baseline", help="also run every case without the skill (a spec's `baseline: true`)"),
    Opt("", "output", "output", "value", help="also write this run's results (every report) as JSON to FILE",
        metavar="FILE"),
)
# caliper's judge modes, as this run's judge settings. `script` (a task's `assert:` as a check, its `expect:` with the
# judge, both must pass) is what skillmake always does, and so is `autorater` (the default); `autorater-sdk` is
# caliper's legacy name for judging with the Anthropic SDK.
JUDGE_MODES = {"autorater": {}, "script": {}, "autorater-sdk": {"judge_provider": "anthropic"}}

# clauditor's flags (`clauditor grade`'s), with clauditor's meaning and precedence: flag > CLAUDITOR_* > the spec's
# field > auto. The first four apply to clauditor specs (adapters/clauditor.py reads them); --no-api-key to every
# claude-code trial.
CLAUDITOR = (
    Opt("", "harness", "harness", "value", help="clauditor specs: the CLI that runs the skill "
        "(claude-code, codex, auto)", metavar="H"),
    Opt("", "transport", "transport", "value", help="clauditor specs: how the judge reaches Claude "
        "(api: the SDK, cli: the claude binary, auto)", metavar="T"),
    Opt("", "grading-provider", "grading_provider", "value", help="clauditor specs: the judge's provider "
        "(anthropic, openai, auto)", metavar="P"),
    Opt("", "sync-tasks", "sync_tasks", help="clauditor specs: Claude Code's background tasks run synchronously"),
    Opt("", "no-api-key", "no_api_key", help="claude-code trials authenticate with CLAUDE_CODE_OAUTH_TOKEN "
        "(a subscription), never an API key"),
)
CLAUDITOR_CHOICES = {"harness": ("claude-code", "codex", "auto"), "transport": ("api", "cli", "auto"),
                     "grading_provider": ("anthropic", "openai", "auto")}

CALIPER_EXPLAIN = tuple(o for o in CALIPER if o.long in ("k", "judge", "baseline"))  # what changes the plan

EXPLAIN = (Opt("", "format", "format", "value", help="text (default) or json, for tools", metavar="FORMAT"),)

_POSITIVE_INT = ("trials", "jobs", "max_connections")


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """What one command line asks for."""

    command: str  # "run", one of OWN_COMMANDS, or a doit command ("list", "info", …)
    root: str | None = None
    color: bool | None = None  # None: colour when writing to a terminal and NO_COLOR is unset
    help: bool = False
    version: bool = False
    remote: str | None = None  # --remote URL (cli.py sets SKILLMAKE_REMOTE)
    offline: bool = False  # --offline (cli.py sets SKILLMAKE_OFFLINE)
    executor: str | None = None  # --executor URL (cli.py sets SKILLMAKE_EXECUTOR; engine/cluster.py)
    batch: bool = False  # --batch (cli.py sets SKILLMAKE_BATCH; run/batch.py)
    args: tuple[str, ...] = ()  # an own command's arguments (validate, report, …), globals removed
    doit_args: tuple[str, ...] = ()  # what doit gets: [command] + its options + positional words
    targets: tuple[str, ...] = ()  # task names or patterns (run, explain)
    k: str | None = None
    tags: tuple[str, ...] = ()
    failed: bool = False
    resample: bool = False
    overrides: Mapping[str, str] = field(default_factory=dict)  # overrides.set_command_line's keys
    jobs: int | None = None
    quiet: bool = False
    verbose: int = 0
    format: str = "text"
    baseline: bool = False  # caliper's --baseline: every spec gets the without_skill arm for this run
    adaptive: bool = False  # --adaptive: specs with a fixed trial count run adaptively (overrides.apply)
    specs: tuple[str, ...] = ()  # --spec NAME: only these specs' cells
    shard: str | None = None  # --shard I/N (engine/shard.py; cli.py sets SKILLMAKE_SHARD)
    clauditor: Mapping[str, Any] = field(default_factory=dict)  # clauditor's flags: harness, transport, …
    no_api_key: bool = False  # clauditor's --no-api-key: claude-code trials get no API key
    output: str | None = None  # caliper's --output FILE: this run's reports, written there as one JSON file
    caliper_judge: str | None = None  # caliper's --judge MODE as given (its results file's run.judge_strategy)


def parse(argv: Sequence[str], *, doit_commands: Callable[[], Mapping[str, tuple[Opt, ...]]]) -> Invocation:
    """Split `argv` into skillmake's options and doit's; raise UsageError for anything unknown.

    `doit_commands()` gives doit's commands and their options (called only when the command is not ours,
    so `skillmake validate` never imports doit)."""
    values, rest = parse_options(list(argv), GLOBAL, keep_unknown=True)
    base: dict[str, Any] = {"root": values.get("root"), "help": bool(values.get("help")),
                            "version": bool(values.get("version")), "remote": values.get("remote"),
                            "executor": values.get("executor"), "offline": bool(values.get("offline")),
                            "batch": bool(values.get("batch")),
                            "color": True if values.get("color") else False if values.get("no_color") else None}
    if base["version"]:
        return Invocation(command="run", **base)
    word = rest[0] if rest and not rest[0].startswith("-") else None
    if word in OWN_COMMANDS and word != "explain":
        return Invocation(command=word, args=tuple(rest[1:]), **base)
    if word == "explain":
        values, positional = parse_options(rest[1:], SELECT + OVERRIDES + CALIPER_EXPLAIN + CLAUDITOR + EXPLAIN,
                                           command="explain")
        fmt = values.get("format", "text")
        if fmt not in ("text", "json"):
            raise UsageError(f"--format must be text or json, not {fmt!r}", hint=_usage("explain"))
        return Invocation(command="explain", targets=tuple(positional), format=str(fmt),
                          **_run_fields(values, command="explain"), **base)
    commands = doit_commands()
    if word is not None and word in commands and word != "run":
        values, positional = parse_options(rest[1:], commands[word], command=word)
        return Invocation(command=word, doit_args=(word, *values["doit"], *positional), targets=tuple(positional),
                          **base)
    words = rest[1:] if word == "run" else rest
    # caliper's flags before doit's: its `--output` is caliper's results file, doit's own is `-o`/`--output-file`.
    table = SELECT + OVERRIDES + OUTPUT + CALIPER + CLAUDITOR + tuple(commands.get("run", ()))
    values, positional = parse_options(words, table, command="run")
    fields = _run_fields(values)
    if word != "run" and positional[:1] == ["report"]:
        # `skillmake --adaptive report`: the report command, read with these settings (it runs nothing), not
        # doit's task group `report`, which would run every stale trial first.
        return Invocation(command="report", args=tuple(positional[1:]), **fields, **base)
    _check_task_word(positional[0] if positional and word != "run" else None, commands)
    doit = list(values["doit"])
    if fields["jobs"] is not None and not any(t in ("-n", "--process") or t.startswith("--process=") for t in doit):
        doit += ["-n", str(fields["jobs"])]
        if not any(t in ("-P", "--parallel-type") or t.startswith("--parallel-type=") for t in doit):
            doit += ["-P", "thread"]  # threads: the reporter and the trials share one process (design.md)
    return Invocation(command="run", doit_args=(*(["run"] if word == "run" else []), *doit, *positional),
                      targets=tuple(positional),
                      # doit's own levels mean the same to our reporter: -v 0 quiet, -v 2 verbose
                      quiet=bool(values.get("quiet")) or values.get("doit_verbosity") == "0",
                      verbose=int(str(values.get("verbose", 0))) or int(values.get("doit_verbosity") == "2"),
                      output=values.get("output"), **fields, **base)


TASK_GROUPS = ("validate", "trial", "grade", "trigger", "report", "thresholds")


def _check_task_word(word: str | None, commands: Mapping[str, Any]) -> None:
    """A first word that is no command, no task group and no task name (`skillmake valdiate`): one line with a
    did-you-mean, exit 3, where doit would print its raw "Invalid parameter"."""
    if word is None or word.startswith("-") or ":" in word or word in TASK_GROUPS or word in commands \
            or set(word) & set("*?["):
        return
    if word in OWN_COMMANDS:  # `skillmake --adaptive explain`: our commands read their own options after them
        raise UsageError(f"{word!r} is a command: it goes first, before the options",
                         hint=f"skillmake {word} [OPTIONS] (`skillmake {word} --help` lists them)")
    if word.endswith((".eval.yaml", ".eval.yml", ".eval.json")):  # `skillmake a.eval.yaml`, as `pytest test_a.py`
        from skillmake.spec.discovery import read_head

        name = read_head(word).name
        raise UsageError(f"{word!r} is a spec file, not a command or a task",
                         hint=f"`skillmake --spec {name}` runs it; `skillmake validate {word}` checks it")
    from skillmake.core.errors import did_you_mean

    close = did_you_mean(word, [*OWN_COMMANDS, *TASK_GROUPS, *commands])  # `tral`: 'trial', not doit's 'strace'
    raise UsageError(f"{word!r} is not a command or a task{close}",
                     hint="`skillmake help` lists the commands; `skillmake list --all` lists the tasks")


def _run_fields(values: dict[str, Any], *, command: str = "run") -> dict[str, Any]:
    """The run options both a run and `explain` take, checked; a bad one is a UsageError with `command`'s usage."""
    overrides = {o.dest: str(values[o.dest]) for o in OVERRIDES if o.dest in values and o.kind != "flag"}
    for name in _POSITIVE_INT:
        text = values.get(name)
        if text is not None and not (str(text).isdigit() and int(str(text)) > 0):
            shown = values.get(f"{name}_as") or f"--{name}"
            raise UsageError(f"{shown} needs a whole number above 0, not {text!r}", hint=_usage(command))
    judge = values.get("caliper_judge")
    if judge is not None:
        mode = str(judge).strip()
        if not mode:
            raise UsageError("--judge needs autorater, script, autorater-sdk or a judge model", hint=_usage(command))
        # Anything but a mode is a model (caliper's judge.model); --judge-model / --judge-provider, when given
        # too, say it more precisely and win.
        for name, value in JUDGE_MODES.get(mode, {"judge_model": mode}).items():
            overrides.setdefault(name, value)
    if "timeout" in overrides:
        try:
            ok = float(overrides["timeout"]) > 0
        except ValueError:
            ok = False
        if not ok:
            raise UsageError(f"--timeout needs a number of seconds above 0, not {overrides['timeout']!r}",
                             hint=_usage(command))
    jobs = int(str(values["jobs"])) if values.get("jobs") is not None else None
    if jobs is not None:
        overrides["jobs"] = str(jobs)
    tags = values.get("tags") or []
    assert isinstance(tags, list)
    clauditor: dict[str, Any] = {}
    for name, allowed in CLAUDITOR_CHOICES.items():
        given = values.get(name)
        if given is not None:
            if given not in allowed:
                raise UsageError(f"--{name.replace('_', '-')} must be {', '.join(allowed[:-1])} or {allowed[-1]}, "
                                 f"not {given!r}", hint=_usage(command))
            clauditor[name] = given
    if values.get("sync_tasks"):
        clauditor["sync_tasks"] = True
    shard = values.get("shard")
    if shard is not None:
        from skillmake.engine.shard import parse as parse_shard

        parse_shard(str(shard))  # a bad value is one line and exit 3, before anything loads
    return {"shard": shard, "k": values.get("k"), "tags": tuple(tags), "failed": bool(values.get("failed")),
            "resample": bool(values.get("resample")), "overrides": overrides, "jobs": jobs,
            "baseline": bool(values.get("baseline")), "specs": tuple(values.get("specs") or ()),
            "adaptive": bool(values.get("adaptive")),
            "clauditor": clauditor, "no_api_key": bool(values.get("no_api_key")),
            "caliper_judge": str(judge).strip() if judge is not None else None}


def parse_options(tokens: list[str], table: Sequence[Opt], *, keep_unknown: bool = False,
           command: str = "run") -> tuple[dict[str, Any], list[str]]:
    """getopt with options anywhere (gnu style): returns ({dest: value, "doit": [tokens]}, positional words).

    keep_unknown: leave what the table does not know in the positional list, untouched (the global pass)."""
    # The first entry wins: skillmake's options come before doit's in a run's table (`-v` alone is ours).
    longs: dict[str, Opt] = {}
    shorts: dict[str, Opt] = {}
    for o in table:
        if o.long:
            longs.setdefault(o.long, o)
        if o.short:
            shorts.setdefault(o.short, o)
    values: dict[str, Any] = {"doit": []}
    positional: list[str] = []
    i = 0

    def take(opt: Opt, value: str | None, shown: str) -> None:
        if opt.owner == "doit":
            doit = values["doit"]
            assert isinstance(doit, list)
            name = f"-{opt.short}" if opt.short else f"--{opt.long}"
            doit.extend([name] if value is None else ([name, value] if opt.short else [f"{name}={value}"]))
        elif opt.kind == "multi":
            values.setdefault(opt.dest, [])
            listed = values[opt.dest]
            assert isinstance(listed, list)
            listed.append(value)
        elif opt.kind == "verbosity":
            count = values.get(opt.dest, 0)
            values[opt.dest] = int(count) + 1 if isinstance(count, int) else 1
        else:
            values[opt.dest] = True if value is None else value
            if opt.dest in _POSITIVE_INT:
                values[f"{opt.dest}_as"] = shown.split("=", 1)[0]  # --k, --workers: errors name what was typed

    def need(opt: Opt, shown: str) -> str:
        nonlocal i
        if i + 1 >= len(tokens):
            raise UsageError(f"option {shown} needs a value" + (f" ({opt.metavar})" if opt.metavar else ""),
                             hint=_usage(command))
        i += 1
        return tokens[i]

    while i < len(tokens):
        token = tokens[i]
        if token == "--":
            positional.extend(tokens[i:] if keep_unknown else tokens[i + 1:])
            break
        if token.startswith("--") and len(token) > 2:
            name, eq, inline = token[2:].partition("=")
            opt = longs.get(name) or (None if keep_unknown else _prefix(name, longs, command))
            if opt is None:
                if keep_unknown:
                    positional.append(token)
                    i += 1
                    continue
                raise _unknown(token.split("=", 1)[0], table, command)
            if opt.kind == "verbosity" and opt.owner != "doit":
                if eq:
                    raise UsageError(f"option --{name} takes no value", hint=_usage(command))
                take(opt, None, token)
            elif opt.takes_value:
                take(opt, inline if eq else need(opt, token), token)
            elif eq:
                raise UsageError(f"option --{name} takes no value", hint=_usage(command))
            else:
                take(opt, None, token)
        elif token.startswith("-") and len(token) > 1:
            kept = ""
            j = 1
            while j < len(token):
                char = token[j]
                opt = shorts.get(char)
                if opt is None:
                    if keep_unknown:
                        kept += char
                        j += 1
                        continue
                    raise _unknown(f"-{char}", table, command)
                tail = token[j + 1:]
                if opt.kind == "verbosity":
                    # `-v 2` / `-v2`: doit's verbosity (how much task output it shows); a bare `-v`: ours.
                    doit_v = next((o for o in table if o.owner == "doit" and o.short == "v"), None)
                    if doit_v is not None and tail.isdigit():
                        take(doit_v, tail, "-v")
                        values["doit_verbosity"] = tail
                        break
                    if doit_v is not None and not tail and i + 1 < len(tokens) and tokens[i + 1].isdigit():
                        i += 1
                        take(doit_v, tokens[i], "-v")
                        values["doit_verbosity"] = tokens[i]
                        break
                    take(opt, None, "-v")
                    j += 1
                elif opt.takes_value:
                    take(opt, tail if tail else need(opt, f"-{char}"), f"-{char}")
                    break
                else:
                    take(opt, None, f"-{char}")
                    j += 1
            if kept:
                positional.append(f"-{kept}")
        else:
            positional.append(token)
        i += 1
    return values, positional


def _prefix(name: str, longs: Mapping[str, Opt], command: str) -> Opt | None:
    """A unique abbreviation of a long option, as getopt (and so doit) accepts: `--always` is --always-execute."""
    found = sorted(long for long in longs if long.startswith(name))
    if len(found) > 1:
        raise UsageError(f"option --{name} is ambiguous: {', '.join('--' + f for f in found)}", hint=_usage(command))
    return longs[found[0]] if found else None


def _unknown(option: str, table: Sequence[Opt], command: str) -> UsageError:
    known = [f"--{o.long}" for o in table if o.long] + [f"-{o.short}" for o in table if o.short]
    known += [f"--{o.long}" for o in GLOBAL]
    import difflib  # only for a mistyped option

    close = difflib.get_close_matches(option, known, n=1, cutoff=0.75)
    where = "" if command == "run" else f" for `skillmake {command}`"
    message = f"unknown option {option}{where}"
    word = option.lstrip("-")
    if word in OWN_COMMANDS and command == "run":  # an exact command name beats a near option (--watch, --batch)
        message += f"; did you mean `skillmake {word}` (a command, not an option)?"
    elif close:
        message += f"; did you mean {close[0]}?"
    elif word == "json":
        message += ("; did you mean --format json?" if command == "explain" else
                    "; for JSON: `skillmake explain --format json`, `skillmake validate --format json`, and each "
                    "spec's .skillmake/reports/<spec>/report.json after a run")
    return UsageError(message, hint=_usage(command))


def _usage(command: str) -> str:
    shown = "" if command == "run" else f" {command}"
    return f"usage: skillmake{shown} [OPTIONS]{' [TASK…]' if command in ('run', 'explain') else ' …'} " \
           f"(see `skillmake{shown} --help`)"


def doit_table(options: Sequence[tuple[str, str, bool, str]]) -> tuple[Opt, ...]:
    """doit's options of one command, (short, long, takes a value, help), as entries of our tables."""
    return tuple(Opt(short, long, long or short, "value" if valued else "flag", owner="doit", help=text)
                 for short, long, valued, text in options if short or long)


def help_table(groups: Sequence[tuple[str, Sequence[Opt]]]) -> str:
    """Option groups as `--help` shows them."""
    lines: list[str] = []
    for title, opts in groups:
        lines.append(f"{title}:")
        for o in opts:
            names = ", ".join(n for n in (f"-{o.short}" if o.short else "", f"--{o.long}" if o.long else "") if n)
            if o.takes_value:
                names += f" {o.metavar or 'VALUE'}"
            lines.append(f"  {names:<28} {o.help}")
    return "\n".join(lines)
