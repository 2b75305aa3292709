"""In-repo stand-ins for tests of logic: a language model that answers only what a test scripts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import LlmUnavailable
from .base import Delta, Digest, Sense, Synthesis, Turn


class UnusedLlm:
    """Every call fails the test; a subclass overrides the calls its test expects."""

    @property
    def name(self) -> str:
        return "fake"

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        raise AssertionError("sense was not expected")

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        raise AssertionError("digest was not expected")

    def detail(self, text: str) -> str:
        raise AssertionError("detail was not expected")

    def reflect(self, evidence: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]) -> list[Delta]:
        raise AssertionError("reflect was not expected")

    def compress(self, text: str) -> str:
        raise AssertionError("compress was not expected")

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool:
        raise AssertionError("dormant was not expected")

    def stale(self, text: str) -> bool:
        raise AssertionError("stale was not expected")

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis:
        raise AssertionError("synthesize was not expected")


class UnreachableLlm(UnusedLlm):
    """Every call fails as an unreachable model does (``LlmUnavailable``)."""

    def __init__(self, message: str = "the model timed out; retry later"):
        self.message = message

    @property
    def name(self) -> str:
        return "unreachable"

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        raise LlmUnavailable(self.message)

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        raise LlmUnavailable(self.message)

    def detail(self, text: str) -> str:
        raise LlmUnavailable(self.message)

    def reflect(self, evidence: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]) -> list[Delta]:
        raise LlmUnavailable(self.message)

    def compress(self, text: str) -> str:
        raise LlmUnavailable(self.message)

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool:
        raise LlmUnavailable(self.message)

    def stale(self, text: str) -> bool:
        raise LlmUnavailable(self.message)

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis:
        raise LlmUnavailable(self.message)
