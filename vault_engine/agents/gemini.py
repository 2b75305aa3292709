"""Gemini CLI (``@google/gemini-cli``): its hooks and where its settings live.

As documented in gemini-cli's ``docs/hooks/reference.md`` (read for 0.2x-0.3x): hooks are set in
``settings.json`` (``~/.gemini/settings.json``, or ``<project>/.gemini/settings.json``) under
``hooks``, in Claude Code's shape (event -> groups -> ``{"type": "command", "command", "name",
"timeout"}``, the timeout in milliseconds).  The stdin is a snake_case object (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name``, ``timestamp``; ``source`` for SessionStart,
``prompt`` for BeforeAgent, ``trigger`` for PreCompress, ``reason`` for SessionEnd).  stdout must
hold JSON only (or nothing); context is answered as ``hookSpecificOutput.additionalContext``
(SessionStart: the first turn of the history, or prepended to the prompt in ``-p`` mode;
BeforeAgent: appended to this turn's prompt).

In ``-p`` mode (0.61) the SessionStart context is put before the prompt as
``<hook_context>CONTEXT</hook_context>`` (its ``<`` and ``>`` written ``&lt;`` and ``&gt;``), and
BeforeAgent is given that whole text as its ``prompt``: :func:`parse` takes those blocks off the
start, so that the prompt's memories are found for what the person asked, not for the manifest.

Wired: SessionStart (the manifest), BeforeAgent (the prompt's memories), PreCompress and SessionEnd
(the session's messages stored, :mod:`.captures`: the hook queues the capture and returns, a worker
stores it; SessionEnd closes the session).  Gemini CLI fires PreCompress before every turn, when it
checks whether to compress (0.61, ``ChatCompressionService.compress``), not only when it does: each
turn's start stores what came before it, each message once.  SessionEnd is not waited for.

**Transcript** (``transcript_path``: ``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``,
read from 0.61's ``chatRecordingService``): one JSON object a line.  The first is the session's
metadata (``sessionId``, ``projectHash``, ``startTime``, ``kind``); each message is a line
``{"id", "timestamp", "type", "content"}``, ``type`` ``user`` (``content``: parts, ``text`` or a
tool's ``functionResponse``; ``displayContent`` when what was sent differs from what was typed) or
``gemini`` (``content``: the answer's text, ``thoughts``, ``toolCalls`` with ``name``, ``args`` and
``result``), or ``info``/``error``/``warning`` (the CLI's notes, not read).  A message is written
again, same ``id``, when it changes (its tool calls are added after it): a user message is read as
first written, an answer as last written.  ``{"$set": {...}}`` lines update the metadata;
``$set.messages`` is the history Gemini CLI rebuilt (at start, on resume, after a compression: its
context ``<session_context>``, a compression's ``<state_snapshot>`` summary and the model's "Got it."
in reply, the kept turns under new ids) and is not read: every message said was written as a line of
its own first.  ``{"$rewindTo": id}`` undoes the messages from ``id`` on in the CLI; they were said,
and are kept.  ``--resume`` appends to the same file (same session id, same message ids), so the ids
are the keys capture remembers and a resumed session's messages are stored once.  Older versions
wrote one JSON object (``sessionId``, ``messages``); it is read the same way.

What is kept: the person's words without the ``<hook_context>`` blocks Gemini CLI wraps hooks'
context in (memvault's manifest and a prompt's memories, ``&lt;memory-context&gt;`` escaped, or
another hook's), the model's text (not its thoughts), other tools' calls condensed and their outputs;
not memvault's own tools (``mcp_memvault_memory_search`` ...) nor what they answered.

The MCP server goes in the same file, ``mcpServers.memvault`` (``command``, ``args``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..patterns import lazy_pattern
from .adapter import HookInput, action_of, hook_specific_output
from .messages import (
    Message,
    ToolOutput,
    Transcript,
    condensed_call,
    is_continuation,
    is_memvault_tool,
    jsonl_records,
    read_regular,
    text_value,
    without_injected,
)

AGENT = "gemini"
ACTIONS = {"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit", "PreCompress": "PreCompact",
           "SessionEnd": "SessionEnd"}
EVENTS = tuple(ACTIONS)
TIMEOUTS = {"SessionStart": 30_000, "BeforeAgent": 15_000, "PreCompress": 60_000, "SessionEnd": 60_000}  # ms
HOOK_CONTEXT = lazy_pattern(r"\A\s*<hook_context>.*?</hook_context>\s*", re.DOTALL)  # a hook's context, before
# anywhere (unclosed: to the end)
_HOOK_BLOCK = lazy_pattern(r"\s*<hook_context>.*?(?:</hook_context>|\Z)\s*", re.DOTALL)
_OWN_CONTEXT = lazy_pattern(r"\A\s*<(?:session_context|state_snapshot)>")  # the CLI's context, a compression's summary
_ACKNOWLEDGED = "Got it. Thanks for the additional context!"  # the model's reply to that, written by the CLI
_WORKSPACE = lazy_pattern(r"Workspace Directories:\*\*\n\s*- (.+)")  # in <session_context>: the session's folder


def parse(text: str, event: str) -> HookInput:
    """The common input of Gemini CLI's ``event``."""
    hook = HookInput.parse(text, event)
    return HookInput(action_of(ACTIONS, event), hook.session_id, hook.cwd, hook.transcript_path, hook.source,
                     own_prompt(hook.prompt))


def own_prompt(prompt: str | None) -> str | None:
    """``prompt`` without the hooks' context blocks that Gemini CLI put before it."""
    while prompt is not None and (match := HOOK_CONTEXT.match(prompt)) is not None:
        prompt = prompt[match.end():]
    return prompt


