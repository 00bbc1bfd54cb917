"""eva's `eval.yml`, read unchanged: each case renders `prompt.xml` (the eval folder's prompt, the thing under
test) with its `inputs` / `inputs_from` variables into a native case prompt; `assert` ops become checks, `rubric`
and `judge` the rubric judge. docs/formats.md#eva-evalyml maps every field."""

from __future__ import annotations

import os
import re
from typing import Any

from skillmake.core.errors import Location, SpecError, SpecErrors
from skillmake.core.paths import spec_file_problem
from skillmake.spec.adapters import Translation
from skillmake.spec.adapters.detect import seed_spec_name
from skillmake.spec.config import load_config
from skillmake.spec.model import Spec
from skillmake.spec.source import Source, read_source

PROMPT_FILE = "prompt.xml"
EVAL_FILES = ("eval.yml", "eval.yaml")
INPUTS_FILE = "inputs.yml"
# eva sends the rendered prompt to the `claude` CLI (`_claude(rendered, model, timeout)`); a project names another
# agent in its config (`[tool.skillmake] agent = {kind = "command", command = [...]}`).
DEFAULT_AGENT = "claude-code"
# `{{ name }}` in prompt.xml is replaced by the case's variable `name`.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")
# eva assert op → (native check type, the native key its value goes to)
OPS: dict[str, tuple[str, str]] = {
    "contains": ("contains", "needle"), "not_contains": ("not_contains", "needle"),
    "contains_any": ("contains_any", "needles"), "contains_all": ("contains_all", "needles"),
    "matches": ("matches", "pattern"), "not_matches": ("not_matches", "pattern"),
    "min_tokens": ("min_tokens", "count"), "max_tokens": ("max_tokens", "count"),
}


def placeholders(template: str) -> set[str]:
    """The variable names a prompt template uses (`{{ name }}`)."""
    return {m.group(1) for m in PLACEHOLDER.finditer(template)}


def render(template: str, variables: dict[str, Any]) -> str:
    """eva's rendering: each `{{ name }}` replaced by the variable's text (one not given is left as written)."""
    return PLACEHOLDER.sub(lambda m: _text(variables.get(m.group(1), m.group(0))), template)


def case_inputs(src: Source, *, path: str, root: str) -> list[dict[str, Any] | None]:
    """Each case's variables (its inputs_from file's, then its inline inputs over them), as a native spec's
    `inputs` keeps them (`skillmake import`): the prompt is rendered from prompt.xml when the spec is loaded."""
    translator = _Translator(src, path=path, root=root)
    return [translator._variables(f"/cases/{i}", raw) for i, raw in enumerate(src.data["cases"])]


def is_eva_spec(spec: Spec) -> bool:
    """Whether a loaded spec is an eva eval: an `eval.yml` whose thing under test is the prompt.xml beside it
    (what this adapter makes; a native spec names a SKILL.md folder or a command .md). Results read this to
    write eva's own files (the `.eval.jsonl` history) for eva's evals only."""
    if os.path.basename(spec.path) not in EVAL_FILES or spec.skill.kind != "prompt":
        return False
    beside = os.path.join(os.path.dirname(spec.path), PROMPT_FILE)
    return os.path.realpath(spec.skill.path) == os.path.realpath(beside)


class EvaAdapter:
    format = "eva"
    schema = "eva.schema.json"

    def translate(self, src: Source, *, path: str, root: str) -> Translation:
        return _Translator(src, path=path, root=root).run()


ADAPTER = EvaAdapter()


