"""Codex CLI: its hooks, its session files, and where its hooks and MCP servers are configured.

**Hooks** (as documented for ``@openai/codex`` 0.16x-0.171, developers.openai.com/codex/hooks and
the generated schemas in ``codex-rs/hooks/schema/generated``): enabled by default
(``[features] hooks``); configured in ``hooks.json`` next to a config layer
(``$CODEX_HOME/hooks.json``, ``<repo>/.codex/hooks.json``; the project layer only when the
project is trusted) in Claude Code's shape: event -> groups -> ``{"type": "command",
"command", "timeout"}``.  The stdin is Claude Code's snake_case object (``session_id``,
``transcript_path`` (the rollout file, may be null), ``cwd``, ``hook_event_name``, ``model``;
``source`` for SessionStart, ``prompt`` for UserPromptSubmit, ``trigger`` for PreCompact,
``reason`` for SessionEnd), and context is answered as
``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``.  memvault is wired for
SessionStart, UserPromptSubmit, PreCompact and SessionEnd, which are its four actions by the
same names (Stop, run after every turn, is not used: capture waits for compaction or the end).
A hook that is not managed by an administrator runs only once the person has trusted it
(``/hooks`` in the TUI; Codex keeps a hash of each trusted definition), so a fresh install
stays silent until then; ``codex exec --dangerously-bypass-hook-trust`` runs them unreviewed
for one invocation.

**Session files** (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): one JSON object a
line, ``{"timestamp", "type", "payload"}``.  The first is ``session_meta`` (the
session's ``id`` and ``cwd``); ``response_item`` lines carry the conversation:
``message`` (``role`` user, assistant or developer; ``content`` blocks of
``input_text``/``output_text``), ``function_call``/``custom_tool_call`` (a tool
call) and their ``..._output``, and ``reasoning`` (private, not kept).  The
``event_msg`` and ``turn_context`` lines repeat or describe them and are not read.
User messages that Codex writes itself (``<environment_context>``,
``<user_instructions>``, the project's ``AGENTS.md``) and developer messages are
not the person's words and are left out.  Older files (until 2025) have a bare
``{"id", "timestamp", "instructions"}`` first line and bare items after it; they
are read the same way.  Lines carry no ids: a line's key is a digest of the
line, so reading a grown file again finds the same keys, and so does a fork
that copies the parent's lines.  A ``compacted`` line (a compaction's summary
and the history it replaces) is the tool's own and is not read; neither is the
hand-over message a compaction writes in the person's name.  memvault's own MCP
tools (function calls named ``mcp__memvault__memory_search``, ``memvault__...``
in older versions) and their outputs, and what memvault's hooks inject, are left
out (see :mod:`.messages`).

**Config**: ``$CODEX_HOME/config.toml`` (``~/.codex``), or ``<repo>/.codex/config.toml``, the
server as a ``[mcp_servers.memvault]`` table with ``command`` and ``args``, plus
``startup_timeout_sec``: Codex waits up to 10 s by default for a server's first answer, and the first
start of ``memvault mcp`` on a busy machine may take longer.  The server is not marked ``required``:
Codex then refuses to start a session at all when the server cannot start (a vault whose config a
person broke), and memvault never stands in the agent's way (tests/e2e/test_codex.py).  But Codex
(since 0.147) waits for a server that is not required only ``mcp_optional_startup_grace_ms`` (1 s by
default, one setting for all servers) before the first turn, and leaves a server still starting out of
that turn's tools: ``codex exec``, one turn, then has no memvault tool at all.  ``memvault mcp`` answers
``initialize`` and ``tools/list`` at once when its tool list is kept (:mod:`vault_engine.server.mcp_handshake`),
but its first start of a release loads the server for it (2 s and more on a busy machine); so install
starts the server once, as Codex does (:data:`MCP_PROTOCOL`), and the first session finds the list kept.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ..patterns import lazy_pattern
from .adapter import HookInput, hook_specific_output
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

AGENT = "codex"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd")  # memvault's actions by their names
TIMEOUTS = {"SessionStart": 30, "UserPromptSubmit": 15, "PreCompact": 120, "SessionEnd": 60}  # seconds
MCP_STARTUP_SECONDS = 60  # the first start may load the embedding model
MCP_PROTOCOL = "2025-06-18"  # the MCP revision Codex 0.16x-0.171 asks for in initialize
_MEMVAULT = "\x00memvault"  # the tool name noted for a call to memvault's own server (no real name has NUL)
_INJECTED = lazy_pattern(r"^\s*(?:<environment_context>|<user_instructions>|<permissions instructions>|"
                       r"# AGENTS\.md instructions|<INSTRUCTIONS>)")


# ---------------------------------------------------------------- hooks


def parse(text: str, event: str) -> HookInput:
    """The common input of ``event`` (Codex sends Claude Code's shape; see the module docstring)."""
    return HookInput.parse(text, event)


def answer(event: str, text: str) -> str:
    """What the hook prints for ``event``: ``hookSpecificOutput.additionalContext``, or nothing."""
    return hook_specific_output(event, event, text)


def read_transcript(path: Path) -> Transcript:
    """The session's rollout file, which Codex gives hooks as ``transcript_path``."""
    return read_rollout(path)


def hooks_path(scope: str, home: Path, codex_home: str | None, project: Path) -> Path:
    """Where the hooks are configured for ``scope``."""
    return config_path(home, codex_home).with_name("hooks.json") if scope == "user" \
        else project / ".codex" / "hooks.json"


def read_rollout(path: Path) -> Transcript:
    """The messages of a Codex session file (see the module docstring for what is kept).

    Raises:
        OSError: the file cannot be read.  ValueError: it is too large.
    """
    session: str | None = None
    cwd: str | None = None
    tools: dict[str, str] = {}  # call id -> tool name
    messages: list[Message] = []
    skipped = 0
    for number, record in jsonl_records(path):
        if record is None:
            skipped += 1
            continue
        kind = record.get("type")
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else None
        if kind == "session_meta" and payload is not None:
            session = session or text_value(payload.get("id")) or text_value(payload.get("session_id"))
            cwd = cwd or text_value(payload.get("cwd"))
            continue
        if number == 1 and "id" in record and "type" not in record:  # the older files' first line
            session = text_value(record.get("id"))
            continue
        if kind == "response_item" and payload is not None:
            item, ts = payload, text_value(record.get("timestamp"))
        elif isinstance(kind, str) and "payload" not in record:  # an older file's bare item
            item, ts = record, text_value(record.get("timestamp"))
        else:
            continue
        found = _item(item, _key(record), ts, tools)
        if found is not None:
            messages.append(found)
    return Transcript(session, cwd, messages, skipped)


def _key(record: dict[str, Any]) -> str:
    return "codex:" + hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:32]


