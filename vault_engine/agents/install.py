"""``memvault install AGENT``: wire memvault into an agent's own settings, and take it out again.

Planned, then applied: :func:`plan` reads each settings file and says what it
would become (:class:`FileChange`, shown as a diff by ``--dry-run``); :func:`apply`
writes the files that change, atomically.  The rules:

- what a person put in a settings file stays there: only memvault's own hook
  entries (a command that runs ``memvault ... hook AGENT EVENT``) and its
  ``memvault`` MCP server entry are added, replaced or removed;
- a second install changes nothing; ``--uninstall`` removes exactly what install
  added (a file install created and that holds nothing else is removed too);
- a settings file that is not a JSON object (or TOML) is refused, untouched; so is JSON
  that only Python reads (``NaN``, ``Infinity``, a number too large for a double, which
  would be written back as ``Infinity``);
- a file is edited as its owner left it: its mode and owner are kept (``~/.claude.json``
  may hold tokens and be 0600), a symlinked file is edited where it points (the dotfiles
  repository's copy), its line endings (CRLF) and comments are kept, and a read-only file
  (no write bit for its owner, 0444) is refused in one line, not overwritten;
- all files or none: every file is checked before any is written, and when one cannot be
  written after all, the ones already written are put back as they were.

What each agent gets, and where, is in its module (:mod:`.claude_code`, :mod:`.codex`,
:mod:`.gemini`, :mod:`.cursor`, :mod:`.opencode`, :mod:`.copilot`) and in ``docs/agents.md``.

The command written: ``--scope user`` runs this installation's memvault with its vault
(``--vault``), absolute paths, right for this machine.  ``--scope project`` writes files a team
commits, so nothing of this machine: the command is ``memvault`` found on ``PATH``, and the vault
is found as the command line finds it from the session's folder (a vault above the project,
``MEMVAULT_DIR``, the default vault); a checkout on another machine, in another folder, under
another HOME works unchanged.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.export import block, splice, unsplice
from ..errors import InvalidInput
from ..patterns import lazy_pattern
from . import claude_code, codex, copilot, cursor, gemini, opencode
from .settings_files import FileChange as FileChange
from .settings_files import apply as apply
from .settings_files import endings_of, lf_edit, loads_json, read_text

SERVER_NAME = "memvault"
PORTABLE_COMMAND = ("memvault",)  # the project scope's command: found on PATH wherever the project is checked out
SCOPES = ("user", "project")
_OURS = lazy_pattern(r"(?:memvault|vault_engine)\S*\s.*\bhook\s+(?P<agent>[a-z-]+)\s+(?P<event>[A-Za-z]+)\b")


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
    allow_tools: tuple[str, ...] = ()  # MCP tools to allow without asking (Claude Code's permissions.allow)

    def memvault(self) -> tuple[str, ...]:
        """The memvault command the agent runs (see the module docstring)."""
        return (*self.command, "--vault", str(self.vault)) if self.scope == "user" else PORTABLE_COMMAND

    def hook_command(self, event: str, agent: str | None = None) -> str:
        return shlex.join([*self.memvault(), "hook", agent or self.agent, event])


def plan(target: Target, *, uninstall: bool = False) -> list[FileChange]:
    """The changes install (or ``uninstall``) makes for ``target``; nothing is written.

    Raises:
        InvalidInput: an unknown agent or scope, or a settings file memvault must not rewrite.
    """
    if target.scope not in SCOPES:
        raise InvalidInput(f"unknown scope '{target.scope}'; expected user or project")
    planner = _PLANNERS.get(target.agent)
    if planner is None:
        raise InvalidInput(f"unknown agent '{target.agent}'; expected one of {', '.join(_PLANNERS)}")
    if target.allow_tools and target.agent != claude_code.AGENT:
        raise InvalidInput(f"--allow-tools is for {claude_code.AGENT}: {target.agent} has no per-tool rule to write")
    return planner(target, uninstall)


# ---------------------------------------------------------------- Claude Code


def hook_command(target: Target, event: str) -> str:
    return target.hook_command(event, claude_code.AGENT)


def _server(target: Target, **extra: Any) -> dict[str, Any]:
    """The MCP server's entry as Claude Code, Gemini CLI, Cursor and Copilot CLI read it."""
    command = target.memvault()
    return {**extra, "command": command[0], "args": [*command[1:], "mcp"]}


