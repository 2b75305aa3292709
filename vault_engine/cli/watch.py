"""``memvault watch``: keep the search indexes in line with the files, in the foreground."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from .options import Settings, common, echo, echo_json
from .root import cli

if TYPE_CHECKING:
    from ..daemon.watch import WatchUpdate

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
PROGRESS_MIN_MEMORIES = 128  # fewer take a moment: a bar per edit would only clutter the log


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop``: the sync in progress finishes, none starts.

    A second signal aborts at once (the indexes stay consistent enough for the
    next sync to repair: each commits atomically and the stat cache is written last).
    """

    def handler(signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {number: signal.signal(number, handler) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


def update_json(update: WatchUpdate) -> dict[str, Any]:
    data: dict[str, Any] = {"event": "sync" if update.error is None else "error", "trigger": update.trigger,
                            "changes": update.changes, "seconds": round(update.seconds, 4)}
    if update.error is not None:
        return {**data, "error": update.error.one_line(), "retry_in": update.retry_in}
    if update.shared is not None:
        return {**data, "event": "git", **update.shared.to_json()}
    if update.learned is not None:
        return {**data, "event": "learn", "episodes": update.learned.episodes, "pending": update.learned.pending,
                "learned": update.learned.learned, "problems": list(update.learned.problems)}
    if update.filled is not None:
        filled = update.filled
        return {**data, "event": "vectors", "memories": filled.memories, "embedded": filled.embedded,
                "cached": filled.cached}
    if update.maintenance is not None:
        return {**data, "event": "maintain", "reason": update.reason, "counts": update.maintenance.counts(),
                "events": update.maintenance.events}
    report = update.report
    assert report is not None
    plan = report.plan
    return {
        **data, "added": list(plan.added), "modified": list(plan.modified), "moved": list(plan.moved),
        "deleted": list(plan.deleted), "unchanged": plan.unchanged, "parsed": report.parsed,
        "embedded": report.embedded, "cached": report.cached, "pending": report.pending,
        "invalid": [p.one_line() for p in report.problems],
        "new_invalid": [p.one_line() for p in update.new_problems], "notice": report.notice,
    }


def _print(settings: Settings, update: WatchUpdate) -> None:
    if settings.as_json:
        echo_json(json.dumps(update_json(update), ensure_ascii=False, default=str))
    elif update.report is not None and (update.changed or update.trigger == "start"):
        report = update.report
        echo(f"synced: {report.plan.summary()}; {report.vectors_line()} ({update.seconds:.2f}s)")
    if update.filled is not None and not settings.as_json:
        filled = update.filled
        echo(f"vectors built: {filled.memories} memories; {filled.embedded} texts embedded, "
             f"{filled.cached} from the cache ({update.seconds:.2f}s)")
    if update.error is not None and update.trigger in ("maintain", "learn", "git", "vectors"):
        echo(f"warning: {update.trigger} failed: {update.error.one_line()}", err=True)
    elif update.error is not None:
        echo(f"warning: sync failed: {update.error.one_line()}; retrying in {update.retry_in:g}s", err=True)
    if update.report is not None and update.report.notice and not settings.as_json:
        echo(update.report.notice, err=True)
    for problem in update.new_problems:
        echo(f"warning: {problem.one_line()}", err=True)
    if update.learned is not None and not settings.as_json:
        learned = update.learned
        if learned.episodes or learned.learned:
            echo(f"learned: {learned.episodes} episodes from buffered turns, {learned.learned} reflection "
                 f"changes ({learned.pending} turns still buffered)")
        for line in learned.problems:
            echo(f"warning: {line}", err=True)
    if update.shared is not None and not settings.as_json:
        shared = update.shared
        echo(f"git sync: {shared.committed} files committed, {shared.merged} commits merged"
             + (", pushed" if shared.pushed else "") + f" ({update.seconds:.2f}s)")
        if shared.conflicts:
            echo(f"warning: files to fix by hand (conflict markers): {', '.join(shared.conflicts)}; the next git sync "
                 "finishes the merge once they are fixed", err=True)
        kept = shared.reconciled.kept if shared.reconciled else []
        if kept:
            echo(f"kept {len(kept)} memories another machine forgot for good, whose text changed since: "
                 + ", ".join(kept), err=True)
    if update.maintenance is not None and not settings.as_json:
        counts = ", ".join(f"{k} {v}" for k, v in update.maintenance.counts().items()) or "nothing to do"
        echo(f"maintained ({update.reason}): {counts} ({update.seconds:.2f}s)")
    if update.trigger == "start":
        echo("watching for changes; press Ctrl-C to stop", err=True)


@cli.command("watch")
@click.option("--debounce", "debounce_ms", type=click.IntRange(min=0), default=None, metavar="MS",
              help="Longest a batch of changes is collected before it is synced (default: watch.debounce_ms).")
@common
@click.pass_obj
def watch_(settings: Settings, debounce_ms: int | None) -> None:
    """Sync the search indexes whenever a memory file changes, until Ctrl-C.

    Changes from any editor, `git pull` or `git checkout` are picked up; a
    burst of changes (a checkout of thousands of files) is a few syncs.
    Prints one line per sync that changed the indexes (one JSON object per
    sync with --json) and a warning per newly invalid file; a failed sync
    (vault busy) is retried. Ctrl-C or SIGTERM stops it after the sync in
    progress. Once memvault is upgraded under it, it restarts itself with
    the new version (the same process).

    \b
    Example:
        memvault watch --vault ~/notes/vault
    """
    from ..captures import keep_kicking
    from ..daemon.watch import watch
    from ..invocation import restart, stop_on_upgrade

    vault = settings.open_vault()
    bar = vault.progress
    if bar is not None:
        vault.progress = lambda done, total: bar(done, total) if total >= PROGRESS_MIN_MEMORIES else None
    stop = threading.Event()
    upgraded = stop_on_upgrade(stop)
    keep_kicking(vault.root, stop)  # the agents' queued captures are stored while it watches
    with _stop_on_signals(stop):
        watch(vault, on_report=lambda update: _print(settings, update), debounce_ms=debounce_ms, stop_event=stop,
              quiet_vault=True)
    if upgraded.is_set():
        echo("memvault was upgraded on disk: restarting with the new version", err=True)
        restart()
    echo("stopped", err=True)
