"""The loopback fake model API the test suite points every client and CLI at (see server.py for the rules)."""

from __future__ import annotations

from .activation import Activate
from .recorded import Recorded
from .reply import Reply
from .server import FAKE_KEY, MODEL_PATHS, FakeAPI

__all__ = ["FAKE_KEY", "MODEL_PATHS", "Activate", "FakeAPI", "Recorded", "Reply"]