def _claude_code(target: Target, uninstall: bool) -> list[FileChange]:
    settings = claude_code.settings_path(target.scope, target.home, target.project)
    servers = claude_code.mcp_path(target.scope, target.home, target.project)
    wanted = {event: {"type": "command", "command": hook_command(target, event),
                      "timeout": claude_code.TIMEOUTS[event]} for event in claude_code.EVENTS}
    rules = [f"mcp__{SERVER_NAME}__{tool}" for tool in target.allow_tools]
    what = "hooks " + ", ".join(claude_code.EVENTS) + (f"; allow {', '.join(rules)}" if rules else "")

    def settings_change(data: dict[str, Any]) -> dict[str, Any]:
        return _with_rules(_with_hooks(data, wanted, claude_code.AGENT, uninstall), rules, uninstall)

    return [
        _json_change(settings, settings_change, what),
        _json_change(servers, lambda data: _with_server(data, None if uninstall else
                                                        _server(target, type="stdio", env={})),
                     f"MCP server '{SERVER_NAME}'"),
    ]


def _with_rules(data: dict[str, Any], rules: list[str], uninstall: bool) -> dict[str, Any]:
    """``data`` with ``rules`` in ``permissions.allow`` (or without them, to uninstall); other rules stay."""
    if not rules:
        return data
    permissions = data.get("permissions", {})
    allow = permissions.get("allow", []) if isinstance(permissions, dict) else None
    if not isinstance(allow, list):
        raise InvalidInput("'permissions.allow' in the settings is not a list; not touched")
    allow = [r for r in allow if r not in rules] if uninstall else allow + [r for r in rules if r not in allow]
    permissions = {**permissions, "allow": allow}
    if not allow:
        permissions.pop("allow")
    if permissions:
        data["permissions"] = permissions
    else:
        data.pop("permissions", None)
    return data


def _json_change(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]], what: str) -> FileChange:
    before = read_text(path)
    data: Any = {}
    if before is not None and before.strip():
        data = loads_json(before, path)
        if not isinstance(data, dict):
            raise InvalidInput("not a JSON object; not touched", path=str(path))
    updated = change(json.loads(json.dumps(data)))
    if updated == data:
        return FileChange(path, before, before, what)
    # A file left holding nothing held only what install added: it goes.
    after = json.dumps(updated, indent=2, ensure_ascii=False) + "\n" if updated else None
    return FileChange(path, before, endings_of(before, after), what)


def _is_ours(hook: Any, agent: str) -> bool:
    """Whether ``hook`` (a handler; Copilot CLI's holds its command in ``bash``) runs memvault's hook."""
    command = (hook.get("command") or hook.get("bash")) if isinstance(hook, dict) else None
    match = _OURS.search(command) if isinstance(command, str) else None
    return match is not None and match.group("agent") == agent


def _with_hooks(data: dict[str, Any], wanted: dict[str, dict[str, Any]], agent: str, uninstall: bool, *,
                nested: bool = True) -> dict[str, Any]:
    """``data`` with memvault's hook ``wanted[event]`` for each event (or none, to uninstall).

    ``nested``: Claude Code's shape, which Codex and Gemini CLI share (event -> groups ->
    ``hooks`` -> handlers); else Cursor's and Copilot CLI's (event -> handlers).  A group or
    handler of memvault's is replaced; everything else is kept where it is.
    """
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput("'hooks' in the settings is not an object; not touched")
    for event, entry in wanted.items():
        groups = hooks.get(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"'hooks.{event}' in the settings is not a list; not touched")
        mine = {"hooks": [entry]} if nested else entry
        ours = [g for g in groups if _has_ours(g, agent, nested)]
        if not uninstall and mine in groups and len(ours) == 1:
            continue  # installed as it should be: leave it where it is
        kept: list[Any] = []
        for group in groups:
            if not _has_ours(group, agent, nested):
                kept.append(group)
            elif nested:
                others = [h for h in group["hooks"] if not _is_ours(h, agent)]
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


