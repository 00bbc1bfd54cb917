"""One record per judged ordered pair in the store's action cache, keyed by what the judge saw and who judged.

The key is the sha256 of canonical JSON of: key_version, the kind tag "compare", the digests of the two outputs
in the order shown, the task text, and the judge's configuration (provider, resolved model, prompt version, the
shared rendering version; the CLI version for CLI judges; judge.temperature when the spec sets one). So:

- a rerun finds every verdict (no call); a new case adds only its own pairs' keys;
- swapping A and B on the command line asks for the same two ordered pairs the first run judged;
- arm names, skill versions, case ids and trial indexes are not inputs: two cells with the same outputs and
  task share a verdict, as trials and grades share records.

Only verdicts are cached; a call that gave none is asked again next time.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from skillmake.compare.comparator import NAME, PROMPT_VERSION, Verdict
from skillmake.core.canonical import KEY_VERSION, digest_json
from skillmake.core.errors import RecordError
from skillmake.run.agents.base import Usage
from skillmake.run.judges.render import RENDER_VERSION
from skillmake.run.judges.resolve import Choice
from skillmake.store.objects import Store

RECORD_SCHEMA = "comparison-record.schema.json"
RECORD_ID = "skillmake/comparison-record@1"
KIND = "compare"


def output_digest(trial_record: dict[str, Any]) -> str:
    """What of a trial the judge sees, as one digest: its output text and captured files (not stdout, stderr or
    the transcript, which the judge never reads)."""
    outputs = trial_record["outputs"]
    return digest_json({"output": outputs["output"], "files": outputs["files"]})


def judge_config(choice: Choice, *, temperature: float | None = None, cli_version: str | None = None
                 ) -> dict[str, Any]:
    """The judge part of a comparison key (never a key or a URL)."""
    config: dict[str, Any] = {"provider": choice.provider, "model": choice.model,
                              "prompt": f"{NAME}@{PROMPT_VERSION}", "render": RENDER_VERSION}
    if choice.provider in ("claude-code", "codex"):
        config["cli_version"] = cli_version
    if temperature is not None:  # only when set, as grade keys do
        config["temperature"] = temperature
    return config


def key_inputs(first: str, second: str, *, task: str, judge: dict[str, Any]) -> dict[str, Any]:
    """Everything the key covers, in the order the outputs are shown (first is Output 1)."""
    return {"key_version": KEY_VERSION, "kind": KIND, "outputs": [first, second], "task": task, "judge": judge}


def key_of(inputs: dict[str, Any]) -> str:
    return digest_json(inputs)


def lookup(store: Store, key: str) -> dict[str, Any] | None:
    """The stored record of `key`, or None (missing, invalid — quarantined by the store — or not this key's)."""
    record = store.get_action(key, schema=RECORD_SCHEMA)
    if record is None or key_of(record["inputs"]) != key:
        return None
    return record


def verdict_of(record: dict[str, Any]) -> Verdict:
    data = record["verdict"]
    return Verdict(winner=data["winner"], reasoning=data["reasoning"], rubric=data.get("rubric"),
                   output_quality=data.get("output_quality"))


def save(store: Store, inputs: dict[str, Any], verdict: Verdict, *, usage: Usage, started: dt.datetime,
         duration_ms: float, run_id: str | None) -> dict[str, Any]:
    """Write the record of one judged ordered pair (validated against its schema) and return it."""
    record = {"schema": RECORD_ID, "kind": "comparison", "key": key_of(inputs), "inputs": inputs,
              "verdict": verdict.to_json(), "usage": usage.to_json(),
              "timing": {"started": started.isoformat(timespec="seconds"), "duration_ms": round(duration_ms, 3)},
              "run_id": run_id}
    try:
        store.put_action(record, schema=RECORD_SCHEMA)
    except RecordError as exc:  # a bug: the verdict was read against the same bounds the schema states
        raise RecordError(f"cannot store the comparison {record['key']}: {exc.message}", hint=exc.hint) from None
    return record
