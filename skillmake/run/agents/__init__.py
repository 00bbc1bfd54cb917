"""Agents: what executes a trial. One module per kind; SDKs and CLIs are imported inside them."""

from __future__ import annotations

from skillmake.run.agents.base import Agent, AgentResult, TrialRequest, Usage, get_agent

__all__ = ["Agent", "AgentResult", "TrialRequest", "Usage", "get_agent"]
