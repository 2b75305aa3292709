"""``memvault install AGENT``: wire memvault into an agent's own settings, and take it out again.

Planned, then applied: :func:`plan` reads each settings file and says what it
would become (:class:`FileChange`, shown as a diff by ``--dry-run``); :func:`apply`
writes the files that change, atomically.  The rules:

- what a person put in a settings file stays there: only memvault's own hook
  entries (a command that runs ``memvault ... hook AGENT EVENT``) and its
  ``memvault`` MCP server entry are added, replaced or removed;
- a second install changes nothing; ``--uninstall`` removes exactly what install
  added (a file install created and that holds nothing else is removed too);
- a settings file that is not a JSON object (or TOML) is refused, untouched.

Claude Code: the four hooks of :mod:`.hooks` (in ``~/.claude/settings.json`` for
``--scope user``, ``<project>/.claude/settings.json`` for ``--scope project``) and
the MCP server (``~/.claude.json`` or ``<project>/.mcp.json``).  Codex: the MCP
server in ``config.toml`` and the context manifest in the project's ``AGENTS.md``
(the ``memvault export agents-md`` block).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.export import block, splice, unsplice
from ..errors import InvalidInput
from ..fsio import write_atomic
from . import claude_code, codex

SERVER_NAME = "memvault"
SCOPES = ("user", "project")
_OURS = re.compile(r"(?:memvault|vault_engine)\S*\s.*\bhook\s+(?P<agent>[a-z-]+)\s+(?P<event>[A-Za-z]+)\b")


@dataclass(frozen=True, slots=True)
class FileChange:
    """One settings file: its text now (None: absent) and after the change (None: removed)."""

    path: Path
    before: str | None
    after: str | None
    what: str  # one line: what the change is

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change."""
        lines = difflib.unified_diff((self.before or "").splitlines(keepends=True),
                                     (self.after or "").splitlines(keepends=True),
                                     fromfile=str(self.path) if self.before is not None else "/dev/null",
                                     tofile=str(self.path) if self.after is not None else "/dev/null")
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "changed": self.changed, "what": self.what,
                "action": ("unchanged" if not self.changed else "create" if self.before is None
                           else "remove" if self.after is None else "update")}


@dataclass(frozen=True, slots=True)
class Target:
    """Where and for what to install."""

    agent: str
    scope: str  # user or project
    home: Path
    project: Path  # the project folder (the current folder)
    vault: Path
    command: tuple[str, ...]  # the memvault command (see :func:`vault_engine.invocation.memvault_command`)
    codex_home: str | None = None
    agents_md: Callable[[], str] | None = None  # the AGENTS.md block's body (Codex), made when needed


def plan(target: Target, *, uninstall: bool = False) -> list[FileChange]:
    """The changes install (or ``uninstall``) makes for ``target``; nothing is written.

    Raises:
        InvalidInput: an unknown agent or scope, or a settings file memvault must not rewrite.
    """
    if target.scope not in SCOPES:
        raise InvalidInput(f"unknown scope '{target.scope}'; expected user or project")
    if target.agent == claude_code.AGENT:
        return _claude_code(target, uninstall)
    if target.agent == codex.AGENT:
        return _codex(target, uninstall)
    raise InvalidInput(f"unknown agent '{target.agent}'; expected {claude_code.AGENT} or {codex.AGENT}")


def apply(changes: list[FileChange]) -> list[FileChange]:
    """Write the changed files (creating folders; removing those that end up removed); the ones written."""
    done = []
    for change in changes:
        if not change.changed:
            continue
        if change.after is None:
            change.path.unlink(missing_ok=True)
        else:
            change.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(change.path, change.after)
        done.append(change)
    return done


# ---------------------------------------------------------------- Claude Code


def hook_command(target: Target, event: str) -> str:
    return shlex.join([*target.command, "--vault", str(target.vault), "hook", claude_code.AGENT, event])


def _claude_code(target: Target, uninstall: bool) -> list[FileChange]:
    settings = claude_code.settings_path(target.scope, target.home, target.project)
    servers = claude_code.mcp_path(target.scope, target.home, target.project)
    wanted = {event: hook_command(target, event) for event in claude_code.EVENTS}
    server = {"type": "stdio", "command": target.command[0],
              "args": [*target.command[1:], "--vault", str(target.vault), "mcp"], "env": {}}
    return [
        _json_change(settings, lambda data: _with_hooks(data, wanted, uninstall),
                     "hooks " + ", ".join(claude_code.EVENTS)),
        _json_change(servers, lambda data: _with_server(data, None if uninstall else server),
                     f"MCP server '{SERVER_NAME}'"),
    ]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidInput("file is not valid UTF-8; not touched", path=str(path)) from None
    except OSError as exc:
        raise InvalidInput(f"cannot read file: {exc.strerror}", path=str(path)) from None