class _Translator:
    """One eval.yml → native spec data, its origin map and notes; every problem collected, raised once."""

    def __init__(self, src: Source, *, path: str, root: str) -> None:
        self.src = src
        self.seed: dict[str, Any] = src.data
        self.path = path
        self.folder = os.path.dirname(path)
        self.root = root
        self.errors: list[SpecError] = []
        self.origin: dict[str, str] = {}
        self.notes: list[str] = []

    def error(self, pointer: str, message: str, hint: str, *, key: bool = False) -> None:
        self.errors.append(SpecError(message, loc=self.src.locate(pointer, key=key), hint=hint))

    def run(self) -> Translation:
        template = self._template()
        defaults: dict[str, Any] = self.seed.get("defaults", {})
        data: dict[str, Any] = {}
        name = seed_spec_name("eva", self.path)
        if name is not None:
            data["name"] = name
        data["skill"] = PROMPT_FILE
        data["agent"] = self._agent(defaults)
        if "timeout_s" in defaults:
            data["timeout"] = defaults["timeout_s"]
            self.origin["/timeout"] = "/defaults/timeout_s"
        triggers = self._triggers()
        if triggers:
            data["trigger_tests"] = triggers
        data["cases"] = [self._case(i, raw, template) for i, raw in enumerate(self.seed["cases"])]
        self.origin["/cases"] = "/cases"
        if self.errors:
            raise SpecErrors(self.errors)
        return Translation(data=data, origin=self.origin, notes=tuple(self.notes))

    # --- the prompt and the agent ---------------------------------------------

    def _template(self) -> str | None:
        prompt = os.path.join(self.folder, PROMPT_FILE)
        shown = os.path.relpath(prompt, self.root)
        try:
            with open(prompt, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            self.error("", f"eva's prompt file {PROMPT_FILE} is missing (looked at {shown})",
                       f"eva renders {PROMPT_FILE}, beside eval.yml, for every case: create it there")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
            self.error("", f"cannot read eva's prompt file {shown}: {why}", "save it as UTF-8 text")
        return None

    def _agent(self, defaults: dict[str, Any]) -> dict[str, Any]:
        # The project's agent as spec.load_spec lends it to specs naming none, with eva's own model on top
        # (a spec's model wins over the project's).
        configured = load_config(self.root).agent
        agent: dict[str, Any] = dict(configured) if "kind" in configured else {"kind": DEFAULT_AGENT}
        self.origin["/agent"] = ""
        if "model" in defaults:
            agent["model"] = defaults["model"]
            self.origin["/agent/model"] = "/defaults/model"
        return agent

    def _triggers(self) -> dict[str, list[str]]:
        block = self.seed.get("triggering")
        if block is None:
            return {}
        out = {k: v for k, v in block.items() if k in ("should_trigger", "should_not_trigger")
               and isinstance(v, list) and all(isinstance(q, str) for q in v)}
        for key in out:
            self.origin[f"/trigger_tests/{key}"] = f"/triggering/{key}"
        rest = sorted(set(block) - set(out))
        if rest:
            self.notes.append(f"triggering: {', '.join(rest)} not read (skillmake takes should_trigger and "
                              f"should_not_trigger lists of queries)")
        return out

    # --- cases ------------------------------------------------------------------

    def _case(self, i: int, raw: dict[str, Any], template: str | None) -> dict[str, Any]:
        base = f"/cases/{i}"
        case: dict[str, Any] = {"id": raw["name"]}
        self.origin[f"{base}/id"] = f"{base}/name"
        variables = self._variables(base, raw)
        if template is not None and variables is not None:
            case["prompt"] = self._render(base, raw, template, variables)
            self.origin[f"{base}/prompt"] = f"{base}/inputs" if "inputs" in raw else f"{base}/inputs_from"
        checks = [self._check(f"{base}/assert/{j}", f"{base}/checks/{j}", item)
                  for j, item in enumerate(raw.get("assert", []))]
        if checks:
            case["checks"] = checks
            self.origin[f"{base}/checks"] = f"{base}/assert"
        if "rubric" in raw:
            case["rubric"] = raw["rubric"]
        model = raw.get("judge", {}).get("model")
        if model is not None:  # eva judges each case with its own model; so does skillmake (Case.judge_model)
            case["judge"] = {"model": model}
            self.origin[f"{base}/judge/model"] = f"{base}/judge/model"
        threshold = raw.get("judge", {}).get("pass_threshold")
        if threshold is not None:
            case["pass_threshold"] = threshold
            self.origin[f"{base}/pass_threshold"] = f"{base}/judge/pass_threshold"
        return case

    def _check(self, seed: str, native: str, item: dict[str, Any]) -> dict[str, Any]:
        (op, value), = item.items()  # the seed schema allows exactly one op per item
        self.origin[native] = seed
        if op == "json_schema":
            key = "schema_file" if isinstance(value, str) else "schema"
            self.origin[f"{native}/{key}"] = f"{seed}/{op}"
            return {"type": "json_schema", key: value}
        kind, key = OPS[op]
        self.origin[f"{native}/{key}"] = f"{seed}/{op}"
        return {"type": kind, key: value}

    def _variables(self, base: str, raw: dict[str, Any]) -> dict[str, Any] | None:
        """The case's variables: its inputs_from folder's inputs.yml, then its inline inputs over them."""
        variables: dict[str, Any] = {}
        if "inputs_from" in raw:
            loaded = self._inputs_file(f"{base}/inputs_from", raw["inputs_from"])
            if loaded is None:
                return None
            variables.update(loaded)
        variables.update(raw.get("inputs", {}))
        return variables

    def _inputs_file(self, pointer: str, rel: str) -> dict[str, Any] | None:
        """eva's two-place lookup: <root>/<inputs_from>/inputs.yml first, then <prompt dir>/<inputs_from>/…"""
        if os.path.isabs(os.path.expanduser(rel)):
            self.error(pointer, f"absolute inputs_from {rel!r}",
                       "write a folder relative to the project root or to the eval's folder")
            return None
        places = [os.path.normpath(os.path.join(top, rel, INPUTS_FILE)) for top in (self.root, self.folder)]
        found = next((p for p in places if os.path.isfile(p)), None)
        if found is None:
            looked = " and ".join(os.path.relpath(p, self.root) for p in dict.fromkeys(places))
            self.error(pointer, f"inputs_from {rel!r} has no {INPUTS_FILE} (looked at {looked})",
                       f"create {INPUTS_FILE} in that folder, relative to the project root or to the eval's folder")
            return None
        problem = spec_file_problem(os.path.realpath(found), root=self.root)
        if problem:
            self.error(pointer, f"inputs_from {rel!r}: {os.path.relpath(found, self.root)} {problem}",
                       "keep the inputs folder inside the project")
            return None
        shown = os.path.relpath(found, self.root)
        try:
            inputs = read_source(found)
        except SpecError as exc:
            loc = exc.loc and Location(path=shown, line=exc.loc.line, col=exc.loc.col, pointer=exc.loc.pointer)
            self.errors.append(SpecError(exc.message, loc=loc, hint=exc.hint))
            return None
        except OSError as exc:
            self.error(pointer, f"cannot read {shown}: {exc.strerror}", "check the file and its permissions")
            return None
        inputs.path = shown
        if not isinstance(inputs.data, dict):
            self.errors.append(SpecError(f"{INPUTS_FILE} must be a mapping of variable names to values",
                                         loc=inputs.locate(""), hint="write one `name: value` line per variable"))
            return None
        bad = [k for k, v in inputs.data.items() if not isinstance(v, (str, int, float, bool))]
        for k in bad:
            self.errors.append(SpecError(f"variable {k!r} is not a string, number or boolean",
                                         loc=inputs.locate(f"/{k}"), hint="write the value as text"))
        return None if bad else dict(inputs.data)

    def _render(self, base: str, raw: dict[str, Any], template: str, variables: dict[str, Any]) -> str:
        missing = sorted({m.group(1) for m in PLACEHOLDER.finditer(template)} - set(variables))
        if missing:
            where = f"{base}/inputs" if "inputs" in raw else f"{base}/inputs_from"
            names = ", ".join(f"{{{{{n}}}}}" for n in missing)
            self.error(where, f"{PROMPT_FILE} uses {names}, which case {raw['name']!r} does not give",
                       f"add {', '.join(missing)} to the case's inputs (or to its {INPUTS_FILE})", key=True)
        return render(template, variables)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