def _item(item: dict[str, Any], key: str, ts: str | None, tools: dict[str, str]) -> Message | None:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        text = text_of(item.get("content"))
        if role == "user" and (_INJECTED.match(text) or is_continuation(text)):
            return None
        text = without_injected(text)
        if role not in ("user", "assistant") or not text.strip():
            return None
        return Message(key, str(role), text, ts)
    if kind in ("function_call", "custom_tool_call"):
        name = str(item.get("name") or "tool")
        server = text_value(item.get("server")) or text_value(item.get("namespace"))
        if isinstance(item.get("call_id"), str):
            tools[item["call_id"]] = name if not is_memvault_tool(name, server) else _MEMVAULT
        if is_memvault_tool(name, server):
            return None  # memvault's own call: what it answers is the vault's memories
        arguments = item.get("arguments") if kind == "function_call" else {"input": item.get("input")}
        return Message(key, "assistant", condensed_call(name, arguments), ts)
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = _outputtext_value(item.get("output"))
        if not output.strip() or tools.get(str(item.get("call_id"))) == _MEMVAULT:
            return None
        return Message(key, "tool", "", ts, (ToolOutput(tools.get(str(item.get("call_id")), "tool"), output),))
    return None  # reasoning, and whatever a newer Codex adds


def _outputtext_value(output: Any) -> str:
    """A tool's output: a string (itself JSON ``{"output": ...}`` in some versions) or content items."""
    if isinstance(output, list):
        return text_of(output)
    if not isinstance(output, str):
        return ""
    if output.lstrip().startswith("{"):
        try:
            data = json.loads(output)
        except ValueError:
            return output
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            return str(data["output"])
    return output


# ---------------------------------------------------------------- config.toml


def config_path(home: Path, codex_home: str | None) -> Path:
    """Codex's config file: ``$CODEX_HOME/config.toml``, else ``~/.codex/config.toml``."""
    return (Path(codex_home).expanduser() if codex_home else home / ".codex") / "config.toml"


def _table_header(name: str) -> re.Pattern[str]:
    return re.compile(rf'^\s*\[\s*mcp_servers\s*\.\s*(?:{re.escape(name)}|"{re.escape(name)}")\s*\]\s*(?:#.*)?$')


_ANY_HEADER = lazy_pattern(r"^\s*\[")


_COMMENT = lazy_pattern(r"^\s*#")


def has_table(text: str, name: str) -> bool:
    """Whether ``text`` (a config.toml) writes ``[mcp_servers.NAME]`` as a table of its own."""
    header = _table_header(name)
    return any(header.match(line) for line in text.splitlines())


def without_server(text: str, name: str) -> str:
    """``text`` (a config.toml) without the ``[mcp_servers.NAME]`` table and its sub-tables; a comment
    line among them stays (memvault writes none: it is the person's, maybe about the next table)."""
    header = _table_header(name)
    sub = re.compile(rf'^\s*\[\s*mcp_servers\s*\.\s*(?:{re.escape(name)}|"{re.escape(name)}")\s*\.')
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        if header.match(line) or sub.match(line):
            skipping = True
            continue
        if skipping and _ANY_HEADER.match(line):
            skipping = False
        if not skipping or _COMMENT.match(line):
            out.append(line)
    result = "".join(out)
    return re.sub(r"\n{3,}", "\n\n", result)


def with_server(text: str, name: str, command: str, args: list[str]) -> str:
    """``text`` with ``[mcp_servers.NAME]`` set to ``command`` and ``args``, started before the session
    (see the module docstring), replacing the table if present."""
    rest = without_server(text, name).rstrip("\n")
    table = (f"[mcp_servers.{name}]\n"
             f"command = {json.dumps(command)}\n"
             f"args = [{', '.join(json.dumps(a) for a in args)}]\n"
             f"startup_timeout_sec = {MCP_STARTUP_SECONDS}\n")
    return (rest + "\n\n" if rest else "") + table
