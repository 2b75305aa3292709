"""GitHub Copilot CLI (``@github/copilot``): its hooks, and what of them memvault can use.

As documented in GitHub's "Copilot CLI hooks reference" (read for 0.0.3xx-1.0): hooks are
loaded from ``.github/hooks/*.json`` in the repository (``{"version": 1, "hooks": {"<event>":
[{"type": "command", "bash", "timeoutSec"}]}}``).  camelCase event names get camelCase input
(``sessionId``, ``cwd``, ``timestamp`` in milliseconds; ``source``/``initialPrompt`` for
sessionStart, ``prompt`` for userPromptSubmitted, ``transcriptPath`` for preCompact and
agentStop).

What cannot be wired: the output of ``sessionStart`` and ``userPromptSubmitted`` is not
processed (the reference's "Output processed: No"), so a hook cannot give Copilot's model the
manifest or a prompt's memories; ``preCompact`` and ``agentStop`` name a transcript, but its
format is not documented, so sessions are not captured.  memvault therefore installs no hooks
for Copilot CLI: ``memvault install copilot`` wires the MCP server (user scope) and the context
manifest in ``AGENTS.md``, which Copilot CLI reads as instructions (project scope).  :func:`parse`
reads the documented input, so the hooks can be wired once either limit goes.
"""

from __future__ import annotations

from pathlib import Path

from .adapter import HookInput, HookInputError, NoTranscript, json_object, text_fields
from .messages import Transcript

AGENT = "copilot"
ACTIONS = {"sessionStart": "SessionStart", "userPromptSubmitted": "UserPromptSubmit",
           "preCompact": "PreCompact", "sessionEnd": "SessionEnd"}
EVENTS: tuple[str, ...] = ()  # none is wired (see the module docstring)


def parse(text: str, event: str) -> HookInput:
    """The common input of Copilot CLI's camelCase ``event``."""
    if event not in ACTIONS:
        raise HookInputError(f"no memvault action for the event {event!r}")
    data = json_object(text)
    fields = text_fields(data, "sessionId", "cwd", "transcriptPath", "source", "prompt")
    if not fields["sessionId"]:
        raise HookInputError("hook input has no sessionId")
    return HookInput(ACTIONS[event], fields["sessionId"] or "", fields["cwd"], fields["transcriptPath"],
                     fields["source"], fields["prompt"])


def answer(event: str, text: str) -> str:
    """Nothing: Copilot CLI does not read what these hooks answer."""
    return ""


def read_transcript(path: Path) -> Transcript:
    raise NoTranscript("Copilot CLI's transcript format is not documented; the session is not captured")


def mcp_path(home: Path) -> Path:
    """Copilot CLI's MCP servers (user scope): ``~/.copilot/mcp-config.json``, under ``mcpServers``."""
    return home / ".copilot" / "mcp-config.json"
