"""Asking the improver model for a new description, once per distinct request.

The improver is reached through the judges' providers (anthropic, openai, claude-code, codex: their retries and
budgets), chosen as a spec's judge is (judges/resolve.choose: --model for this command, $SKILLMAKE_JUDGE_MODEL,
judge.model/provider, the default). Each proposal is kept in the store's action cache under the sha256 of the
canonical JSON of everything the request is made from: key_version, the "describe" tag, the prompt's version, the
skill's name and SKILL.md text, the current description, the train results the prompt shows, the blinded history
of earlier attempts, the length limit, and the improver (provider, model; the CLI version for CLI providers;
judge.temperature when the spec sets one). A second run of the loop sees the same results, so it asks the same
requests and finds every proposal: no model call. Only proposals are cached; a call that gave none is asked again.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillmake.core.canonical import KEY_VERSION, digest_json
from skillmake.core.errors import RecordError
from skillmake.core.redact import redact_text
from skillmake.run.agents.base import Usage
from skillmake.run.judges.base import Endpoint, JudgeCallError, JudgeRequest, ProviderReply, ReplyError, add_usage
from skillmake.run.judges.resolve import Choice
from skillmake.spec.model import Spec
from skillmake.store.objects import Store
from skillmake.triggers import prompt

RECORD_SCHEMA = "description-proposal.schema.json"
RECORD_ID = "skillmake/description-proposal@1"
KIND = "describe"


@dataclass(frozen=True, slots=True, kw_only=True)
class Improver:
    """Who proposes descriptions: the resolved provider and model, and what else changes its answers."""

    choice: Choice
    temperature: float | None = None
    cli_version: str | None = None

    def config(self) -> dict[str, Any]:
        """The improver part of a proposal key (never a key or a URL)."""
        out: dict[str, Any] = {"provider": self.choice.provider, "model": self.choice.model,
                               "prompt": f"{prompt.NAME}@{prompt.PROMPT_VERSION}"}
        if self.choice.provider in ("claude-code", "codex"):
            out["cli_version"] = self.cli_version
        if self.temperature is not None:
            out["temperature"] = self.temperature
        return out


def improver_for(spec: Spec) -> Improver:
    """The spec's judge settings as the improver (the command's --model reaches it as --judge-model would)."""
    from skillmake.run.judges.resolve import choose

    choice = choose(spec)
    version = None
    if choice.provider == "claude-code":
        from skillmake.run.judges.claude_code_provider import version as claude_version

        version = claude_version()
    elif choice.provider == "codex":
        from skillmake.run.judges.codex_provider import version as codex_version

        version = codex_version()
    return Improver(choice=choice, temperature=spec.judge.temperature, cli_version=version)


def key_inputs(*, name: str, content: str, description: str, train: Sequence[Mapping[str, Any]],
               history: Sequence[Mapping[str, Any]], improver: Improver) -> dict[str, Any]:
    """Everything a proposal's request is rendered from (prompt.user_text reads only this), and its key's input.
    `train`: the current description's train results; `history`: every attempt so far, test scores removed."""
    return {"key_version": KEY_VERSION, "kind": KIND, "skill": {"name": name, "content": content},
            "description": description, "train": [_shown(r) for r in train],
            "history": [{"description": h["description"], "train_passed": h["train_passed"],
                         "train_total": h["train_total"], "results": [_shown(r) for r in h["results"]]}
                        for h in history],
            "limit": prompt.LIMIT, "improver": improver.config()}


def _shown(result: Mapping[str, Any]) -> dict[str, Any]:
    """What the prompt shows of one query's result (its id and rate are not shown, so they are not inputs)."""
    return {"query": result["query"], "should_trigger": result["should_trigger"], "triggers": result["triggers"],
            "runs": result["runs"], "pass": result["pass"]}


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """One proposal, stored or asked for now; `error` (and no description) when none could be had."""

    key: str
    description: str | None
    reused: bool = False
    calls: int = 0  # model calls the proposal took: made now, or saved when reused
    usage: Usage = field(default_factory=Usage)  # of the calls made now
    rewritten: bool = False  # the first answer was over the limit and the improver was asked once more
    truncated: bool = False  # still over the limit: cut to it
    error: str | None = None

    @property
    def made(self) -> int:
        return 0 if self.reused else self.calls

    @property
    def requests(self) -> int:
        return self.usage.requests or 0


