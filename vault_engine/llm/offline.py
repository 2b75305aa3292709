"""The deterministic language model: no network, no model, the same answer every time.

- **sense**: a turn shifts the topic when few of its content words occurred
  in the buffer; load is the buffer's share of ``load_chars``.
- **digest**: the title is the first line that says something, the summary
  the first sentence of the first two turns, the trigger names the most
  frequent content words (speaker labels aside), and tags reuse the vault's
  existing tags that the text mentions as whole words, the most mentioned
  first (else its most frequent content word, else the ``kind``).
- **detail**: the first sentence of each paragraph or turn, 3 to 8 of them.
- **reflect**: rules on the inferred memories the evidence touches (explicit
  ones are never proposed for change): one ignored or overridden at least
  ``FORGET_AFTER`` times and never used successfully is ``forget``; one
  already superseded (a ``corrected`` or ``contributed-to-failure`` outcome
  did that) is ``noop``; the rest need nothing.  It never invents text, so
  it proposes no ``create`` or ``update``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import LlmUnavailable
from ..format.text import HEADING, STOPWORDS, TOOL_NOTE, UPDATE_MARKERS, clip, first_sentence, make_title
from ..patterns import lazy_pattern
from .base import Delta, Digest, Sense, Synthesis, Turn

_WORD = lazy_pattern(r"[A-Za-z][A-Za-z0-9_-]+")
_ROLES = r"(?:user|assistant|system|human|ai|tool)"
_SPEAKER = lazy_pattern(rf"^\s*{_ROLES}\s*:\s*", re.I)
_TURN_BREAK = lazy_pattern(rf"\n\s*\n|\n(?=\s*{_ROLES}\s*:)", re.I)
_TAG_SEPARATOR = lazy_pattern(r"[-_\s]+")
_SENTENCE = lazy_pattern(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
MIN_SHIFT_WORDS = 4  # a turn shorter than this never shifts the topic ("ok", "thanks!")
SHIFT_OVERLAP = 0.15  # share of a turn's content words seen in the buffer below which the topic shifted
FORGET_AFTER = 2  # ignored + overridden outcomes, with no success, after which an inferred memory is forgotten


# Conversational filler: frequent in chat, never what a conversation is about.
FILLER = frozenset("""
yeah yes yep hey hi hello cool get got gets getting really like just know think thanks thank wow great nice okay
sure lol haha gonna wanna well much lot lots good awesome amazing definitely totally also one thing things
something anything everything stuff maybe actually pretty kind sort way going want wanted need
""".split()) | UPDATE_MARKERS  # "Overview: now, port, database" said nothing with its "now"


def content_words(text: str, drop: frozenset[str] = frozenset()) -> list[str]:
    """Lower-case words of three or more letters that are not function words (nor in ``drop``), in order."""
    return [w for w in (m.lower() for m in _WORD.findall(text))
            if len(w) >= 3 and w not in STOPWORDS and w not in drop]


def names(text: str) -> set[str]:
    """Lower-cased words the text only ever writes capitalised (people, places): poor topics."""
    capital: set[str] = set()
    lower: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group(0)
        if word[0].islower():
            lower.add(word.lower())
        elif not word.isupper():  # Title case (an acronym such as CI is no name) where no sentence starts,
            # or a "Name:" speaker label
            before = text[max(0, match.start() - 8) : match.start()].rstrip(" \t")
            label = text.startswith(":", match.end()) and (not before or before.endswith("\n"))
            if label or (before and before[-1] not in ".!?:;\n\"'("):
                capital.add(word.lower())
    return capital - lower


_LABEL = lazy_pattern(r"^[ \t]*([A-Za-z][\w-]*)[ \t]*:", re.M)


def speakers(text: str) -> set[str]:
    """Lower-cased words that label a turn ("Alice:" opening a line): who spoke, in every episode."""
    return {m.group(1).lower() for m in _LABEL.finditer(text)}


def keywords(text: str, limit: int, names_last: bool = False) -> list[str]:
    """The most frequent content words (with ``names_last``, names after every other word; ties: first seen)."""
    words = content_words(text, FILLER)
    counts = Counter(words)
    first: dict[str, int] = {}
    for n, word in enumerate(words):
        first.setdefault(word, n)
    proper = names(text) if names_last else set()
    ranked = sorted(counts.items(), key=lambda kv: (kv[0] in proper, -kv[1], first[kv[0]]))
    return [w for w, _ in ranked[:limit]]


def _paragraphs(text: str) -> list[str]:
    """Paragraphs or turns, without their ``Role:`` labels."""
    # Markdown heading lines name a section; they are not prose to summarise.
    parts = (_SPEAKER.sub("", "\n".join(line for line in p.strip().splitlines() if not HEADING.match(line)))
             for p in _TURN_BREAK.split(text))
    return [p for p in parts if p.strip()]


def _mentions(tag: str, text: str) -> int:
    """How often ``text`` names ``tag`` as whole words (any case; ``-``, ``_`` and spaces alike)."""
    parts = [re.escape(p) for p in _TAG_SEPARATOR.split(tag.strip()) if p]
    if not parts:
        return 0
    return len(re.findall(r"(?<![\w-])" + r"[-_\s]+".join(parts) + r"(?![\w-])", text, re.I))


def _count(applied: Mapping[str, Any], outcome: str) -> int:
    value = applied.get(outcome, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class OfflineLlm:
    """:class:`~.base.Llm` without a model."""

    def __init__(self, load_chars: int = 6000):
        self.load_chars = load_chars

    @property
    def name(self) -> str:
        return "offline"

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        chars = sum(len(t.content) for t in buffer) + len(turn.content)
        load = min(1.0, chars / self.load_chars) if self.load_chars > 0 else 1.0
        words = set(content_words(turn.content))
        if not buffer or len(words) < MIN_SHIFT_WORDS:
            return Sense(False, load)
        seen = set(content_words(" ".join(t.content for t in buffer)))
        return Sense(len(words & seen) / len(words) < SHIFT_OVERLAP, load)

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        paragraphs = _paragraphs(text)
        body = "\n\n".join(paragraphs)  # without the speaker labels, which are not the subject
        heading = next((m.group(1) for m in map(HEADING.match, text.splitlines()) if m and m.group(1)), None)
        # Titled and summed up by what was said, not by the tool calls between (when anything was said).
        prose = [p for p in paragraphs if TOOL_NOTE.sub("", p).strip()] or paragraphs
        title = clip(heading, 80) if heading else (make_title(prose[0]) if prose else "Untitled")
        summary = clip(" ".join(first_sentence(p) for p in prose[:2]), 240) or title
        top = keywords(body, 3)
        subject = ", ".join(top[:-1]) + f" and {top[-1]}" if len(top) > 1 else (top[0] if top else "this")
        what = "the conversation about" if kind == "conversation" else "what the document says about"
        trigger = f"When I need {what} {subject}"
        counts: dict[str, tuple[str, int]] = {}
        for tag in existing_tags:  # one spelling per tag, the first given
            if tag.strip():
                counts.setdefault(tag.casefold(), (tag, _mentions(tag, body)))
        # A tag of the vault the text names is reused even when the text only writes it capitalised
        # ("in Terraform": a tool, not a person); only a speaker's name is left out, since every
        # episode of a conversation names its speakers.
        said_by = speakers(text)
        reused = sorted((c for c in counts.values() if c[1] and c[0].casefold() not in said_by),
                        key=lambda c: -c[1])  # ties: the vault's order
        # A new tag names a topic, not a person: names help find a conversation (the trigger keeps
        # them) but make poor tags, since every episode of a conversation mentions its speakers.
        topical = keywords(body, 1, names_last=True)
        tags = tuple(t for t, _ in reused[:3]) or (topical[0] if topical else kind,)
        return Digest(title=title, summary=summary, trigger=trigger, recall="active", tags=tags)

    def detail(self, text: str) -> str:
        paragraphs = [" ".join(p.split()) for p in _paragraphs(text)]
        sentences = [first_sentence(p) for p in paragraphs[:8]]
        if len(sentences) < 3:  # too few paragraphs: the first sentences of the text, in order
            sentences = [s for p in paragraphs for s in _SENTENCE.split(p) if s.strip()][:3]
        return " ".join(s.strip() for s in sentences if s.strip())

    def reflect(self, evidence: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]) -> list[Delta]:
        deltas: list[Delta] = []
        for memory in memories:
            if memory.get("authority") != "inferred":
                continue
            target = str(memory.get("id"))
            if memory.get("lifecycle") == "superseded":
                deltas.append(Delta("noop", target, reason="already superseded by a reported outcome"))
                continue
            raw = memory.get("applied")
            applied: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
            misses = _count(applied, "ignored") + _count(applied, "overridden")
            if misses >= FORGET_AFTER and _count(applied, "used-successfully") == 0:
                deltas.append(Delta("forget", target, reason=f"ignored or overridden {misses} times, "
                                    "never used successfully"))
        return deltas

    # Judgements need a model: offline there is no answer, and governance does nothing it would decide.

    def compress(self, text: str) -> str:
        raise LlmUnavailable("no language model: rules are not compressed offline")

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool:
        raise LlmUnavailable("no language model: dormancy is not judged offline")

    def stale(self, text: str) -> bool:
        raise LlmUnavailable("no language model: staleness is not judged offline")

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis:
        """An extractive overview: what the members share as the title, each member's first sentence."""
        texts = [f"{m.get('title', '')}\n{m.get('text', '')}" for m in members]
        shared = Counter(w for t in texts for w in dict.fromkeys(keywords(t, 12)))
        common = [w for w, n in shared.most_common() if n >= 2][:3] or keywords("\n".join(texts), 3)
        lines = []
        for member in members:
            title = str(member.get("title", "")).strip()
            body = " ".join(str(member.get("text", "")).split())
            sentence = clip(first_sentence(body) if body else "", 240)
            said = " ".join(sentence.rstrip(".!?").split()).casefold()
            named = " ".join(title.rstrip(".!?").split()).casefold()
            # A title made from the text is its first words: the sentence alone says it.
            own = sentence and said.startswith(named)
            lines.append(f"- {sentence}" if own else f"- {title}: {sentence}".rstrip(": "))
        title = clip(f"Overview: {', '.join(common)}" if common else "Overview", 120)
        return Synthesis(title=title, text="\n".join(lines))
