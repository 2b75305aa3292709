"""Agents: ``memvault hook`` (what the agent runs) and ``memvault install`` (wiring it in)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..agents.hooks import AGENTS as HOOKED
from ..config import environment
from .options import Settings, common, echo, echo_json, emit
from .root import cli

EVENTS = sorted({event for adapter in HOOKED.values() for event in adapter.EVENTS})


@cli.command("hook")
@click.argument("agent", type=click.Choice([name for name, adapter in HOOKED.items() if adapter.EVENTS]))
@click.argument("event", type=click.Choice(EVENTS))
@common
@click.pass_obj
def hook(settings: Settings, agent: str, event: str) -> None:
    """Answer an agent's hook: its JSON on stdin, its answer on stdout.

    SessionStart gives the project's context manifest, UserPromptSubmit the
    memories the prompt makes relevant (nothing when none is), PreCompact and
    SessionEnd store the session's transcript as episodes. A hook never fails
    the agent: on any error it prints nothing, exits 0 and logs one line to
    .memvault/hooks.log. `memvault install` writes these into the agent's settings.

    \b
    Example:
        echo '{"session_id": "s1", "cwd": "'$PWD'", "hook_event_name": "UserPromptSubmit",
               "prompt": "how do we deploy?"}' | memvault hook claude-code UserPromptSubmit
    """
    from ..agents.hooks import read_input, run

    stdin, oversized = read_input(sys.stdin.buffer)
    echo_json(run(agent, event, stdin, settings.vault_path, oversized=oversized), nl=False)  # the agent's answer
    _log_cache_notices(settings, f"{agent} {event}")


def _log_cache_notices(settings: Settings, hook: str) -> None:
    """A hook prints nothing but its answer: what the caches could not do goes to the hooks' log instead."""
    from ..agents.hooks import find_vault, log
    from ..index import notices

    lines = notices.take()
    if lines:
        env = environment()
        root = find_vault(settings.vault_path, env, Path.cwd())
        for line in lines:
            log(root, env, f"{hook}: {line}")


@cli.command("drain-captures", hidden=True)
@common
@click.pass_obj
def drain_captures(settings: Settings) -> None:
    """Capture the sessions the agent's hooks queued (the hooks start this in the background)."""
    from ..agents.capture_worker import drain_vault

    report = drain_vault(Path(settings.vault_path) if settings.vault_path else None)
    emit(settings, {"captured": report.captured, "retrying": report.retrying, "given_up": report.given_up,
                    "busy": report.busy},
         lambda: echo(f"captured {len(report.captured)}, retrying {len(report.retrying)}, "
                      f"given up {len(report.given_up)}" + (" (another process drains)" if report.busy else "")))


@cli.command("install")
@click.argument("agent", type=click.Choice(list(HOOKED)))
@click.option("--scope", type=click.Choice(("user", "project")), default="user", show_default=True,
              help="user: every project of this user; project: this repository's settings (to commit or share).")
@click.option("--dry-run", is_flag=True, help="Show the changes as diffs; write nothing.")
@click.option("--uninstall", is_flag=True, help="Remove exactly what install added.")
@click.option("--allow-tools", is_flag=True,
              help="claude-code: allow memvault's read-only MCP tools without asking (permissions.allow).")
@common
@click.pass_obj
def install(settings: Settings, agent: str, scope: str, dry_run: bool, uninstall: bool, allow_tools: bool) -> None:
    """Wire memvault into an agent: hooks, MCP server and instructions in its own settings files.

    claude-code, codex, gemini and cursor get hooks in their settings files,
    opencode a plugin, copilot (whose hooks cannot give context) the MCP server
    and the AGENTS.md manifest; docs/agents.md says what goes where. --scope
    project writes nothing of this machine: `memvault` from PATH, the vault
    found from the session's folder. Your own entries are kept; running it
    again changes nothing; --uninstall takes back exactly what it added.

    \b
    Example:
        memvault install claude-code --dry-run
        memvault install claude-code --scope project --allow-tools
        memvault install codex --uninstall
    """
    from ..agents.hooks import find_vault
    from ..agents.install import Target, apply, plan
    from ..invocation import memvault_command
    from ..server.mcp.tools import TOOLS

    vault = settings.open_vault()
    project = Path.cwd()

    def agents_md() -> str:
        from ..context.director import TaskRequest, build
        from ..context.project import identify

        key = identify(project).key
        return build(vault, TaskRequest("Work on this project", project=key, overview=True), record=False).markdown

    env = environment()
    # Uninstall takes the rules back whether or not the flag is given: it removes what install added.
    read_only = tuple(t.name for t in TOOLS if t.read_only) if allow_tools or (uninstall and agent == "claude-code") \
        else ()
    target = Target(agent, scope, Path(env.home or Path.home()), project, vault.root,
                    tuple(memvault_command()), codex_home=env.codex_home, agents_md=agents_md, allow_tools=read_only)
    changes = plan(target, uninstall=uninstall)
    written = [] if dry_run else apply(changes)
    if agent == "codex" and not dry_run and not uninstall:  # the tool list kept for Codex's first turn
        from ..agents.codex import MCP_PROTOCOL, MCP_STARTUP_SECONDS
        from ..server.mcp_handshake import keep_tool_list

        keep_tool_list([*memvault_command(), "--vault", str(vault.root)], MCP_PROTOCOL, project, MCP_STARTUP_SECONDS)

    def human() -> None:
        for change in changes:
            if not change.changed:
                echo(f"unchanged {change.path} ({change.what})")
            elif dry_run:
                echo(change.diff(), nl=False)
            else:
                echo(f"{change.to_json()['action']}d {change.path}: {change.what}")
        if not any(c.changed for c in changes):
            echo(f"{agent}: nothing to change")
        elif dry_run:
            echo(f"{agent}: would change {sum(c.changed for c in changes)} file(s); run without --dry-run")
        if agent == "codex" and not uninstall:
            echo("codex: new or changed hooks run once trusted: open /hooks in codex "
                 "(or run codex exec --dangerously-bypass-hook-trust)")
        if scope == "project" and not uninstall and find_vault(None, env, project) != vault.root:
            echo(f"note: from {project} the hooks find no vault or another one than {vault.root}; "
                 "put the vault above the project, or set MEMVAULT_DIR where the agent runs")

    emit(settings, {"agent": agent, "scope": scope, "dry_run": dry_run, "uninstall": uninstall,
                    "files": [c.to_json() for c in changes], "written": [str(c.path) for c in written]}, human)
