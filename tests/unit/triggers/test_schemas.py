"""The optimiser's proposal record is stored under the digest of its inputs (its example files are checked against
their schemas with every other result file, in test_result_schemas.py)."""

from __future__ import annotations

import json
from pathlib import Path

from skillmake.core.canonical import digest_json

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "schemas"


def test_the_proposal_example_is_stored_under_the_digest_of_its_inputs() -> None:
    record = json.loads((EXAMPLES / "description-proposal" / "good" / "proposal.json").read_text())
    assert record["key"] == digest_json(record["inputs"])
