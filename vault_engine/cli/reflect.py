"""Reflection: ``memvault reflect``."""

from __future__ import annotations

import sys

import click

from ..errors import ReflectionFailed
from ..format.yamlfmt import format_datetime
from ..ingest.reflection import ReflectionReport, reflect
from .options import Settings, common, echo, emit
from .root import cli


def _report(report: ReflectionReport) -> None:
    if report.deferred_until is not None:
        echo(f"deferred until {format_datetime(report.deferred_until)} "
             f"(the model failed {report.failures} times on these events)")
        return
    for outcome in report.outcomes:
        echo(outcome.describe())
    if not report.learned:
        echo("nothing to learn" + (f" from {report.evidence} events" if report.evidence else ""))
    elif report.dry_run:
        echo(f"plan: {len(report.learned)} deltas from {report.evidence} events (dry run: nothing changed)")


@cli.command("reflect")
@click.option("--dry-run", is_flag=True, help="Print the proposed deltas; change nothing.")
@common
@click.pass_obj
def reflect_command(settings: Settings, dry_run: bool) -> None:
    """Learn from reported outcomes and corrections since the last run.

    The language model proposes deltas for inferred memories: create (a new
    trial memory), update (a new trial version), supersede, forget or noop.
    A change proposed for an explicit memory is never made: it is recorded
    as a conflict in the journal. When the model cannot answer, the events
    stay pending and a later run retries (after 1, 2, 4 ... minutes; after 8
    failures they are skipped); exit code 75.

    \b
    Example:
        memvault reflect --dry-run
        memvault reflect --json
    """
    vault = settings.open_vault(write=not dry_run)
    try:
        report = reflect(vault, llm=vault.llm(), dry_run=dry_run)
    except ReflectionFailed as exc:
        retry = (f"; will retry after {format_datetime(exc.next_try)}" if exc.next_try
                 else "; these events are skipped")
        if settings.as_json:
            emit(settings, {"error": exc.one_line(), "attempt": exc.attempt,
                            "next_try": format_datetime(exc.next_try) if exc.next_try else None}, lambda: None)
        echo(f"error: {exc.one_line()}{retry}", err=True)
        sys.exit(exc.exit_code)
    emit(settings, report.to_json(), lambda: _report(report))
