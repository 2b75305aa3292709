"""What memvault keeps of an agent's session: its messages, read from the agent's own transcript.

Each agent writes its session as JSONL in a format of its own (:mod:`.claude_code`,
:mod:`.codex`, :mod:`.gemini`); the readers give the same :class:`Message` list:

- the person's words and the agent's answers, as text;
- a tool call condensed to one line (``[tool Bash: npm test]``); a tool's result is
  left out, unless it is long, when it is kept as a document through the
  ``remember-output`` path and the turn names it (:class:`ToolOutput`);
- the model's private reasoning, images, sub-agents' side conversations and the
  agent's own bookkeeping lines are left out;
- so is everything memvault itself put in the session: its own MCP tools' calls and
  answers (:func:`is_memvault_tool`; a ``memory_search`` answer copies other
  memories, and storing it again would make memvault remember its own echo), and
  the ``<memory-context>`` blocks its hooks inject (:func:`without_injected`);
- so is text the agent wrote in the person's name: a compaction's summary of the
  conversation so far (:func:`is_continuation`), system reminders.

Every message carries a ``key`` that stays the same when the transcript is read
again, longer or not, and when the agent copies it into another session (a fork,
a resume that copies the history): capture records the keys it has stored for the
whole vault, so a message is stored once however often, and in however many
sessions, it is captured (:mod:`.capture`, :mod:`.captured`).
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..format.redact import redact
from ..patterns import lazy_pattern

TOOL_INPUT_CHARS = 160  # a condensed tool call shows at most this much of its input
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024  # a transcript larger than this is refused, not read
TRANSCRIPT_SECONDS = 60  # a transcript not read within this is refused (a stalled network folder)
SERVER = "memvault"  # the name memvault's MCP server is installed under (see :mod:`.install`)

# How agents name an MCP server's tool to the model: Claude Code ``mcp__SERVER__TOOL``, Codex the same
# (``SERVER__TOOL`` before 2025's versions), Gemini CLI ``mcp_SERVER_TOOL``, and clients that write
# ``SERVER.TOOL`` or ``SERVER/TOOL``.
_MEMVAULT_TOOL = lazy_pattern(rf"^(?:(?:mcp__)?{SERVER}(?:__|[./])|mcp_{SERVER}_)\w+$")
# What memvault's hooks put in the model's context (the session-start manifest and a prompt's memories
# are both wrapped in it, see ``context.manifest.HEADER``), and the agent's own reminders around such text.
# An unclosed block runs to the end of the text: a truncated injection is still not the person's words.
_INJECTED_BLOCK = lazy_pattern(r"<(memory-context|system-reminder)>.*?(?:</\1>|\Z)\s*", re.S)
# How Claude Code opens the user message that carries a compaction's summary (older versions do not
# flag it ``isCompactSummary``), and Codex its hand-over after a compaction.
_CONTINUATION = lazy_pattern(r"^\s*(?:This session is being continued from a previous conversation|"
                           r"Another language model started to solve this problem)")


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


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading when it is a regular file (symlinks followed), else an error.

    The open does not block (``O_NONBLOCK``): a FIFO or a device given as a transcript path is
    refused after ``fstat`` of what was opened, not read, so a FIFO with no writer cannot hang the
    reader and ``/dev/zero`` (whose ``st_size`` is 0) cannot fill the memory.

    Raises:
        OSError: the file cannot be opened.  ValueError: it is not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")
            raise ValueError(f"transcript is {kind}, not a regular file; not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int = MAX_TRANSCRIPT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (read: at most ``limit + 1``,
    whatever ``st_size`` says); raises ValueError past the limit or when ``path`` is not regular."""
    with open_regular(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"transcript is larger than {limit:,} bytes; not read")
    return data


def jsonl_records(path: Path, *, clock: Callable[[], float] = time.monotonic
                  ) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(line number, object) of each non-blank line of ``path``; None for a line that is not a JSON object.

    Only a regular file is read (:func:`open_regular`), and at most :data:`MAX_TRANSCRIPT_BYTES` of it
    counted as read (never trusting ``st_size``), for at most :data:`TRANSCRIPT_SECONDS` (a file on a
    stalled network folder, a file that grows without end).

    Raises:
        OSError: the file cannot be read.
        ValueError: not a regular file, larger than :data:`MAX_TRANSCRIPT_BYTES`, or too slow to read.
    """
    deadline = clock() + TRANSCRIPT_SECONDS
    left = MAX_TRANSCRIPT_BYTES
    with open_regular(path) as handle:
        number = 0
        while True:
            raw = handle.readline(left + 1)
            if not raw:
                return
            number += 1
            left -= len(raw)
            if left < 0:
                raise ValueError(f"transcript is larger than {MAX_TRANSCRIPT_BYTES:,} bytes; not read")
            if clock() > deadline:
                raise ValueError(f"transcript took more than {TRANSCRIPT_SECONDS} seconds to read; not read")
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


def is_memvault_tool(name: str, server: str | None = None) -> bool:
    """Whether a tool call goes to memvault's own MCP server: its answers are the vault's memories."""
    return server == SERVER or bool(_MEMVAULT_TOOL.match(name))


def without_injected(text: str) -> str:
    """``text`` without the ``<memory-context>`` and ``<system-reminder>`` blocks an agent or memvault's
    hooks put in it (what is left is the person's or the agent's own words)."""
    if "<memory-context>" not in text and "<system-reminder>" not in text:
        return text
    return _INJECTED_BLOCK.sub("", text).strip()


def is_continuation(text: str) -> bool:
    """Whether ``text`` is an agent's summary of the conversation so far, written after a compaction."""
    return bool(_CONTINUATION.match(text))
