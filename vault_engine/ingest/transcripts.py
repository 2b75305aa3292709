"""Transcripts: the turns of a conversation read from JSONL or plain text, and session names.

JSONL is one ``{"role", "content", "ts"?}`` object per line; a JSONL input
with one bad line is refused as a whole, before anything is buffered, so a
half-read file is never half ingested.  Plain text is split at speaker labels
(``user:``, ``assistant:`` ...), never inside a fenced code block.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..errors import InvalidInput
from ..format import chat_turns
from ..format.chat_turns import ALIASES
from ..format.redact import holds_secret
from ..format.text import is_one_off
from ..llm.base import Turn
from ..patterns import lazy_pattern

FORMATS = ("auto", "jsonl", "text")

_SESSION = lazy_pattern(r"[A-Za-z0-9._-]{1,64}")
_SPEAKER = lazy_pattern(r"^(user|assistant|system|tool|human|ai)[ \t]*:[ \t]*", re.I)
_FENCE = lazy_pattern(r"^[ \t]{0,3}(`{3,}|~{3,})")


# Words that open an instruction to the agent ("Skip the tests, just this once").
_IMPERATIVE = frozenset(
    "please don't dont do skip use run ignore leave make let's lets avoid try stop keep turn disable enable "
    "bypass push deploy commit merge drop write add remove delete answer reply go just no".split()
)
_ONE_OFF_MAX_CHARS = 300
# The occasion said first ("Today, use ...", "Just this once, skip ..."): the order follows it.
_OCCASION_LEAD = lazy_pattern(r"^\s*(?:(?:just\s+|only\s+)?(?:for\s+)?(?:today|now|this\s+(?:time|once))(?:\s+only)?|"
                            r"just\s+this\s+once)\s*,\s*", re.I)


def is_one_off_instruction(turn: Turn) -> bool:
    """A short user instruction for this occasion only ("Skip the tests, just this once"): left out.

    Only the person's own instructions qualify: a turn that tells something
    ("I went there just this once, and it changed my life") is conversation
    and is kept in full like every other turn.  The phrases are those that make
    ``memvault add`` refuse a text (:func:`~vault_engine.format.text.is_one_off`),
    the occasion first or last ("Today, use the staging database").
    """
    phrase = is_one_off(turn.content) if turn.role == "user" and len(turn.content) <= _ONE_OFF_MAX_CHARS else None
    if phrase is None:
        return False
    text = turn.content.strip()
    # The order comes first ("Skip the tests, just this once"), or right after the occasion, however it
    # is led in ("Today, use ...", "Not this time, skip ...", "Never mind, not this time: skip ...").
    after = text[text.casefold().find(phrase.casefold()) + len(phrase):]
    return any(_first_word(part) in _IMPERATIVE
               for part in (_OCCASION_LEAD.sub("", text, count=1), after.lstrip(" ,:;-\u2014")))


def _first_word(text: str) -> str:
    words = text.split(maxsplit=1)
    return words[0].strip(",.!:;\"'").casefold() if words else ""


def check_session(name: str) -> str:
    """``name`` if it is a usable session name (``[A-Za-z0-9._-]{1,64}``, not starting with a dot).

    Raises:
        InvalidInput: anything else (a session name never becomes a path of its own), or a name
            holding a secret (a file name never holds one).
    """
    if not isinstance(name, str) or not _SESSION.fullmatch(name) or name.startswith("."):
        raise InvalidInput(f"invalid session name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
                           "not starting with '.'")
    if holds_secret(name):
        raise InvalidInput("invalid session name: it looks like a secret (an API key or a token); name it otherwise")
    return name


def turn_from_record(record: Mapping[str, Any]) -> Turn | None:
    """A turn from ``{"role", "content", "ts"?}`` (other keys are ignored); None for empty content.

    Raises:
        InvalidInput: an unknown role, content that is not text, or a ``ts`` that is not a date-time.
    """
    role, content, ts = chat_turns.checked(record)
    if not content.strip():
        return None  # an empty turn (an assistant turn that only called a tool) says nothing
    return Turn(role, content, ts)


def parse_jsonl(text: str, source: str = "<stdin>") -> list[Turn]:
    """Turns from JSONL, one object per line; blank lines and empty contents are skipped.

    The whole input is checked before anything is returned: the first bad
    line raises, so a partly valid file is never partly ingested.

    Raises:
        InvalidInput: a bad line, with ``source`` and its line number.
    """
    turns: list[Turn] = []
    # Split at "\n" only: str.splitlines() would also cut at U+2028 inside a JSON string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"not valid JSON: {exc.msg}", path=source, line=number) from None
        except (ValueError, RecursionError):
            raise InvalidInput("not valid JSON: a value is too large or too deeply nested",
                               path=source, line=number) from None
        if not isinstance(record, dict):
            raise InvalidInput("each line must be a JSON object like {\"role\": \"user\", \"content\": \"...\"}",
                               path=source, line=number)
        try:
            turn = turn_from_record(record)
        except InvalidInput as exc:
            exc.path, exc.line = source, number
            raise
        if turn is not None:
            turns.append(turn)
    return turns


def _fence_after(fence: str | None, line: str) -> str | None:
    """The open code fence after ``line`` (None outside a fenced code block)."""
    marker = _FENCE.match(line)
    if marker is None:
        return fence
    mark = marker.group(1)
    if fence is None:
        return mark
    closes = mark[0] == fence[0] and len(mark) >= len(fence) and not line.lstrip()[len(mark):].strip()
    return None if closes else fence


def _has_speakers(lines: Sequence[str]) -> bool:
    fence: str | None = None
    for line in lines:
        if fence is None and _SPEAKER.match(line):
            return True
        fence = _fence_after(fence, line)
    return False


def _blocks(lines: Sequence[str]) -> Iterator[tuple[str | None, list[str]]]:
    """(speaker or None, lines): a block starts at a speaker line or, in text without speakers,
    after a blank line.  Lines inside a fenced code block never start one."""
    speakers = _has_speakers(lines)
    fence: str | None = None
    role: str | None = None
    current: list[str] = []
    for line in lines:
        if fence is None:
            match = _SPEAKER.match(line) if speakers else None
            if match:
                if current:
                    yield role, current
                role = ALIASES.get(match.group(1).lower(), match.group(1).lower())
                current = [line[match.end():]]
                fence = _fence_after(None, current[0])  # "User: ```python" opens a block of code
                continue
            if not speakers and not line.strip():
                if current:
                    yield None, current
                current = []
                continue
        current.append(line)
        fence = _fence_after(fence, line)
    if current:
        yield role, current


def parse_text(text: str) -> list[Turn]:
    """Turns from plain text.

    With speaker lines (``User: ...``, ``Assistant: ...``, also ``System:``,
    ``Tool:``, ``Human:``, ``AI:``) each one starts a turn that runs to the
    next (text before the first one is a user turn); without them, each
    non-empty paragraph is a user turn.  Blank lines at the edges of a turn
    are dropped, everything else (trailing spaces too) is kept; a fenced code
    block stays in one turn.  ``\\r\\n`` becomes ``\\n``.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    turns: list[Turn] = []
    for role, block in _blocks(lines):
        while block and not block[0].strip():
            block = block[1:]
        while block and not block[-1].strip():
            block = block[:-1]
        content = "\n".join(block)
        if content.strip():
            chat_turns.check_text(content)
            turns.append(Turn(role or "user", content))
    return turns


def parse_turns(text: str, *, source: str = "<stdin>", fmt: str = "auto") -> list[Turn]:
    """Turns from ``text``: JSONL when ``fmt`` says so, or (``auto``) when the first non-blank
    character is ``{`` or ``source`` ends with ``.jsonl``; plain text otherwise.

    Raises:
        InvalidInput: an unknown format, or a bad JSONL line (with its line number).
    """
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown input format {fmt!r}; expected one of {', '.join(FORMATS)}")
    text = text.removeprefix("\ufeff")
    if fmt == "auto":
        fmt = "jsonl" if source.endswith(".jsonl") or text.lstrip().startswith("{") else "text"
    return parse_jsonl(text, source) if fmt == "jsonl" else parse_text(text)


