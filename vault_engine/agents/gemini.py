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

Wired: SessionStart (the manifest) and BeforeAgent (the prompt's memories).  Not wired:
PreCompress and SessionEnd would capture the session, but the transcript's format is not
documented (the reference calls it "session transcript JSON"), so Gemini CLI sessions are not
captured; PreCompress is advisory and SessionEnd is not waited for anyway.

The MCP server goes in the same file, ``mcpServers.memvault`` (``command``, ``args``).
"""

from __future__ import annotations

import re
from pathlib import Path

from .adapter import HookInput, NoTranscript, action_of, hook_specific_output
from .messages import Transcript

AGENT = "gemini"
ACTIONS = {"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit"}
EVENTS = tuple(ACTIONS)
TIMEOUTS = {"SessionStart": 30_000, "BeforeAgent": 15_000}  # milliseconds
HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.DOTALL)  # a hook's context, before


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
    raise NoTranscript("Gemini CLI's transcript format is not documented; the session is not captured")


def settings_path(scope: str, home: Path, project: Path) -> Path:
    """Where hooks and the MCP server are configured for ``scope``."""
    return (home if scope == "user" else project) / ".gemini" / "settings.json"