def _json_change(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]], what: str) -> FileChange:
    before = _read(path)
    data: Any = {}
    if before is not None and before.strip():
        try:
            data = json.loads(before)
        except ValueError as exc:
            raise InvalidInput(f"not valid JSON ({exc}); not touched", path=str(path)) from None
        if not isinstance(data, dict):
            raise InvalidInput("not a JSON object; not touched", path=str(path))
    updated = change(json.loads(json.dumps(data)))
    if updated == data:
        return FileChange(path, before, before, what)
    # A file left holding nothing held only what install added: it goes.
    after = json.dumps(updated, indent=2, ensure_ascii=False) + "\n" if updated else None
    return FileChange(path, before, after, what)


def _is_ours(hook: Any, agent: str) -> bool:
    if not isinstance(hook, dict) or hook.get("type") != "command" or not isinstance(hook.get("command"), str):
        return False
    match = _OURS.search(hook["command"])
    return match is not None and match.group("agent") == agent


def _with_hooks(data: dict[str, Any], wanted: dict[str, str], uninstall: bool) -> dict[str, Any]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput("'hooks' in the settings is not an object; not touched")
    for event, command in wanted.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"'hooks.{event}' in the settings is not a list; not touched")
        mine = {"hooks": [{"type": "command", "command": command, "timeout": claude_code.TIMEOUTS[event]}]}
        if not uninstall and mine in groups and sum(_has_ours(g) for g in groups) == 1:
            continue  # installed as it should be: leave it where it is
        kept: list[Any] = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list) or not any(_is_ours(h, claude_code.AGENT) for h in inner):
                kept.append(group)
                continue
            others = [h for h in inner if not _is_ours(h, claude_code.AGENT)]
            if others:
                kept.append({**group, "hooks": others})
        if not uninstall:
            kept.append(mine)
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    if hooks:
        data["hooks"] = hooks
    else:
        data.pop("hooks", None)
    return data


def _has_ours(group: Any) -> bool:
    inner = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(inner, list) and any(_is_ours(h, claude_code.AGENT) for h in inner)


def _with_server(data: dict[str, Any], server: dict[str, Any] | None) -> dict[str, Any]:
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput("'mcpServers' is not an object; not touched")
    current = servers.get(SERVER_NAME)
    if server is None:
        if current is not None and _server_is_ours(current):
            servers.pop(SERVER_NAME)
    elif current is not None and not _server_is_ours(current):
        raise InvalidInput(f"an MCP server named '{SERVER_NAME}' that does not run memvault is configured; "
                           "not touched (rename or remove it first)")
    else:
        servers[SERVER_NAME] = server
    if servers:
        data["mcpServers"] = servers
    else:
        data.pop("mcpServers", None)
    return data


def _server_is_ours(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    words = [str(entry.get("command", "")), *(str(a) for a in entry.get("args", []) or [])]
    return any("memvault" in w or w == "vault_engine" for w in words) and "mcp" in words


# ---------------------------------------------------------------- Codex


def _codex(target: Target, uninstall: bool) -> list[FileChange]:
    config = codex.config_path(target.home, target.codex_home)
    before = _read(config)
    if before is not None:
        try:
            tomllib.loads(before)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(f"not valid TOML ({exc}); not touched", path=str(config)) from None
    text = before or ""
    if uninstall:
        after: str | None = codex.without_server(text, SERVER_NAME) if text else before
        if after is not None and not after.strip():
            after = None
        if after is not None and text and after.rstrip("\n") == text.rstrip("\n"):
            after = before
    else:
        after = codex.with_server(text, SERVER_NAME, target.command[0],
                                  [*target.command[1:], "--vault", str(target.vault), "mcp"])
        if before is not None and tomllib.loads(before).get("mcp_servers", {}).get(SERVER_NAME) == \
                tomllib.loads(after).get("mcp_servers", {}).get(SERVER_NAME):
            after = before  # already there as it should be
    changes = [FileChange(config, before, after, f"MCP server '{SERVER_NAME}'")]
    agents_file = target.project / "AGENTS.md"
    agents_before = _read(agents_file)
    if uninstall:
        agents_after = unsplice(agents_before, str(agents_file)) if agents_before is not None else None
        if agents_after is not None and not agents_after.strip():
            agents_after = None
    else:
        body = target.agents_md() if target.agents_md is not None else ""
        agents_after = splice(agents_before or "", block(body), str(agents_file))
    changes.append(FileChange(agents_file, agents_before, agents_after, "the context manifest in AGENTS.md"))
    return changes
