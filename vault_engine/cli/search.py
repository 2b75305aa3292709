"""memvault search: hybrid search with filters and an explanation of every score."""

from __future__ import annotations

import click

from ..format.memory import TRUSTS, TYPES
from .options import Settings, common, emit
from .root import cli


@cli.command()
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 1000), help="Most hits to return (default: retrieval.limit).")
@click.option("--project", help="Only this project's memories and the global ones.")
@click.option("--path", help="Only memories whose path selectors match PATH (or that have none).")
@click.option("--type", "types", multiple=True, type=click.Choice(TYPES), help="Only this type (repeatable).")
@click.option("--trust", "trust", multiple=True, type=click.Choice((*TRUSTS, "any")),
              help="Only these trust levels (repeatable). Default: system and learned; "
                   "external sources only when asked for, and labelled.")
@click.option("--weak", is_flag=True,
              help="When no memory clears the relevance floor, list the closest anyway (marked weak).")
@click.option("--explain", is_flag=True, help="Show each lane's rank and each boost.")
@common
@click.pass_obj
def search(settings: Settings, query: str, limit: int | None, project: str | None, path: str | None,
           types: tuple[str, ...], trust: tuple[str, ...], weak: bool, explain: bool) -> None:
    """Find memories by meaning and by exact words.

    \b
    Example:
        memvault search "why does the deploy fail on staging" --project github.com/acme/api
        memvault search E1102 --explain
    """
    from ..retrieval.searcher import SearchRequest

    request = SearchRequest(query, limit=limit, project=project, path=path, types=types, trust=trust,
                            weak=weak)
    result = settings.open_vault().search(request)

    def human() -> None:
        if result.notice:
            click.echo(result.notice.replace("search with weak", "--weak"), err=True)
        for hit in result.hits:
            label = (" [external]" if hit.trust == "external" else "") + (" [weak]" if hit.weak else "")
            click.echo(f"{hit.score:.3f}  {hit.id}  {hit.title}{label}")
            detail = hit.snippet or hit.summary
            if detail:
                click.echo(f"       {detail}")
            if hit.trigger:
                click.echo(f"       when: {hit.trigger}")
            if hit.conflicts:
                click.echo(f"       conflicts with {', '.join(hit.conflicts)}: states another value")
            if explain:
                click.echo(f"       path: {hit.path}")
                for reason in hit.why:
                    click.echo(f"       - {reason}")
        if not result.hits:
            click.echo("no matches", err=True)
        for hit in result.revivable:
            click.echo(f"in the trash, matches strongly: {hit.id}  {hit.title}  "
                       f"(memvault trash restore {hit.id})", err=True)
            if explain:
                click.echo(f"       score {hit.score:.2f} >= retrieval.revive_score: trashed memories are never "
                           f"hits, a strong match is offered for revival; path: {hit.path}", err=True)

    emit(settings, result.to_json(), human)
