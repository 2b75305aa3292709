"""The interface every language model implementation gives, and the values it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..format.kinds import RECALLS as RECALLS  # the recall kinds the digests choose from

DELTA_OPS = ("create", "update", "supersede", "forget", "noop")


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversation turn as ingested: who spoke, what was said (kept byte for byte), when."""

    role: str
    content: str
    ts: str | None = None


@dataclass(frozen=True, slots=True)
class Sense:
    """The sensor's reading of a buffer with one more turn: did the topic shift, how loaded is it (0..1)."""

    topic_shift: bool
    load: float


@dataclass(frozen=True, slots=True)
class Digest:
    """What a compacter writes about a span of text: the head of an episode or document memory.

    ``trigger`` is written from the agent's side ("When I need ...");
    ``recall`` is passive (always in context), active (found by search) or
    both; ``tags`` are 1-3, reusing the vault's existing tags where they fit.
    """

    title: str
    summary: str
    trigger: str
    recall: str
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Delta:
    """One learning step reflection proposes for the vault's inferred memories.

    ``op`` is one of :data:`DELTA_OPS`: ``create`` a new inferred memory
    (``title``, ``text``); ``update`` the ``target`` with a new ``text``;
    ``supersede`` or ``forget`` the ``target``; ``noop`` changes nothing.
    ``reason`` says why, in one sentence a person reads.
    """

    op: str
    target: str | None = None
    title: str = ""
    text: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "target": self.target, "title": self.title, "text": self.text, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Synthesis:
    """A higher-level memory over a cluster of related memories: a title and an overview text."""

    title: str
    text: str


class Llm(Protocol):
    """A language model as memvault uses it.  Every method may raise ``LlmUnavailable``."""

    @property
    def name(self) -> str:
        """``offline`` or ``anthropic:<model>``: recorded in the journal with what it wrote."""
        ...

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        """Whether ``turn`` shifts the topic of ``buffer``, and the load of buffer plus turn (cheap)."""
        ...

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        """Title, summary, trigger, recall mode and 1-3 tags for ``text`` (a conversation or a document part)."""
        ...

    def detail(self, text: str) -> str:
        """A detailed summary of ``text`` in 3-8 sentences."""
        ...

    def reflect(self, evidence: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]) -> list[Delta]:
        """Learning deltas from recent journal ``evidence`` (``kind``, ``memory``, ``payload``, ``ts``)
        about the ``memories`` it involves (``id``, ``title``, ``text``, ``authority``, ``lifecycle``,
        ``applied``)."""
        ...

    def compress(self, text: str) -> str:
        """A shorter text of the standing rule ``text`` that keeps every instruction it gives."""
        ...

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool:
        """Whether the standing rule ``text`` has gone dormant: nothing in ``recent_tasks`` needs it."""
        ...

    def stale(self, text: str) -> bool:
        """Whether the in-progress note ``text`` is stale: the work it tracks is over or abandoned."""
        ...

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis:
        """An overview of related memories (each ``id``, ``title``, ``text``): what they say together."""
        ...