def _has_ours(group: Any, agent: str, nested: bool = True) -> bool:
    if not nested:
        return _is_ours(group, agent)
    inner = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(inner, list) and any(_is_ours(h, agent) for h in inner)


def _with_server(data: dict[str, Any], server: dict[str, Any] | None, key: str = "mcpServers") -> dict[str, Any]:
    """``data`` with memvault's MCP server ``data[key][SERVER_NAME]`` (None: without it)."""
    servers = data.get(key, {})
    if not isinstance(servers, dict):
        raise InvalidInput(f"'{key}' is not an object; not touched")
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
        data[key] = servers
    else:
        data.pop(key, None)
    return data


def _server_is_ours(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    command = entry.get("command", "")
    words = [str(w) for w in (command if isinstance(command, list) else [command])]
    words += [str(a) for a in entry.get("args", []) or []]
    return any("memvault" in w or w == "vault_engine" for w in words) and "mcp" in words


# ---------------------------------------------------------------- Codex


def _codex(target: Target, uninstall: bool) -> list[FileChange]:
    hooks_file = codex.hooks_path(target.scope, target.home, target.codex_home, target.project)
    wanted = {event: {"type": "command", "command": target.hook_command(event), "timeout": codex.TIMEOUTS[event]}
              for event in codex.EVENTS}
    config = codex.config_path(target.home, target.codex_home) if target.scope == "user" \
        else target.project / ".codex" / "config.toml"
    return [_json_change(hooks_file, lambda data: _with_hooks(data, wanted, codex.AGENT, uninstall),
                         "hooks " + ", ".join(codex.EVENTS) + " (to trust in Codex: /hooks)"),
            _codex_server(config, target, uninstall), _agents_md(target, uninstall)]


def _codex_server(config: Path, target: Target, uninstall: bool) -> FileChange:
    """memvault's ``[mcp_servers.memvault]`` table in Codex's config.toml, added, replaced or removed.

    The file is read with ``tomllib`` and edited as text (comments and the rest kept).  Only a
    table of memvault's own, written as a ``[mcp_servers.memvault]`` table, is edited: an entry of
    that name that runs something else is refused, as for the other agents, and one written as an
    inline table or as dotted keys is refused unless it is already what install would write.
    """
    before = read_text(config)
    text = before or ""
    where = str(config)
    try:
        servers = tomllib.loads(text).get("mcp_servers", {})
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"not valid TOML ({exc}); not touched", path=where) from None
    if not isinstance(servers, dict):
        raise InvalidInput("'mcp_servers' is not a table; not touched", path=where)
    entry = servers.get(SERVER_NAME)
    if entry is not None and not _server_is_ours(entry):
        raise InvalidInput(f"an MCP server named '{SERVER_NAME}' that does not run memvault is configured; "
                           "not touched (rename or remove it first)", path=where)
    as_table = codex.has_table(text, SERVER_NAME)
    odd = (f"memvault's MCP server is written as an inline table or dotted keys; not touched (write it as an "
           f"[mcp_servers.{SERVER_NAME}] table, or remove it)")
    if uninstall:
        if entry is None:
            return FileChange(config, before, before, f"MCP server '{SERVER_NAME}'")
        if not as_table:
            raise InvalidInput(odd, path=where)
        after: str | None = codex.without_server(text, SERVER_NAME)
        if after is not None and not after.strip():
            after = None
    else:
        command = target.memvault()
        table = codex.with_server("", SERVER_NAME, command[0], [*command[1:], "mcp"])
        if entry == tomllib.loads(table)["mcp_servers"][SERVER_NAME]:
            return FileChange(config, before, before, f"MCP server '{SERVER_NAME}'")  # already as it should be
        if entry is not None and not as_table:
            raise InvalidInput(odd, path=where)
        after = codex.with_server(text, SERVER_NAME, command[0], [*command[1:], "mcp"])
        try:
            tomllib.loads(after)
        except tomllib.TOMLDecodeError:  # mcp_servers = { ... } inline: no table can be added to it
            raise InvalidInput(f"cannot add an [mcp_servers.{SERVER_NAME}] table to this file ('mcp_servers' is "
                               "an inline table?); not touched", path=where) from None
    return FileChange(config, before, endings_of(before, after), f"MCP server '{SERVER_NAME}'")


