"""One hook core, one adapter per agent: what every agent's hook is turned into, and back.

Each agent calls its hooks at its own moments, with its own JSON on stdin, and reads
its own answer format.  memvault does four things with them, named as Claude Code
names its events (:data:`ACTIONS`):

- ``SessionStart``: give the project's context manifest;
- ``UserPromptSubmit``: give the memories the prompt makes relevant;
- ``PreCompact``: store the transcript's new messages (the session goes on);
- ``SessionEnd``: store them and close the session.

An agent module (:mod:`.claude_code`, :mod:`.codex`, :mod:`.gemini`, :mod:`.cursor`,
:mod:`.opencode`, :mod:`.copilot`) is the :class:`Adapter`: it names the events it is
wired for and what each one does, parses its stdin into the common :class:`HookInput`,
renders the answer the way the agent reads it, and reads its transcript.
:mod:`.hooks` does the rest the same way for every agent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .messages import Transcript

ACTIONS = ("SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd")
CONTEXT_ACTIONS = frozenset({"SessionStart", "UserPromptSubmit"})  # the actions whose answer the model reads


class HookInputError(ValueError):
    """The hook's stdin is not the JSON object the agent sends."""


class NoTranscript(ValueError):
    """The agent writes no transcript memvault can read (see the agent's module)."""


@dataclass(frozen=True, slots=True)
class HookInput:
    """What an agent tells a hook, in the shape every agent's is turned into.

    ``event`` is memvault's action (one of :data:`ACTIONS`), whatever the agent calls it.
    """

    event: str
    session_id: str
    cwd: str | None = None
    transcript_path: str | None = None
    source: str | None = None  # SessionStart: startup, resume, clear or compact
    prompt: str | None = None  # UserPromptSubmit

    @classmethod
    def parse(cls, text: str, event: str) -> HookInput:
        """Claude Code's input for ``event`` (the snake_case shape Codex and Gemini CLI send too).

        Raises:
            HookInputError: not a JSON object, no session id, or fields of the wrong type.
        """
        data = json_object(text)
        named = data.get("hook_event_name")
        if named is not None and named != event:
            raise HookInputError(f"hook input is for {named!r}, the command for {event!r}")
        fields = text_fields(data, "session_id", "cwd", "transcript_path", "source", "prompt")
        if not fields["session_id"]:
            raise HookInputError("hook input has no session_id")
        return cls(event, fields["session_id"] or "", fields["cwd"], fields["transcript_path"],
                   fields["source"], fields["prompt"])


class Adapter(Protocol):
    """An agent's side of the hooks (each agent module is one)."""

    @property
    def AGENT(self) -> str:
        """The agent's name in ``memvault hook AGENT`` and ``memvault install AGENT``."""

    @property
    def EVENTS(self) -> tuple[str, ...]:
        """The agent's own names of the events memvault is wired for."""

    def parse(self, text: str, event: str) -> HookInput:
        """The common input from the agent's stdin for its ``event`` (raises :class:`HookInputError`)."""

    def answer(self, event: str, text: str) -> str:
        """What the hook prints for the agent's ``event`` when memvault's answer is ``text``."""

    def read_transcript(self, path: Path) -> Transcript:
        """The session's messages (raises OSError, ValueError, :class:`NoTranscript`)."""


def json_object(text: str) -> dict[str, Any]:
    """``text`` as a JSON object (raises :class:`HookInputError`)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise HookInputError("hook input is not valid JSON") from None
    if not isinstance(data, dict):
        raise HookInputError("hook input is not a JSON object")
    return data


def text_fields(data: Mapping[str, Any], *keys: str) -> dict[str, str | None]:
    """``keys`` of ``data`` that must be text when present (raises :class:`HookInputError`)."""
    fields: dict[str, str | None] = {}
    for key in keys:
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise HookInputError(f"hook input field {key!r} is not text")
        fields[key] = value
    return fields


def action_of(actions: Mapping[str, str], event: str) -> str:
    """memvault's action for the agent's ``event`` (raises :class:`HookInputError` for one not wired)."""
    try:
        return actions[event]
    except KeyError:
        raise HookInputError(f"no memvault action for the event {event!r}") from None


def hook_specific_output(native: str, action: str, text: str) -> str:
    """``{"hookSpecificOutput": {"hookEventName", "additionalContext"}}``, the answer Claude Code, Codex and
    Gemini CLI read context from; nothing for an action the model does not read or an empty text."""
    if action not in CONTEXT_ACTIONS or not text.strip():
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": native, "additionalContext": text}},
                      ensure_ascii=False) + "\n"
