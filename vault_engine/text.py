"""Deterministic text helpers: titles, extractive summaries, one-off detection."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_ONE_OFF = re.compile(
    r"(?i)\b(not this time|just this once|only this time|this time only|for now only|"
    r"only for (?:now|this (?:task|session|run|once))|for this (?:task|session|run) only|"
    r"skip (?:it|this) (?:today|this time))\b"
)


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""


def clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (with an ellipsis)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0] or flat[: limit - 1]
    return cut.rstrip(" ,;:.-") + "…"


def make_title(text: str, limit: int = 80) -> str:
    """A title from the first line (markdown heading marks removed)."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return clip(first_sentence(line).rstrip("."), limit)
    return "Untitled memory"


def make_summary(text: str, limit: int = 240) -> str:
    """An extractive summary: the first sentence, clipped."""
    body = "\n".join(line.lstrip("#").strip() for line in text.splitlines())
    return clip(first_sentence(body), limit)


def is_one_off(text: str) -> str | None:
    """The phrase that marks ``text`` as a one-off instruction, or None."""
    match = _ONE_OFF.search(text)
    return match.group(0) if match else None
