"""Governance commands: maintain and audit."""

from __future__ import annotations

from dataclasses import asdict

import click

from .options import Settings, common, echo, emit
from .root import cli


@cli.command()
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--replan", is_flag=True,
              help="Plan in full even when nothing changed since a run that left nothing to do.")
@common
@click.pass_obj
def maintain(settings: Settings, dry_run: bool, replan: bool) -> None:
    """Repair, expire trash, consolidate, decay, compact and balance the hot tier (idempotent)."""
    report = settings.open_vault(write=not dry_run).maintain(dry_run=dry_run, replan=replan)
    data = {
        "dry_run": dry_run,
        "actions": [a.to_json() for a in report.actions],
        "counts": report.counts(),
        "events": report.events,
        "seconds": round(report.seconds, 3),
        "notice": report.notice,
        "settled": report.settled,
        "run": report.run,
    }
    if report.notice and not settings.as_json:
        echo(report.notice, err=True)

    def human() -> None:
        for action in report.actions:
            echo(action.describe())
        counts = ", ".join(f"{k} {v}" for k, v in report.counts().items()) or "nothing to do"
        if report.settled:
            counts += " (nothing changed since the last run that left nothing to do)"
        if dry_run:
            echo(f"plan: {counts} (dry run: nothing changed)")
        else:
            echo(f"done: {counts} in {report.seconds:.1f} s"
                 + (" (undo any one: memvault rollback ID)" if report.actions else ""))
            if report.run:
                echo(f"run {report.run} (undo it all: memvault rollback --run {report.run})")

    emit(settings, data, human)


@cli.command()
@common
@click.pass_obj
def audit(settings: Settings) -> None:
    """Read-only health report: hot memories and their plans, tier budgets, invalid files, index counts."""
    report = settings.open_vault().audit()

    def human() -> None:
        share = report.hot_chars / report.hot_budget * 100 if report.hot_budget else 0
        echo(f"hot tier: {report.hot_chars} / {report.hot_budget} characters ({share:.0f}%), "
             f"{len(report.hot)} memories")
        for row in report.hot:
            lock = " protected" if row.protected else ""
            echo(f"  {row.id}  {row.type}/{row.nature}{lock}  {row.age_days} d  value {row.value:.2f}  "
                 f"{row.chars} chars  -> {row.plan}  {row.title}")
        tiers = ", ".join(f"{k} {v}" for k, v in report.tiers.items()) or "none"
        echo(f"tiers: {tiers}; trash {report.trash}"
             + (f" (next expiry {report.next_expiry})" if report.next_expiry else ""))
        echo(f"episodes not yet compacted: {report.episodes_uncompacted} (limit {report.compaction_limit})")
        planned = ", ".join(f"{k} {v}" for k, v in report.planned.items()) or "nothing"
        echo(f"maintain would: {planned}")
        echo(f"index: {report.index}")
        counts = ", ".join(f"{k} {'-' if v is None else v}" for k, v in report.counts.items())
        echo(f"index counts: {counts} ({'ok' if report.counts_ok else 'MISMATCH: run memvault sync'})")
        echo(f"invalid files: {len(report.invalid)}")
        for line in report.invalid:
            echo(f"  {line}")
        if report.conflicts:
            echo(f"conflicting versions to settle: {len(report.conflicts)}")
            for line in report.conflicts:
                echo(f"  {line}")

    emit(settings, asdict(report), human)
