"""Run settings and where each value comes from: command line > environment > spec > project config > the default of
the tool whose format the spec was read from (caliper run's --k 3 and --timeout 120) > skillmake's default.

The settings: `trials`, `timeout`, `model` (the agent's), `judge_model`, `judge_provider` and `jobs`. The
environment names them SKILLMAKE_TRIALS, SKILLMAKE_TIMEOUT, SKILLMAKE_MODEL, SKILLMAKE_JUDGE_MODEL,
SKILLMAKE_JUDGE_PROVIDER and SKILLMAKE_JOBS (an empty value is unset). They are applied to the loaded specs, so
the keys follow: another model re-runs trials, another judge re-judges, more trials run only the new ones, and a
timeout changes no key.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from skillmake.core.errors import SkillmakeError
from skillmake.spec.config import Config
from skillmake.spec.model import WITHOUT_SKILL, Adaptive, Arm, JudgeConfig, Spec
from skillmake.spec.settings import infer_provider

BASELINE_VAR = "SKILLMAKE_BASELINE"  # caliper's --baseline for this run (the front end sets it; workers inherit it)


ADAPTIVE_VAR = "SKILLMAKE_ADAPTIVE"  # --adaptive: specs with a fixed trial count run adaptively (adaptive_of)


def adaptive_of(spec: Spec, trials: int, environ: Mapping[str, str] | None = None) -> Adaptive | None:
    """`--adaptive` for a spec with a fixed count: 3 to max(30, its trials) per case and arm, in batches of 3,
    decided against its min_pass_rate (0.8 when it sets none, or sets 0 or 1, which no sequence can clear)."""
    env = os.environ if environ is None else environ
    if env.get(ADAPTIVE_VAR, "").strip().lower() in ("", "0", "false", "no", "off"):  # as SKILLMAKE_BATCH reads
        return None
    rate = spec.thresholds.min_pass_rate
    most = max(30, trials)
    return Adaptive(least=3, most=most, decide=rate if rate is not None and 0 < rate < 1 else 0.8, batch=3)


def baseline_wanted(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(BASELINE_VAR, "").strip() not in ("", "0")

SETTINGS = ("trials", "timeout", "model", "judge_model", "judge_provider", "jobs", "max_cost", "max_connections")
ENV = {name: f"SKILLMAKE_{name.upper()}" for name in SETTINGS}
OPTIONS = {name: "--" + name.replace("_", "-") for name in SETTINGS}
# The command line's values, for worker processes started by spawn (they re-import this module).
_COMMAND_LINE_VAR = "SKILLMAKE_COMMAND_LINE_SETTINGS"
# The schemas' maxima (spec.schema.json, config.schema.json; docs/paths.md "Numbers"): a value past them hangs
# planning (10^20 trials) or overflows a deadline (1e300 s), from a flag as from a spec.
MAXIMA = {"trials": 1000, "jobs": 1024, "timeout": 86400, "max_cost": 1_000_000, "max_connections": 1024}
_command_line: dict[str, str] = {}

COMMAND_LINE, ENVIRONMENT, SPEC, PROJECT, DEFAULT = "command line", "environment", "spec", "project config", "default"
DEFAULTS: dict[str, Any] = {"trials": 1, "timeout": 300.0, "model": None, "judge_model": None,
                            "judge_provider": None, "jobs": 1, "max_cost": None, "max_connections": None}


_FORMAT_DEFAULT = "'s default"


def format_default(fmt: str) -> str:
    """The source of a value that is the default of the tool whose format a spec was read from: "caliper's default"."""
    return fmt + _FORMAT_DEFAULT


def format_defaults(fmt: str | None) -> Mapping[str, Any]:
    """The run defaults of the tool whose format a spec was read from (`Spec.format`; its adapter's `run_defaults`):
    what its own runner does when nobody says (caliper run: 3 attempts, 120 s each). A file in that format cannot
    write them, so they sit just above skillmake's defaults, below the project config; none for a native spec."""
    if fmt is None:
        return {}
    from skillmake.spec import adapters

    found: Mapping[str, Any] = getattr(adapters.adapter(fmt), "run_defaults", {})
    return found


class OverrideError(SkillmakeError):
    """A command-line or environment value that is not a valid setting."""

    exit_code = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """A setting's value and where it came from."""

    name: str
    value: Any
    source: str

    def line(self) -> str:
        if self.value is None:
            shown = "the provider's default" if self.name.startswith("judge_") else "the agent's default"
        else:
            shown = (f"{self.value:g}s" if self.name == "timeout" else f"${self.value:g}" if self.name == "max_cost"
                     else str(self.value))
        return f"{self.name}: {shown} ({self.source})"


def set_command_line(values: Mapping[str, str]) -> None:
    """The values given on skillmake's command line (--trials, --timeout, --model, --judge-model,
    --judge-provider, -j/--jobs): checked now, so a bad one is a usage error before anything loads."""
    unknown = set(values) - set(SETTINGS)
    if unknown:
        raise ValueError(f"not run settings: {', '.join(sorted(unknown))}")
    chosen = {k: str(v) for k, v in values.items() if v is not None and str(v).strip()}
    for name, raw in chosen.items():
        _parse(name, raw, OPTIONS[name])
    _command_line.clear()
    _command_line.update(chosen)
    if chosen:
        os.environ[_COMMAND_LINE_VAR] = json.dumps(chosen)
    else:
        os.environ.pop(_COMMAND_LINE_VAR, None)


def _given(environ: Mapping[str, str] | None) -> list[tuple[str, Mapping[str, str], Mapping[str, str]]]:
    """(source, values, how each is named in messages), highest precedence first."""
    env = os.environ if environ is None else environ
    line = dict(_command_line)
    if not line and env.get(_COMMAND_LINE_VAR):
        try:
            line = {k: str(v) for k, v in json.loads(env[_COMMAND_LINE_VAR]).items() if k in SETTINGS}
        except (ValueError, AttributeError):
            line = {}
    from_env = {name: env[var] for name, var in ENV.items() if env.get(var, "").strip()}
    return [(COMMAND_LINE, line, OPTIONS), (ENVIRONMENT, from_env, {k: f"${v}" for k, v in ENV.items()})]


def overridden(name: str, *, environ: Mapping[str, str] | None = None) -> Setting | None:
    """The command-line or environment value of setting `name`, if either gives one."""
    for source, values, labels in _given(environ):
        if name in values:
            return Setting(name=name, value=_parse(name, values[name], labels[name]), source=source)
    return None


def check(*, environ: Mapping[str, str] | None = None) -> None:
    """Raise OverrideError for the first command-line or environment value that is not a valid setting."""
    for name in SETTINGS:
        overridden(name, environ=environ)


def _parse(name: str, raw: str, label: str) -> Any:
    text = raw.strip()
    if name in ("trials", "jobs", "max_connections"):
        try:
            number = int(text)
        except ValueError:
            number = 0
        if number < 1 or number > MAXIMA[name]:
            raise OverrideError(f"{label} {raw!r} is not a whole number from 1 to {MAXIMA[name]}",
                                hint=f"give {name} as a count, like {label}{'=' if label.startswith('$') else ' '}3")
        return number
    if name == "timeout":
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not (0 < seconds <= MAXIMA[name]):  # NaN fails both comparisons
            raise OverrideError(f"{label} {raw!r} is not a number of seconds above 0 and at most {MAXIMA[name]}",
                                hint="give the timeout in seconds, like 120 or 2.5")
        return seconds
    if name == "max_cost":  # budget.py: the spending cap, in US dollars
        try:
            usd = float(text.removeprefix("$"))
        except ValueError:
            usd = math.nan
        if not (0 < usd <= MAXIMA[name]):
            raise OverrideError(f"{label} {raw!r} is not an amount of US dollars above 0 and at most {MAXIMA[name]}",
                                hint=f"give the cap in dollars, like {label}{'=' if label.startswith('$') else ' '}5 "
                                     "or 0.50")
        return usd
    return text


def resolve(name: str, *, spec: Any = None, project: Any = None, fmt: str | None = None,
            environ: Mapping[str, str] | None = None) -> Setting:
    """Setting `name`: command line, environment, the spec's own value, the project config's, the default of the
    tool whose format the spec was read from (`fmt`), skillmake's default."""
    given = overridden(name, environ=environ)
    if given is not None:
        return given
    layers = [(spec, SPEC), (project, PROJECT)]
    if fmt is not None:
        layers.append((format_defaults(fmt).get(name), format_default(fmt)))
    for value, source in layers:
        if value is not None:
            return Setting(name=name, value=value, source=source)
    return Setting(name=name, value=DEFAULTS[name], source=DEFAULT)


def jobs(config: Config, *, environ: Mapping[str, str] | None = None) -> Setting:
    """How many tasks run at once (doit's -n): command line, environment, project config, 1."""
    return resolve("jobs", project=config.jobs, environ=environ)


def spec_settings(spec: Spec, config: Config, *, declared: frozenset[str],
                  environ: Mapping[str, str] | None = None) -> dict[str, Setting]:
    """The run settings of `spec` as loaded (before `apply`). `declared`: the spec file's top-level keys (its
    `trials: 1` is the spec's value; no `trials:` at all leaves the project config's, then the defaults of the
    tool whose format the spec is in: a caliper file runs 3 trials of 120 s, as `caliper run` does)."""
    fmt = spec.format
    out = {
        "trials": resolve("trials", spec=spec.trials if "trials" in declared else None, project=config.trials,
                          fmt=fmt, environ=environ),
        "timeout": resolve("timeout", spec=spec.timeout if "timeout" in declared else None, project=config.timeout,
                           fmt=fmt, environ=environ),
        "model": resolve("model", spec=spec.agent.model, project=config.agent.get("model"), fmt=fmt,
                         environ=environ),
    }
    provider = resolve("judge_provider", spec=spec.judge.provider, project=config.judge.get("provider"), fmt=fmt,
                       environ=environ)
    model = resolve("judge_model", spec=spec.judge.model, project=config.judge.get("model"), fmt=fmt,
                    environ=environ)
    chosen = (COMMAND_LINE, ENVIRONMENT)
    # A judge model given for this run names its provider (gpt-* is OpenAI): it wins over a provider written down
    # for the old model. A provider given for this run drops a written model of another provider's family.
    inferred = infer_provider(model.value)
    if model.source in chosen and provider.source not in chosen and inferred and inferred != provider.value:
        provider = Setting(name="judge_provider", value=inferred, source=f"{model.source}, from the judge model")
    elif provider.source in chosen and model.source not in chosen and inferred not in (None, provider.value):
        model = Setting(name="judge_model", value=None, source=f"{provider.source}, from the judge provider")
    out["judge_provider"], out["judge_model"] = provider, model
    return out


def apply(spec: Spec, settings: Mapping[str, Setting], config: Config) -> Spec:
    """`spec` as this run sees it: the resolved settings, and the project config's agent defaults where the
    spec's agent leaves them unset. Arms that take the spec's own agent model (not a variant's) follow `model`."""
    base_model = spec.agent.model
    model = settings["model"].value
    # The rest of the table (kind, command, env, …) is the agent of specs that name none (spec.load_spec).
    defaults = {k: v for k, v in config.agent.items() if k in ("max_turns", "max_tokens", "budget_usd")}

    def agent_of(agent: Any) -> Any:
        changes = {k: v for k, v in defaults.items() if getattr(agent, k) is None}
        if agent.model == base_model:
            changes["model"] = model
        return replace(agent, **changes) if changes else agent

    timeout = settings["timeout"]
    cases = spec.cases
    if timeout.source in (COMMAND_LINE, ENVIRONMENT):  # beats the cases' own timeouts too: they are the spec's
        cases = tuple(replace(c, timeout=None) if c.timeout is not None else c for c in cases)
    judge = JudgeConfig(provider=settings["judge_provider"].value, model=settings["judge_model"].value,
                        pass_threshold=spec.judge.pass_threshold, temperature=spec.judge.temperature,
                        batch=spec.judge.batch)
    # A count given for this run (--trials 5) runs that many: it replaces an adaptive spec's {min, max, decide}.
    adaptive = None if settings["trials"].source in (COMMAND_LINE, ENVIRONMENT) else spec.adaptive
    trials = settings["trials"].value
    if adaptive is None and settings["trials"].source not in (COMMAND_LINE, ENVIRONMENT):
        adaptive = adaptive_of(spec, trials)
        trials = adaptive.most if adaptive is not None else trials
    return replace(spec, trials=trials, adaptive=adaptive, timeout=float(timeout.value), cases=cases,
                   agent=agent_of(spec.agent), arms=_arms(spec, agent_of),
                   judge=judge)


def describe(settings: Mapping[str, Setting], *, jobs_setting: Setting | None = None) -> list[str]:
    """One line per setting, for `skillmake explain`: `trials: 5 (command line)`."""
    lines = [settings[name].line() for name in SETTINGS if name in settings]
    if jobs_setting is not None:
        lines.append(jobs_setting.line())
    return lines


def format_default_lines(by_spec: Mapping[str, Mapping[str, Setting]]) -> list[str]:
    """The settings that specs take from their format's defaults, one line each, for `skillmake explain` (beside the
    command line's, which hold for every spec): `my-skill: trials: 3 (caliper's default)`."""
    return [f"{spec}: {setting.line()}" for spec, settings in sorted(by_spec.items())
            for name in SETTINGS if (setting := settings.get(name)) is not None
            and setting.source.endswith(_FORMAT_DEFAULT)]


def _arms(spec: Spec, agent_of: Any) -> tuple[Arm, ...]:
    arms = tuple(replace(a, agent=agent_of(a.agent)) for a in spec.arms)
    if baseline_wanted() and not any(a.name == WITHOUT_SKILL for a in arms):
        # The arm `baseline: true` adds (spec._build, right after with_skill): a --baseline run and a spec that
        # writes `baseline: true` share keys.
        arms = (*arms[:1], Arm(name=WITHOUT_SKILL, agent=agent_of(spec.agent), skill=False), *arms[1:])
    return arms