def answer(event: str, text: str) -> str:
    """``hookSpecificOutput.additionalContext`` for SessionStart and BeforeAgent; nothing otherwise."""
    return hook_specific_output(event, ACTIONS.get(event, ""), text)


def read_transcript(path: Path) -> Transcript:
    """The messages of a Gemini CLI chat file (see the module docstring for what is kept).

    Raises:
        OSError: the file cannot be read.  ValueError: it is too large or not a regular file.
    """
    records, skipped = _records(path)
    session: str | None = None
    cwd: str | None = None
    first: dict[str, dict[str, Any]] = {}  # id -> the message as first written (insertion order: the session's)
    last: dict[str, dict[str, Any]] = {}  # id -> as last written
    for record in records:
        update = record.get("$set")
        if isinstance(update, dict):
            session = session or text_value(update.get("sessionId"))
            cwd = cwd or _workspace(update.get("messages"))
            continue
        key = text_value(record.get("id"))
        if key is None:  # the metadata (or a $rewindTo, which undoes nothing here)
            session = session or text_value(record.get("sessionId"))
            folders = record.get("directories")
            cwd = cwd or (text_value(folders[0]) if isinstance(folders, list) and folders else None)
            continue
        first.setdefault(key, record)
        last[key] = record
    messages = [m for m in (_message(key, first[key], last[key]) for key in first) if m is not None]
    return Transcript(session, cwd, messages, skipped)


def _records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The file's objects and how many lines were not one; an older version's single object as its
    metadata followed by its messages."""
    records: list[dict[str, Any]] = []
    skipped = 0
    for number, record in jsonl_records(path):
        if record is None and number == 1:  # one JSON object over many lines: an older version's file
            try:
                whole = json.loads(read_regular(path).decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                whole = None
            if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
                return [whole, *(m for m in whole["messages"] if isinstance(m, dict))], 0
        if record is None:
            skipped += 1
        else:
            records.append(record)
    return records, skipped


def _workspace(messages: Any) -> str | None:
    """The session's folder, as the CLI's ``<session_context>`` names it first."""
    for message in messages if isinstance(messages, list) else []:
        for part in _parts(message.get("content") if isinstance(message, dict) else None):
            text = part.get("text")
            if isinstance(text, str) and text.startswith("<session_context>"):
                found = _WORKSPACE.search(text)
                return found.group(1).strip() if found else None
    return None


def _parts(content: Any) -> list[dict[str, Any]]:
    """A message's ``content`` as parts (a string is one text part)."""
    if isinstance(content, str):
        return [{"text": content}]
    return [part for part in content if isinstance(part, dict)] if isinstance(content, list) else []


def _texts(parts: list[dict[str, Any]]) -> str:
    """The text parts that are not thoughts, joined."""
    return "\n\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought")
                       and p["text"].strip())


def _message(key: str, first: dict[str, Any], last: dict[str, Any]) -> Message | None:
    ts = text_value(first.get("timestamp"))
    if first.get("type") == "user":
        return _user("gemini:" + key, first, ts)
    if last.get("type") == "gemini":
        return _answer("gemini:" + key, last, ts)
    return None  # info, error, warning: the CLI's own notes


def _user(key: str, record: dict[str, Any], ts: str | None) -> Message | None:
    shown = record.get("displayContent")
    text = _texts(_parts(shown if shown else record.get("content")))
    text = without_injected(_HOOK_BLOCK.sub("\n\n", text)).strip()
    if _OWN_CONTEXT.match(text) or is_continuation(text):
        text = ""
    outputs: list[ToolOutput] = []
    for part in _parts(record.get("content")):
        answered = part.get("functionResponse")
        if not isinstance(answered, dict):
            continue
        name = str(answered.get("name") or "tool")
        response = answered.get("response")
        output, error = _output(response)
        if output.strip() and not is_memvault_tool(name):  # memvault's answers are the vault's own memories
            outputs.append(ToolOutput(name, output, error))
    if text:
        return Message(key, "user", text, ts, tuple(outputs))
    return Message(key, "tool", "", ts, tuple(outputs)) if outputs else None


def _output(response: Any) -> tuple[str, bool]:
    """A ``functionResponse.response``'s text (``output``, else ``error``, else the object) and whether it failed."""
    if not isinstance(response, dict):
        return ("" if response is None else str(response)), False
    for field, error in (("output", False), ("error", True)):
        value = response.get(field)
        if isinstance(value, str):
            return value, error
    return (json.dumps(response, ensure_ascii=False, sort_keys=True) if response else ""), False


def _answer(key: str, record: dict[str, Any], ts: str | None) -> Message | None:
    content = _parts(record.get("content"))
    parts = [text] if (text := _texts(content)) and text.strip() != _ACKNOWLEDGED else []
    calls = record.get("toolCalls")
    if isinstance(calls, list) and calls:
        named = [(str(c.get("name") or "tool"), c.get("args")) for c in calls if isinstance(c, dict)]
    else:
        named = [(str(p["functionCall"].get("name") or "tool"), p["functionCall"].get("args"))
                 for p in content if isinstance(p.get("functionCall"), dict)]
    parts += [condensed_call(name, args) for name, args in named if not is_memvault_tool(name)]
    return Message(key, "assistant", "\n\n".join(parts), ts) if parts else None


def settings_path(scope: str, home: Path, project: Path) -> Path:
    """Where hooks and the MCP server are configured for ``scope``."""
    return (home if scope == "user" else project) / ".gemini" / "settings.json"
