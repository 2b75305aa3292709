"""OpenCode (``opencode-ai``): a plugin that calls ``memvault hook opencode EVENT``.

OpenCode has no command hooks; it loads JavaScript plugins (opencode.ai/docs/plugins, read for
1.x): every file in ``~/.config/opencode/plugins/`` (user) and ``<project>/.opencode/plugins/``
(project) is loaded at startup, and its exported function returns hooks.  memvault's plugin
(:data:`PLUGIN`, written as ``memvault.js``) runs memvault's hooks for these:

- the ``session.created`` event -> SessionStart: the manifest, kept until the session's first
  prompt (an event cannot add to the conversation);
- ``chat.message`` (a prompt is sent) -> UserPromptSubmit: the manifest (first prompt) and the
  prompt's memories, added to the message as a synthetic text part;
- ``experimental.session.compacting`` -> PreCompact, and the ``session.idle`` event -> PreCompact:
  the session's messages are stored (OpenCode has no end of session; what a session says is
  stored when it waits for the person and before it is compacted, each message once).

The plugin speaks memvault's own input, Claude Code's snake_case shape: ``session_id``, ``cwd``,
``hook_event_name``, ``prompt``, ``transcript_path``; the answer is ``{"context": "..."}``.  For
capture it fetches the session's messages from OpenCode (``client.session.messages``) and writes
them to a temporary JSONL file, one ``{"id", "role", "time", "text"}`` a line (text parts only;
tool calls and memvault's own synthetic parts are left out), read by :func:`read_transcript`.

The MCP server goes in ``opencode.json`` (``~/.config/opencode/opencode.json`` or
``<project>/opencode.json``) as ``mcp.memvault = {"type": "local", "command": [...]}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from .adapter import CONTEXT_ACTIONS, HookInput, action_of
from .messages import Message, Transcript, jsonl_records, text_value

TRANSIENT_TRANSCRIPT = True  # the plugin deletes its dump once the hook returns: the capture queue keeps a copy
AGENT = "opencode"
ACTIONS = {"session.created": "SessionStart", "chat.message": "UserPromptSubmit",
           "experimental.session.compacting": "PreCompact", "session.idle": "PreCompact"}
EVENTS = tuple(ACTIONS)
MARKER = "// memvault plugin: written by `memvault install opencode`"  # the first line of the plugin file

PLUGIN = MARKER + """; `memvault install opencode --uninstall` removes it.
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const COMMAND = __COMMAND__

// One memvault hook: JSON in, {"context"} out; never throws (a hook never stands in the way).
function hook(event, input) {
  try {
    const done = spawnSync(COMMAND[0], [...COMMAND.slice(1), "hook", "opencode", event], {
      input: JSON.stringify({ ...input, hook_event_name: event }), encoding: "utf8", timeout: 120000,
    })
    return done.status === 0 && done.stdout ? JSON.parse(done.stdout).context || "" : ""
  } catch {
    return ""
  }
}

export const MemvaultPlugin = async ({ client, directory }) => {
  const manifests = new Map() // session id -> the manifest its first prompt is given

  async function capture(event, sessionID) {
    const folder = mkdtempSync(join(tmpdir(), "memvault-opencode-"))
    try {
      const found = await client.session.messages({ path: { id: sessionID } })
      const lines = (found.data || []).map(({ info, parts }) => JSON.stringify({
        id: info.id, role: info.role, time: info.time && info.time.created,
        text: (parts || []).filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\\n\\n"),
      }))
      const file = join(folder, "transcript.jsonl")
      writeFileSync(file, lines.join("\\n") + "\\n")
      hook(event, { session_id: sessionID, cwd: directory, transcript_path: file })
    } catch {
      // nothing: the next capture stores what this one could not
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  }

  return {
    event: async ({ event }) => {
      if (event.type === "session.created" && event.properties.info && !event.properties.info.parentID) {
        const id = event.properties.info.id
        manifests.set(id, hook("session.created", { session_id: id, cwd: directory, source: "startup" }))
      } else if (event.type === "session.idle") {
        await capture("session.idle", event.properties.sessionID)
      }
    },
    "chat.message": async (input, output) => {
      const prompt = output.parts.filter((p) => p.type === "text").map((p) => p.text).join("\\n")
      const first = manifests.get(input.sessionID) || ""
      manifests.delete(input.sessionID)
      const context = [first, hook("chat.message", { session_id: input.sessionID, cwd: directory, prompt })]
        .filter(Boolean).join("\\n\\n")
      if (context) {
        output.parts.push({ ...output.parts[0], type: "text", text: context, synthetic: true,
                            id: (output.parts[0] && output.parts[0].id || "prt") + "memvault" })
      }
    },
    "experimental.session.compacting": async (input) => {
      await capture("experimental.session.compacting", input.sessionID)
    },
  }
}
"""


def parse(text: str, event: str) -> HookInput:
    """The common input the plugin sends for ``event``."""
    hook = HookInput.parse(text, event)
    return HookInput(action_of(ACTIONS, event), hook.session_id, hook.cwd, hook.transcript_path, hook.source,
                     hook.prompt)


def answer(event: str, text: str) -> str:
    """``{"context": ...}`` for the plugin to add to the conversation; nothing otherwise."""
    if ACTIONS.get(event) not in CONTEXT_ACTIONS or not text.strip():
        return ""
    return json.dumps({"context": text}, ensure_ascii=False) + "\n"


def read_transcript(path: Path) -> Transcript:
    """The messages the plugin wrote (see the module docstring); OpenCode's message ids are the keys."""
    messages: list[Message] = []
    skipped = 0
    for _number, record in jsonl_records(path):
        key = text_value(record.get("id")) if record is not None else None
        if record is None or key is None:
            skipped += 1
            continue
        role, text, created = record.get("role"), text_value(record.get("text")), record.get("time")
        if role in ("user", "assistant") and text and text.strip():
            messages.append(Message(f"opencode:{key}", str(role), text,
                                    str(created) if created is not None else None))
    return Transcript(None, None, messages, skipped)


def plugin(command: list[str]) -> str:
    """The plugin file's text, running memvault as ``command``."""
    return PLUGIN.replace("__COMMAND__", json.dumps(command))


def plugin_path(scope: str, home: Path, project: Path) -> Path:
    return home / ".config" / "opencode" / "plugins" / "memvault.js" if scope == "user" \
        else project / ".opencode" / "plugins" / "memvault.js"


def config_path(scope: str, home: Path, project: Path) -> Path:
    return home / ".config" / "opencode" / "opencode.json" if scope == "user" else project / "opencode.json"
