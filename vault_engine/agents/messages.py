"""What memvault keeps of an agent's session: its messages, read from the agent's own transcript.

Each agent writes its session as JSONL in a format of its own (:mod:`.claude_code`,
:mod:`.codex`); both readers give the same :class:`Message` list:

- the person's words and the agent's answers, as text;
- a tool call condensed to one line (``[tool Bash: npm test]``); a tool's result is
  left out, unless it is long, when it is kept as a document through the
  ``remember-output`` path and the turn names it (:class:`ToolOutput`);
- the model's private reasoning, images, sub-agents' side conversations and the
  agent's own bookkeeping lines are left out.

Every message carries a ``key`` that stays the same when the transcript is read
again, longer or not: capture records the keys it has stored, so a message is
stored once however often a session is captured (:mod:`.capture`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..format.redact import redact

TOOL_INPUT_CHARS = 160  # a condensed tool call shows at most this much of its input
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024  # a transcript larger than this is refused, not read


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's result, as the transcript holds it."""

    tool: str  # the tool's name (``Bash``), or ``tool`` when the transcript does not say
    text: str
    error: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a session: who (``user``, ``assistant`` or ``tool``), what, when, and its key."""

    key: str
    role: str
    text: str
    ts: str | None = None
    outputs: tuple[ToolOutput, ...] = field(default=())  # results to keep when they are long
    group: str = ""  # consecutive messages of one group are one turn (an answer the agent wrote in parts)


@dataclass(frozen=True, slots=True)
class Transcript:
    """A session read from an agent's transcript file."""

    session: str | None  # the agent's session id, when the file says it
    cwd: str | None  # the folder the session ran in, when the file says it
    messages: list[Message]
    skipped: int = 0  # lines that could not be read (a torn last line, foreign JSON)


def jsonl_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(line number, object) of each non-blank line of ``path``; None for a line that is not a JSON object.

    Raises:
        OSError: the file cannot be read.
        ValueError: the file is larger than :data:`MAX_TRANSCRIPT_BYTES`.
    """
    size = path.stat().st_size
    if size > MAX_TRANSCRIPT_BYTES:
        raise ValueError(f"transcript is {size} bytes, more than the {MAX_TRANSCRIPT_BYTES} read")
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                yield number, None
                continue
            yield number, record if isinstance(record, dict) else None


def text_value(value: Any) -> str | None:
    """``value`` when it is a non-empty string (a field of a transcript line), else None."""
    return value if isinstance(value, str) and value else None


def condensed_call(name: str, arguments: Any) -> str:
    """A tool call in one line: ``[tool NAME: the most telling input]`` (a ``format.text.TOOL_NOTE``)."""
    shown = ""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            shown = arguments
    if isinstance(arguments, dict):
        for key in ("command", "cmd", "file_path", "path", "pattern", "query", "url", "description", "prompt"):
            value = arguments.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and value.strip():
                shown = value
                break
        else:
            shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True) if arguments else ""
    shown = " ".join(str(shown).replace("]", ")").split())  # one bracketed note, never two
    shown = redact(shown)  # before it is cut: a token cut in two is no longer recognised
    if len(shown) > TOOL_INPUT_CHARS:
        shown = shown[: TOOL_INPUT_CHARS - 1].rstrip() + "…"
    return f"[tool {name}: {shown}]" if shown else f"[tool {name}]"


def text_of(content: Any) -> str:
    """The text of a content value: a string, or a list of blocks whose text blocks are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(block.get("text", "")) for block in content
                 if isinstance(block, dict) and block.get("type") in ("text", "input_text", "output_text")]
        return "\n\n".join(p for p in parts if p.strip())
    return ""
