"""Cursor: its agent hooks and where its settings live.

As documented at cursor.com/docs/agent/hooks (hooks since Cursor 1.7; read for 2.x): hooks are
set in ``hooks.json`` (``~/.cursor/hooks.json``, or ``<project>/.cursor/hooks.json``) as
``{"version": 1, "hooks": {"<event>": [{"command", "timeout"}]}}``, with camelCase event names.
Every input carries ``conversation_id``, ``generation_id``, ``hook_event_name``,
``workspace_roots`` (the first is the project folder) and ``transcript_path``; the answer is
snake_case JSON.

Wired: ``sessionStart``, answered ``{"additional_context": ...}`` (the manifest).  Not wired:
``beforeSubmitPrompt`` can only let a prompt through or stop it (``continue``,
``user_message``), not add to it, so a prompt's memories reach Cursor's agent only through the
MCP tools; ``preCompact``/``sessionEnd`` would capture the session, but the transcript's format
is not documented, so Cursor sessions are not captured.

The MCP server goes in ``mcp.json`` next to ``hooks.json``, under ``mcpServers``.
"""

from __future__ import annotations

import json
from pathlib import Path

from .adapter import CONTEXT_ACTIONS, HookInput, HookInputError, NoTranscript, action_of, json_object, text_fields
from .messages import Transcript

AGENT = "cursor"
ACTIONS = {"sessionStart": "SessionStart"}
EVENTS = tuple(ACTIONS)
TIMEOUTS = {"sessionStart": 30}  # seconds


def parse(text: str, event: str) -> HookInput:
    """The common input of Cursor's ``event``: the conversation is the session, the first workspace root the
    folder."""
    data = json_object(text)
    named = data.get("hook_event_name")
    if named is not None and named != event:
        raise HookInputError(f"hook input is for {named!r}, the command for {event!r}")
    fields = text_fields(data, "conversation_id", "session_id", "transcript_path", "prompt")
    session = fields["conversation_id"] or fields["session_id"]
    if not session:
        raise HookInputError("hook input has no conversation_id")
    roots = data.get("workspace_roots")
    if roots is not None and not (isinstance(roots, list) and all(isinstance(r, str) for r in roots)):
        raise HookInputError("hook input field 'workspace_roots' is not a list of folders")
    return HookInput(action_of(ACTIONS, event), session, roots[0] if roots else None, fields["transcript_path"],
                     "startup" if event == "sessionStart" else None, fields["prompt"])


def answer(event: str, text: str) -> str:
    """``{"additional_context": ...}`` for sessionStart; nothing otherwise."""
    if ACTIONS.get(event) not in CONTEXT_ACTIONS or not text.strip():
        return ""
    return json.dumps({"additional_context": text}, ensure_ascii=False) + "\n"


def read_transcript(path: Path) -> Transcript:
    raise NoTranscript("Cursor's transcript format is not documented; the session is not captured")


def hooks_path(scope: str, home: Path, project: Path) -> Path:
    return (home if scope == "user" else project) / ".cursor" / "hooks.json"


def mcp_path(scope: str, home: Path, project: Path) -> Path:
    return (home if scope == "user" else project) / ".cursor" / "mcp.json"
