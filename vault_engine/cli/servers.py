"""memvault mcp and memvault serve: the vault for agents (MCP on stdio) and for editors (local HTTP)."""

from __future__ import annotations

import click

from .options import Settings, common, echo
from .root import cli


@cli.command()
@click.option("--no-watch", is_flag=True, help="Do not keep the indexes current while files change outside.")
@click.option("--project", help="The project tool calls default to (default: the repository the server is started "
                                "in; none outside one).")
@click.option("--no-http", is_flag=True, help="Do not also answer the agent's hooks over loopback HTTP.")
@common
@click.pass_obj
def mcp(settings: Settings, no_watch: bool, project: str | None, no_http: bool) -> None:
    """Serve the vault to an agent over MCP (stdio).

    Tools: memory_search, memory_read, memory_remember, memory_correct,
    memory_forget, memory_context and memory_feedback. Context, search and
    remember default to the current project: --project, else the repository
    the server was started in (an explicit "project" or "all_projects"
    argument widens a call). Unless the vault is served already, the same
    process answers the HTTP API on a free loopback port, so the agent's hooks
    (memvault install) are answered warm.

    \b
    Example (Claude Code):
        claude mcp add memvault -- memvault mcp --vault ~/.memvault/vault
    """
    from ..server.mcp import run

    run(settings.vault_path, watch=not no_watch, project=project, http=not no_http)


@cli.command()
@click.option("--port", type=click.IntRange(0, 65535), help="TCP port on 127.0.0.1 (default: server.port, 7788; "
                                                            "0 picks a free one).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Only loopback addresses are accepted: the API is for this machine's user.")
@click.option("--no-watch", is_flag=True, help="Do not keep the indexes current while files change outside.")
@click.option("--project", help="The project requests default to (default: the repository the server is started "
                                "in; none outside one).")
@click.option("--idle-exit", type=click.FloatRange(min=1), hidden=True,
              help="Exit once no request came for this many seconds (the warm server the agent's hooks start).")
@common
@click.pass_obj
def serve(settings: Settings, port: int | None, host: str, no_watch: bool, project: str | None,
          idle_exit: float | None) -> None:
    """Serve the vault as a local HTTP JSON API (for the Obsidian plugin and scripts).

    Binds 127.0.0.1 only. Clients send the token from .memvault/serve.json
    (readable only by you) as "Authorization: Bearer TOKEN". The model and the
    indexes stay loaded between requests. Context, search and remember
    requests that name no project are about the current project: --project,
    else the repository the server was started in.

    \b
    Example:
        memvault serve --vault ~/notes/vault
        curl -H "Authorization: Bearer $(jq -r .token ~/notes/vault/.memvault/serve.json)" \\
             -d '{"query": "deploy"}' http://127.0.0.1:7788/v1/search
    """
    from ..server.http import run

    def announce(line: str) -> None:
        echo(line, err=True)

    run(settings.vault_path, host=host, port=port, watch=not no_watch, announce=announce, project=project,
        idle_exit=idle_exit)