def _agents_md(target: Target, uninstall: bool) -> FileChange:
    """The context manifest as the ``memvault export agents-md`` block of the project's AGENTS.md."""
    agents_file = target.project / "AGENTS.md"
    agents_before = read_text(agents_file)
    if uninstall:
        agents_after = lf_edit(agents_before, lambda text: unsplice(text, str(agents_file))) \
            if agents_before is not None else None
        if agents_after is not None and not agents_after.strip():
            agents_after = None
    else:
        body = target.agents_md() if target.agents_md is not None else ""
        agents_after = lf_edit(agents_before or "", lambda text: splice(text, block(body), str(agents_file)))
    return FileChange(agents_file, agents_before, agents_after, "the context manifest in AGENTS.md")


# ---------------------------------------------------------------- Gemini CLI, Cursor, OpenCode, Copilot CLI


def _gemini(target: Target, uninstall: bool) -> list[FileChange]:
    wanted = {event: {"type": "command", "name": SERVER_NAME, "command": target.hook_command(event),
                      "timeout": gemini.TIMEOUTS[event]} for event in gemini.EVENTS}

    def change(data: dict[str, Any]) -> dict[str, Any]:
        data = _with_hooks(data, wanted, gemini.AGENT, uninstall)
        return _with_server(data, None if uninstall else _server(target))

    return [_json_change(gemini.settings_path(target.scope, target.home, target.project), change,
                         "hooks " + ", ".join(gemini.EVENTS) + f" and MCP server '{SERVER_NAME}'")]


_CURSOR_VERSION = {"version": 1}  # what a hooks.json of Cursor's holds besides its hooks


def _cursor(target: Target, uninstall: bool) -> list[FileChange]:
    wanted = {event: {"command": target.hook_command(event), "timeout": cursor.TIMEOUTS[event]}
              for event in cursor.EVENTS}

    def change(data: dict[str, Any]) -> dict[str, Any]:
        data = _with_hooks({**_CURSOR_VERSION, **data}, wanted, cursor.AGENT, uninstall, nested=False)
        return {} if data == _CURSOR_VERSION else data  # nothing but the version left: install made the file

    return [_json_change(cursor.hooks_path(target.scope, target.home, target.project), change,
                         "hooks " + ", ".join(cursor.EVENTS)),
            _json_change(cursor.mcp_path(target.scope, target.home, target.project),
                         lambda data: _with_server(data, None if uninstall else _server(target)),
                         f"MCP server '{SERVER_NAME}'")]


def _opencode(target: Target, uninstall: bool) -> list[FileChange]:
    path = opencode.plugin_path(target.scope, target.home, target.project)
    before = read_text(path)
    if before is not None and not before.startswith(opencode.MARKER):
        raise InvalidInput("a plugin file of this name that memvault did not write; not touched", path=str(path))
    plugin = FileChange(path, before, None if uninstall else opencode.plugin(list(target.memvault())),
                        "the plugin that runs memvault's hooks")
    server = {"type": "local", "command": [*target.memvault(), "mcp"], "enabled": True}
    return [plugin, _json_change(opencode.config_path(target.scope, target.home, target.project),
                                 lambda data: _with_server(data, None if uninstall else server, "mcp"),
                                 f"MCP server '{SERVER_NAME}'")]


def _copilot(target: Target, uninstall: bool) -> list[FileChange]:
    if target.scope == "project":
        return [_agents_md(target, uninstall)]
    return [_json_change(copilot.mcp_path(target.home),
                         lambda data: _with_server(data, None if uninstall else
                                                   _server(target, type="local", tools=["*"])),
                         f"MCP server '{SERVER_NAME}'")]


_PLANNERS: dict[str, Callable[[Target, bool], list[FileChange]]] = {
    claude_code.AGENT: _claude_code, codex.AGENT: _codex, gemini.AGENT: _gemini, cursor.AGENT: _cursor,
    opencode.AGENT: _opencode, copilot.AGENT: _copilot}
AGENTS = tuple(_PLANNERS)