def propose(store: Store, inputs: dict[str, Any], improver: Improver, *, run_id: str | None) -> Proposal:
    """The stored proposal of `inputs`, else a new one from the improver (stored when it gave one)."""
    key = digest_json(inputs)
    hit = lookup(store, key)
    if hit is not None:
        found = hit["proposal"]
        return Proposal(key=key, description=found["description"], reused=True, calls=hit["calls"],
                        rewritten=found["rewritten"], truncated=found["truncated"])
    from skillmake.run.judges.resolve import endpoint

    if improver.choice.error:
        return Proposal(key=key, description=None, error=improver.choice.error)
    target = endpoint(improver.choice)
    started = dt.datetime.now(dt.UTC)
    t0 = time.monotonic()
    first = prompt.request(inputs, temperature=improver.temperature)
    replies: list[dict[str, Any]] = []
    usage = Usage()
    try:
        answer, usage = _ask(first, target, usage, replies)
        rewritten = truncated = False
        if len(answer) > prompt.LIMIT:
            rewritten = True
            try:
                answer, usage = _ask(prompt.shorter(first, answer), target, usage, replies)
            except (JudgeCallError, ReplyError):
                pass  # keep the long answer: it is cut below, as a second over-long answer is
            if len(answer) > prompt.LIMIT:
                answer, truncated = prompt.cut(answer), True
    except JudgeCallError as err:
        usage = add_usage(usage, Usage(requests=err.requests or 0))
        calls = len(replies) + (1 if err.requests else 0)  # no request at all (no credentials): no call was made
        return _failed(key, f"the improver ({target.model}) failed: {err.message}", calls, usage, target)
    except ReplyError as err:
        return _failed(key, f"the improver ({target.model}) gave no usable description: {err}; it is asked again "
                            "on the next run (if this repeats, try another --model)", len(replies), usage, target)
    record = {"schema": RECORD_ID, "kind": "description-proposal", "key": key, "inputs": inputs,
              "proposal": {"description": answer, "rewritten": rewritten, "truncated": truncated,
                           "replies": replies},
              "calls": len(replies), "usage": usage.to_json(),
              "timing": {"started": started.isoformat(timespec="seconds"),
                         "duration_ms": round((time.monotonic() - t0) * 1000, 3)},
              "run_id": run_id}
    try:
        store.put_action(record, schema=RECORD_SCHEMA)
    except RecordError as exc:  # a bug: the record is built from checked values
        raise RecordError(f"cannot store the description proposal {key}: {exc.message}", hint=exc.hint) from None
    return Proposal(key=key, description=answer, calls=len(replies), usage=usage, rewritten=rewritten,
                    truncated=truncated)


def lookup(store: Store, key: str) -> dict[str, Any] | None:
    """The stored proposal record of `key`, or None (missing, invalid — quarantined by the store — or not this
    key's)."""
    record = store.get_action(key, schema=RECORD_SCHEMA)
    if record is None or digest_json(record["inputs"]) != key:
        return None
    return record


def _ask(request: JudgeRequest, target: Endpoint, usage: Usage, replies: list[dict[str, Any]]) -> tuple[str, Usage]:
    """One call: the description it proposes, and the usage so far (each call is counted in `replies`, even one
    whose answer cannot be read)."""
    reply = _complete(request, target)
    usage = add_usage(usage, reply.usage)
    entry: dict[str, Any] = {"text": reply.text, "description": None, "chars": None}
    replies.append(entry)
    answer = prompt.read(request, reply)
    entry.update(description=answer, chars=len(answer))
    return answer, usage


def _complete(request: JudgeRequest, target: Endpoint) -> ProviderReply:
    from skillmake.run.judges import anthropic_provider, claude_code_provider, codex_provider, openai_provider

    providers = {"anthropic": anthropic_provider.complete, "openai": openai_provider.complete,
                 "claude-code": claude_code_provider.complete, "codex": codex_provider.complete}
    return providers[target.provider](request, target)


def _failed(key: str, text: str, calls: int, usage: Usage, target: Endpoint) -> Proposal:
    return Proposal(key=key, description=None, calls=calls, usage=usage,
                    error=redact_text(text, target.secrets))
