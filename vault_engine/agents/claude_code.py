"""Claude Code: its hook input and output, its transcript, and where its settings live.

**Hooks.** Claude Code runs a hook's command with one JSON object on stdin
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and the event's
own fields: ``source`` for SessionStart, ``prompt`` for UserPromptSubmit,
``trigger`` for PreCompact, ``reason`` for SessionEnd).  For SessionStart and
UserPromptSubmit, text to add to the model's context is answered as
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`` on
stdout with exit code 0; anything else memvault answers is nothing at all.

**Transcript.** ``~/.claude/projects/<folder>/<session id>.jsonl``: one JSON
object per line.  ``user`` and ``assistant`` lines carry ``message`` (``role``,
``content``: a string or a list of ``text``, ``thinking``, ``tool_use``,
``tool_result`` and ``image`` blocks), ``uuid``, ``timestamp``, ``sessionId``,
``cwd`` and ``isSidechain``; one assistant reply is written over several lines
that share ``message.id``.  Other line types (``summary``, ``system`` with its
``compact_boundary``, ``attachment`` with a hook's ``additionalContext``,
``file-history-snapshot`` ...) are the tool's bookkeeping.  Lines the tool writes
in the person's name are synthetic and left out: ``isCompactSummary`` (the
summary a compaction writes, "This session is being continued from a previous
conversation..."; older versions do not flag it, its opening words do),
``isMeta`` (caveats, a hook's context), ``isVisibleInTranscriptOnly``, and
``isSidechain`` (a sub-agent's side conversation); and the replies it writes in
the agent's name (``message.model`` ``<synthetic>``: "No response requested."
after a local command such as ``/compact``).  memvault's own MCP tools
(``mcp__memvault__memory_search`` ...) and what its hooks inject are left out
too (see :mod:`.messages`).  Each line's ``uuid`` is the key capture remembers:
``--fork-session`` and a resume that copies the history write the parent's lines
again, same ``uuid``, under the new session's id, and they are stored once.

**Settings.** Hooks go in ``~/.claude/settings.json`` (user) or
``<project>/.claude/settings.json`` (project); the MCP server in
``~/.claude.json`` (user) or ``<project>/.mcp.json`` (project), under ``mcpServers``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..patterns import lazy_pattern
from .adapter import CONTEXT_ACTIONS, HookInput, HookInputError, hook_specific_output  # noqa: F401 (HookInputError: re-exported)
from .messages import (
    Message,
    ToolOutput,
    Transcript,
    condensed_call,
    is_continuation,
    is_memvault_tool,
    jsonl_records,
    text_of,
    text_value,
    without_injected,
)

AGENT = "claude-code"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd")
CONTEXT_EVENTS = CONTEXT_ACTIONS  # the events whose answer the model reads
# Seconds Claude Code waits for each hook (capture may ask the model for episode digests); it gives
# SessionEnd hooks together 1.5 s unless one asks for more, 60 s at most.
TIMEOUTS = {"SessionStart": 30, "UserPromptSubmit": 15, "PreCompact": 120, "SessionEnd": 60}

# Text the tool itself puts in a user message: slash-command echoes, interruptions.
SYNTHETIC_MODEL = "<synthetic>"  # the model an assistant line names when Claude Code wrote it itself
_SYNTHETIC = ("isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")  # flags of lines it writes
_TOOL_TEXT = lazy_pattern(r"^\s*(?:<(?:command-name|command-message|command-args|local-command-stdout|"
                        r"local-command-stderr|system-reminder)>|\[Request interrupted by user)")


def parse(text: str, event: str) -> HookInput:
    """The input of ``event`` from stdin's ``text`` (Claude Code's events are memvault's actions)."""
    return HookInput.parse(text, event)


def answer(event: str, text: str) -> str:
    """What the hook prints for ``event``: the context to add as Claude Code reads it, or nothing."""
    return hook_specific_output(event, event, text)


# ---------------------------------------------------------------- the transcript


def read_transcript(path: Path) -> Transcript:
    """The messages of a Claude Code transcript (see the module docstring for what is kept).

    Raises:
        OSError: the file cannot be read.  ValueError: it is too large.
    """
    tools: dict[str, str] = {}  # tool_use id -> tool name
    messages: list[Message] = []
    session: str | None = None
    cwd: str | None = None
    skipped = 0
    for _number, record in jsonl_records(path):
        if record is None:
            skipped += 1
            continue
        kind = record.get("type")
        if kind not in ("user", "assistant"):
            continue
        session = session or text_value(record.get("sessionId"))
        cwd = cwd or text_value(record.get("cwd"))
        message = record.get("message")
        key = text_value(record.get("uuid"))
        if not isinstance(message, dict) or key is None:
            skipped += 1
            continue
        if any(record.get(flag) for flag in _SYNTHETIC):
            continue  # a sub-agent's side conversation, the tool's own notes, a compaction's summary
        ts = text_value(record.get("timestamp"))
        if kind == "assistant":
            found = _assistant(message, key, ts, tools)
        else:
            found = _user(message, key, ts, tools)
        if found is not None:
            messages.append(found)
    return Transcript(session, cwd, messages, skipped)


def _assistant(message: dict[str, Any], key: str, ts: str | None, tools: dict[str, str]) -> Message | None:
    if message.get("model") == SYNTHETIC_MODEL:
        return None  # the tool's own reply in the agent's name ("No response requested." after /compact)
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str) and block["text"].strip():
            parts.append(block["text"])
        elif block.get("type") == "tool_use":
            name = str(block.get("name") or "tool")
            if isinstance(block.get("id"), str):
                tools[block["id"]] = name
            if not is_memvault_tool(name):  # memvault's own calls: the vault is not its own source
                parts.append(condensed_call(name, block.get("input")))
        # thinking and redacted_thinking blocks: the model's private reasoning is not kept
    if not parts:
        return None
    group = message.get("id") if isinstance(message.get("id"), str) else ""
    return Message(key, "assistant", "\n\n".join(parts), ts, group=str(group))


def _user(message: dict[str, Any], key: str, ts: str | None, tools: dict[str, str]) -> Message | None:
    content = message.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    outputs: list[ToolOutput] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            if is_continuation(block["text"]):
                return None  # a compaction's summary, written as if the person had said it
            text = without_injected(block["text"])
            if text.strip() and not _TOOL_TEXT.match(text):
                texts.append(text)
        elif kind == "tool_result":
            name = tools.get(str(block.get("tool_use_id")), "tool")
            output = text_of(block.get("content"))
            if output.strip() and not is_memvault_tool(name):
                outputs.append(ToolOutput(name, output, bool(block.get("is_error"))))
        # image blocks: nothing to keep as text
    if texts:
        return Message(key, "user", "\n\n".join(texts), ts, tuple(outputs))
    if outputs:
        return Message(key, "tool", "", ts, tuple(outputs))
    return None


# ---------------------------------------------------------------- settings files


def settings_path(scope: str, home: Path, project: Path) -> Path:
    """Where the hooks are configured for ``scope`` (user or project)."""
    return home / ".claude" / "settings.json" if scope == "user" else project / ".claude" / "settings.json"


def mcp_path(scope: str, home: Path, project: Path) -> Path:
    """Where the MCP server is configured for ``scope`` (user or project)."""
    return home / ".claude.json" if scope == "user" else project / ".mcp.json"
