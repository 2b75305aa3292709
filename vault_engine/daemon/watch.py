"""Keep the search indexes in line with the files while editors, git and agents change them.

:func:`.changes.is_relevant` decides from a path alone whether a filesystem change can
alter what sync sees; :func:`watch` runs one sync at start, then one
incremental :meth:`Vault.sync` per debounced batch of relevant changes.  The
watcher has no indexing logic of its own, and holds the writer lock only
while a sync runs, so other writers are never shut out for long.

Batching: a batch is synced once the vault has been quiet for ``STEP_MS``, or
at the latest ``debounce_ms`` after its first change.  Changes made while a
sync runs are collected and become the next batch, so a burst of thousands of
files (a ``git checkout``) is a few syncs, however long each one takes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

from watchfiles import Change
from watchfiles import watch as watch_changes

from ..errors import InvalidInput, VaultError
from .changes import Activity, is_relevant

if TYPE_CHECKING:
    from ..governance.maintain import MaintainReport
    from ..index.embedder import Embedder
    from ..index.filling import FillReport
    from ..index.sync import SyncReport
    from ..sharing.gitsync import GitSyncResult
    from ..vault import Vault

log = logging.getLogger(__name__)

STEP_MS = 50  # quiet time that closes a batch
QUIET_SECONDS = 30.0  # a server maintains only once it has answered no request for this long
TICK_MS = 250  # longest wait without a wake-up: bounds the start-up delay and retry timing
RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)  # after a failed sync, while nothing changes

@dataclass(frozen=True, slots=True)
class WatchUpdate:
    """One sync the watcher ran: its report, or the error that stopped it."""

    trigger: str  # "start", "changes" (a batch of file changes), "retry" (after a failed sync) or "vectors"
    changes: int  # relevant file changes in the batch
    seconds: float  # how long the sync took
    report: SyncReport | None = None
    error: VaultError | None = None
    new_problems: tuple[VaultError, ...] = ()  # problems the previous sync did not report
    retry_in: float | None = None  # seconds until the next attempt when the sync failed
    maintenance: MaintainReport | None = None  # set when the update is a scheduled `maintain`
    learned: LearnReport | None = None  # set when the update is a scheduled learning step
    reason: str | None = None  # why `maintain` ran: "schedule" or "changes"
    shared: GitSyncResult | None = None  # set when the update is a scheduled `git sync`
    filled: FillReport | None = None  # set when the vectors that waited are all built

    @property
    def changed(self) -> bool:
        """Whether the sync changed the indexes."""
        return self.report is not None and not self.report.plan.empty


def _failure(exc: OSError) -> VaultError:
    return VaultError(f"sync failed: {exc.strerror or exc}", path=exc.filename)


def watch(
    vault: Vault,
    embedder: Embedder | None = None,
    *,
    on_report: Callable[[WatchUpdate], None],
    debounce_ms: int | None = None,
    stop_event: threading.Event | None = None,
    retry_seconds: Sequence[float] = RETRY_SECONDS,
    idle: Callable[[], float] | None = None,
    quiet_vault: bool = False,
) -> None:
    """Sync ``vault`` now and after every batch of file changes, until ``stop_event`` is set;
    run ``maintain`` on schedule (``watch.maintain_every_hours``) and after large batches
    (``watch.maintain_after_changes`` changed files since the last run); run ``git sync`` on
    schedule (``git.sync_every_minutes``) for a vault shared through git.

    Args:
        vault: the open vault.
        embedder: the model to embed with (default: the vault's); created once and
            kept loaded, so a batch never pays for loading it.
        on_report: called after every sync, from the watching thread.
        debounce_ms: longest a batch collects changes (default: ``watch.debounce_ms``).
        stop_event: set it to stop; the sync in progress, if any, finishes first.
        retry_seconds: delays before retrying a failed sync while nothing changes.
        idle: for a server, the seconds since it last answered a request: a ``maintain`` that is
            due waits until that reaches :data:`QUIET_SECONDS`.  A maintain holds the vault's
            writer lock for seconds, and the requests that write (a context recording what it
            delivered) would wait for it: the burst of hooks at a session's start, right after an
            agent started the server, waited up to 5 s and was refused as busy.
        quiet_vault: for a daemon that answers no request (``memvault watch``), the same wait, with
            the vault's own activity as the measure: since the watch started, or since anything
            outside ``.memvault/`` and ``.git/`` last changed (an edit, a hook's journal line).

    A sync that fails with a :class:`VaultError` (the vault is busy, the disk is
    full, the model cannot load) is reported and retried, never fatal.  Ctrl-C
    while waiting ends the watch; a caller that must never interrupt a sync
    handles SIGINT itself and sets ``stop_event`` (as ``memvault watch`` does).

    Raises:
        InvalidInput: ``debounce_ms`` is negative.
    """
    debounce = vault.config.watch.debounce_ms if debounce_ms is None else debounce_ms
    if debounce < 0:
        raise InvalidInput(f"the watch debounce must be at least 0 ms, got {debounce}")
    model = embedder if embedder is not None else vault.embedder()
    stop = stop_event if stop_event is not None else threading.Event()
    root = str(vault.root)
    activity = Activity() if quiet_vault else None
    if activity is not None:
        idle = activity.idle if idle is None else _least(idle, activity.idle)
    state = _Watching(vault, model, root, on_report, stop, tuple(retry_seconds) or RETRY_SECONDS, idle)

    def relevant(change: Change, path: str) -> bool:
        if activity is not None:
            activity.saw(root, path)
        return is_relevant(root, change, path)

    # The watcher starts before the first sync scans the disk, so no change falls
    # between the two; the first batch (or the first tick) runs the start sync.
    batches = watch_changes(
        root, watch_filter=relevant, debounce=debounce, step=STEP_MS, stop_event=stop, rust_timeout=TICK_MS,
        yield_on_timeout=True, raise_interrupt=False, ignore_permission_denied=True,
    )
    try:
        for batch in batches:
            if stop.is_set():
                break
            state.tick()
            trigger = state.trigger(batch)
            if trigger is not None:
                state.sync(trigger, batch)
                state.after_sync(batch)
            elif state.deferred:
                state.maintain_if_due()
            state.fill_round()
    finally:
        batches.close()  # releases the OS watches now, not whenever the generator is collected


def _least(*sources: Callable[[], float]) -> Callable[[], float]:
    return lambda: min(source() for source in sources)


@dataclass(slots=True)
class _Watching:
    """One watch's state between batches: failures and the next retry, problems already
    reported, changes since the last ``maintain``, and when learning runs next."""

    vault: Vault
    model: Embedder
    root: str
    on_report: Callable[[WatchUpdate], None]
    stop: threading.Event
    delays: tuple[float, ...]
    idle: Callable[[], float] | None = None  # see watch()
    deferred: bool = False  # a maintain is due and waits for the server to be idle
    failures: int = 0
    retry_at: float | None = None
    started: bool = False
    previous: set[str] = field(default_factory=set)
    changed_since_maintain: int = 0
    learn_every: float = 0.0
    next_learn: float = 0.0
    share_every: float = 0.0
    next_share: float = 0.0
    waiting: int = 0  # memories waiting for their vectors, as the last sync or fill round left them
    fill_total: int = 0  # memories waiting when the current fill began (for the progress bar)
    fill_began: float = 0.0
    filled: FillReport | None = None  # what the current fill has done so far

    def __post_init__(self) -> None:
        self.learn_every = self.vault.config.watch.learn_every_minutes * 60
        self.next_learn = time.monotonic() + self.learn_every
        self.share_every = self.vault.config.git.sync_every_minutes * 60
        self.next_share = time.monotonic() + self.share_every

    def tick(self) -> None:
        """On every batch and every quiet tick: ``git sync`` when it is due (``git.sync_every_minutes``)."""
        if self.share_every > 0 and self.started and time.monotonic() >= self.next_share and not self.stop.is_set():
            self.next_share = time.monotonic() + self.share_every
            update = _share(self.vault)
            if update.error is not None or (update.shared is not None and update.shared.changed):
                self.on_report(update)

    def trigger(self, batch: set[tuple[Change, str]]) -> str | None:
        """Why this batch (or tick) runs a sync: "start", "changes" or "retry"; None: it does not."""
        if not self.started:
            return "start"
        if batch:
            return "changes"
        if self.retry_at is not None and time.monotonic() >= self.retry_at:
            return "retry"
        return None

    def sync(self, trigger: str, batch: set[tuple[Change, str]]) -> None:
        """Run one sync and report it; a failure is reported and scheduled for a retry."""
        begin = time.perf_counter()
        try:
            # The words first: the vectors are filled a round at a time between batches (fill_round).
            report = self.vault.sync(embedder=self.model, vectors=False,
                                     paths=_changed_files(self.root, batch) if trigger == "changes" else None)
        except (VaultError, OSError) as exc:
            error = exc if isinstance(exc, VaultError) else _failure(exc)
            delay = self.delays[min(self.failures, len(self.delays) - 1)]
            self.failures += 1
            self.retry_at = time.monotonic() + delay
            log.info("sync failed (%s); retrying in %gs", error.one_line(), delay)
            self.on_report(WatchUpdate(trigger, len(batch), time.perf_counter() - begin, error=error, retry_in=delay))
        else:
            self.failures, self.retry_at = 0, None
            self.waiting = report.pending
            fresh = tuple(p for p in report.problems if p.one_line() not in self.previous)
            self.previous = {problem.one_line() for problem in report.problems}
            self.on_report(WatchUpdate(trigger, len(batch), time.perf_counter() - begin, report, new_problems=fresh))

    def after_sync(self, batch: set[tuple[Change, str]]) -> None:
        """Warm the model after the start sync; run ``maintain`` and learning when they are due."""
        if not self.started:
            self.started = True
            _warm_up(self.model)
        self.changed_since_maintain += len(batch)
        self.maintain_if_due()
        if self.learn_every > 0 and time.monotonic() >= self.next_learn and not self.stop.is_set():
            self.next_learn = time.monotonic() + self.learn_every
            self.on_report(learn(self.vault))


    def maintain_if_due(self) -> None:
        """Run ``maintain`` when it is due, once no memory waits for its vectors (it compares them)
        and, in a server, once no request came for :data:`QUIET_SECONDS` (checked again every tick)."""
        reason = maintenance_due(self.vault, self.changed_since_maintain)
        self.deferred = reason is not None and self.idle is not None and self.idle() < QUIET_SECONDS
        if reason is not None and not self.deferred and not self.stop.is_set() and not self.waiting:
            self.changed_since_maintain = 0
            self.on_report(_maintain(self.vault, self.model, reason))

    def fill_round(self) -> None:
        """Embed one round of the memories waiting for their vectors (a few seconds: changes
        that arrive meanwhile are synced before the next round); report when none waits."""
        if self.waiting <= 0 or self.stop.is_set() or self.retry_at is not None:
            return
        from ..index.filling import FillReport

        if self.filled is None:
            self.filled, self.fill_total, self.fill_began = FillReport(), self.waiting, time.perf_counter()
        try:
            # Making way for any other process that wants the indexes: the next tick carries on.
            part = self.vault.fill_vectors(embedder=self.model, rounds=1, stop=self.stop.is_set, yielding=True)
        except (VaultError, OSError) as exc:
            error = exc if isinstance(exc, VaultError) else _failure(exc)
            log.info("filling vectors failed (%s); retrying after the next change", error.one_line())
            self.waiting = 0  # the next sync says again what waits
            self.filled = None
            self.on_report(WatchUpdate("vectors", 0, 0.0, error=error))
            return
        self.filled.add(part)
        self.waiting = part.remaining
        self.fill_total = max(self.fill_total, self.filled.memories + self.waiting)
        if self.vault.progress is not None:
            self.vault.progress(self.fill_total - self.waiting, self.fill_total)
        if not self.waiting:
            filled, self.filled = self.filled, None
            self.on_report(WatchUpdate("vectors", 0, time.perf_counter() - self.fill_began, filled=filled))
            self.maintain_if_due()


def maintenance_due(vault: Vault, changed: int, now: float | None = None) -> str | None:
    """Why ``maintain`` should run now (None: not yet): the schedule, or a large batch of changes."""
    from ..governance.settled import last_maintained

    settings = vault.config.watch
    if settings.maintain_after_changes > 0 and changed >= settings.maintain_after_changes:
        return "changes"
    if settings.maintain_every_hours <= 0:
        return None
    last = last_maintained(vault.root)
    current = time.time() if now is None else now
    if last is None or current - last >= settings.maintain_every_hours * 3600:
        return "schedule"
    return None


@dataclass(frozen=True, slots=True)
class LearnReport:
    """What one scheduled learning step did."""

    episodes: int  # written from buffered conversation turns
    pending: int  # turns still buffered (waiting for more, or for the model)
    learned: int  # reflection deltas applied (conflicts included)
    problems: tuple[str, ...] = ()  # one line each: the model was unavailable, and so on


def learn(vault: Vault) -> WatchUpdate:
    """Retry the conversation compactions each session still owes, then reflect; never raises."""
    from ..errors import IngestDeferred
    from ..ingest.conversation import SESSIONS_DIR, ingest, pending_turns
    from ..ingest.reflection import reflect

    begin = time.perf_counter()
    problems: list[str] = []
    episodes = pending = learned = 0
    try:
        llm = vault.llm()
    except VaultError as exc:
        return WatchUpdate("learn", 0, time.perf_counter() - begin, error=exc)
    folder = vault.root / SESSIONS_DIR
    for buffer in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        session = buffer.stem
        try:
            if pending_turns(vault, session):
                episodes += len(ingest(vault, [], session=session, llm=llm).episodes)
        except IngestDeferred as exc:
            episodes += len(exc.result.episodes)
            problems.append(f"session {session}: {exc.one_line()}")
        except VaultError as exc:
            problems.append(f"session {session}: {exc.one_line()}")
        pending += pending_turns(vault, session)
    if vault.config.vault.learning:
        try:
            learned = len(reflect(vault, llm=llm).learned)
        except VaultError as exc:
            problems.append(f"reflect: {exc.one_line()}")
    report = LearnReport(episodes, pending, learned, tuple(problems))
    return WatchUpdate("learn", 0, time.perf_counter() - begin, learned=report)


def _share(vault: Vault) -> WatchUpdate:
    """One scheduled ``memvault git sync`` (see :mod:`vault_engine.sharing.gitsync`)."""
    from ..sharing.gitsync import git_sync

    begin = time.perf_counter()
    try:
        result = git_sync(vault, remote=vault.config.git.remote)
    except VaultError as exc:
        return WatchUpdate("git", 0, time.perf_counter() - begin, error=exc)
    return WatchUpdate("git", 0, time.perf_counter() - begin, shared=result)


def _maintain(vault: Vault, model: Embedder, reason: str) -> WatchUpdate:
    from ..governance.settled import mark_maintained

    begin = time.perf_counter()
    try:
        report = vault.maintain(embedder=model)
    except VaultError as exc:
        mark_maintained(vault.root)  # a failing run waits for the next period, not the next tick
        return WatchUpdate("maintain", 0, time.perf_counter() - begin, error=exc, reason=reason)
    return WatchUpdate("maintain", 0, time.perf_counter() - begin, maintenance=report, reason=reason)


def _changed_files(root: str, batch: set[tuple[Change, str]]) -> list[str] | None:
    """The relative paths of a batch of ``.md`` file changes; None when a folder may have
    moved (any other name), so the sync walks the whole vault instead."""
    prefix = os.path.join(root, "")
    rels = []
    for _change, path in batch:
        if not path.endswith(".md") or not path.startswith(prefix):
            return None
        rels.append(path[len(prefix) :].replace(os.sep, "/"))
    return rels


def _warm_up(model: Embedder) -> None:
    """Load the model now, so the first edit is not the one that waits for it."""
    try:
        model.embed(["memvault watch"])
    except VaultError as exc:  # the next sync that needs the model reports it
        log.info("embedding model not loaded: %s", exc.one_line())


class WatcherThread:
    """:func:`watch` in a background thread, for servers, tests and benchmarks.

    Example::

        with WatcherThread(vault, on_report=print) as watcher:
            ...  # edit files; watcher.updates lists every sync so far
    """

    def __init__(
        self,
        vault: Vault,
        embedder: Embedder | None = None,
        *,
        on_report: Callable[[WatchUpdate], None] | None = None,
        debounce_ms: int | None = None,
        retry_seconds: Sequence[float] = RETRY_SECONDS,
        idle: Callable[[], float] | None = None,
        quiet_vault: bool = False,
    ):
        self.vault = vault
        self.embedder = embedder
        self.debounce_ms = debounce_ms
        self.retry_seconds = retry_seconds
        self.idle = idle
        self.quiet_vault = quiet_vault
        self.updates: list[WatchUpdate] = []
        self.stop_event = threading.Event()
        self._on_report = on_report
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="memvault-watch", daemon=True)

    def _report(self, update: WatchUpdate) -> None:
        self.updates.append(update)
        self._ready.set()
        if self._on_report is not None:
            self._on_report(update)

    def _run(self) -> None:
        try:
            watch(self.vault, self.embedder, on_report=self._report, debounce_ms=self.debounce_ms,
                  stop_event=self.stop_event, retry_seconds=self.retry_seconds, idle=self.idle,
                  quiet_vault=self.quiet_vault)
        except BaseException as exc:  # handed to the thread that calls stop()
            self._failure = exc
        finally:
            self._ready.set()

    def start(self, timeout: float | None = None) -> WatcherThread:
        """Start watching; returns once the start sync has run, or after ``timeout`` seconds (see ``ready``)."""
        self._thread.start()
        self._ready.wait(timeout)
        self._raise()
        return self

    @property
    def ready(self) -> bool:
        """Whether the start sync has run (or the watcher has ended)."""
        return self._ready.is_set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the sync in progress; re-raises what made the watcher fail, if anything."""
        self.stop_event.set()
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise VaultError(f"the watcher did not stop within {timeout:g}s")
        self._raise()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _raise(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def __enter__(self) -> WatcherThread:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
