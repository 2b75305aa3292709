"""The capture queue: a session's end handed to a worker, so the agent does not wait for it.

Storing a transcript may take seconds (the language model writes the episodes'
digests), and an agent waits for its SessionEnd and PreCompact hooks.  So the
hook only writes what to capture (agent, session id, transcript path, folder,
event, time) as one small JSON file under ``.memvault/captures/`` (written
atomically and flushed to disk: a request survives a SIGKILL of the hook or of
the machine) and starts a detached worker (``memvault drain-captures``, a new
session with no terminal, stdio on ``/dev/null``), then returns.

**Draining.** :meth:`CaptureQueue.drain` holds ``captures/drain.lock``
(``flock``: released by the kernel when its holder dies, however it dies), so
only one process drains a vault at a time and each request is taken once.  It
takes the ready requests oldest first; before running one it counts the
attempt and schedules the next (so a worker killed in the middle leaves a
request that the next drain takes again once its back-off has passed); a
request that succeeds is deleted.  A failure records its error and waits
:data:`BACKOFF` before the next attempt; after :data:`MAX_ATTEMPTS` (or at once
for input that can never be read) the request is kept, marked failed, for
``memvault status`` to show.  Capturing the same transcript twice stores each
message once (:mod:`vault_engine.agents.capture`), so running a request again is always safe.

**Who drains.** The hook's worker; the next hook of any kind, which starts a
worker only when a request is ready (a directory listing, no vault opened);
and ``memvault serve``, ``memvault mcp`` and ``memvault watch``, which look
every :data:`KICK_SECONDS`.  A capture that the language model could not
finish (``LlmDeferred``, ``IngestDeferred``: the turns are buffered in
``.memvault/sessions/``) stays queued as *deferred* and is retried with the
same back-off, so its episode is written without anyone running ``watch`` or
``ingest`` by hand.

The worker's own work (opening the vault, reading each request's transcript, capturing it) is
:mod:`vault_engine.agents.capture_worker`; this module is the queue alone, light enough for every hook and
for ``memvault status``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from .fsio import write_atomic
from .locks import WriterLock

QUEUE_DIR = ".memvault/captures"
LOCK_NAME = "drain.lock"
TRANSCRIPTS_DIR = "transcripts"  # copies of transcripts the agent deletes (keep_transcript)
MAX_ATTEMPTS = 6
BACKOFF = (10.0, 60.0, 300.0, 1800.0, 7200.0)  # seconds before attempt 2, 3, ...; the last repeats
KICK_SECONDS = 60.0  # how often a long-running server looks for ready requests


@dataclass(frozen=True, slots=True)
class CaptureRequest:
    """What a SessionEnd or PreCompact hook asks to store, and how its attempts went."""

    agent: str
    session_id: str
    transcript_path: str
    cwd: str | None
    event: str  # SessionEnd closes the session (its buffered turns become an episode); PreCompact does not
    time: float  # when the hook ran (seconds since the epoch)
    attempts: int = 0
    next_try: float = 0.0  # not before this time
    last_error: str | None = None
    deferred: bool = False  # the last attempt left turns buffered for the language model
    failed: bool = False  # given up: kept only to be seen
    name: str = field(default="", compare=False)  # the file's name in the queue

    @property
    def flush(self) -> bool:
        return self.event == "SessionEnd"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("name")
        return data

    @classmethod
    def from_json(cls, data: Any, name: str) -> CaptureRequest:
        """Raises ValueError for anything but a request this module wrote."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        try:
            return cls(str(data["agent"]), str(data["session_id"]), str(data["transcript_path"]),
                       None if data.get("cwd") is None else str(data["cwd"]), str(data["event"]),
                       float(data["time"]), int(data.get("attempts", 0)), float(data.get("next_try", 0.0)),
                       None if data.get("last_error") is None else str(data["last_error"]),
                       bool(data.get("deferred")), bool(data.get("failed")), name)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a capture request ({exc})") from None


@dataclass(frozen=True, slots=True)
class QueueState:
    """The queue at a glance, for ``memvault status``."""

    pending: int  # requests still to capture (deferred ones too)
    failed: int  # given up
    oldest_seconds: float | None  # age of the oldest pending request
    last_error: str | None  # of the most recent failed attempt, pending or given up

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class DrainReport:
    """What one drain did."""

    captured: list[str] = field(default_factory=list)  # request names done
    retrying: list[str] = field(default_factory=list)
    given_up: list[str] = field(default_factory=list)
    busy: bool = False  # another process was draining: this one did nothing


class Permanent(Exception):
    """A request that can never succeed (its transcript cannot be read as the agent's): give up at once."""


Runner = Callable[[CaptureRequest], None]  # captures one request; raises on failure (deferred: see is_deferred)


def backoff(attempts: int) -> float:
    """Seconds to wait after ``attempts`` attempts before the next one."""
    return BACKOFF[min(max(attempts, 1), len(BACKOFF)) - 1]


class CaptureQueue:
    """The requests of one vault (see the module)."""

    def __init__(self, root: Path, clock: Callable[[], float] = time.time):
        self.folder = root / QUEUE_DIR
        self.clock = clock

    def put(self, agent: str, session_id: str, transcript_path: str, cwd: str | None, event: str) -> CaptureRequest:
        """Write a new request durably; its name sorts by time, so requests are taken in order."""
        now = self.clock()
        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.json"
        request = CaptureRequest(agent, session_id, transcript_path, cwd, event, now, name=name)
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(self.folder / name, json.dumps(request.to_json()) + "\n", mode=0o600)
        return request

    def keep_transcript(self, agent: str, session_id: str, data: bytes) -> Path:
        """A copy in the queue of a transcript the agent deletes once its hook returns (OpenCode's plugin
        hands its session over in a temporary file), which the worker reads instead; one per session,
        replaced by the next (the session's whole history), removed once no request names it.  ``data``:
        the transcript as the hook read it (a regular file only, no more than a transcript may hold)."""
        import hashlib

        key = hashlib.sha256(f"{agent}\0{session_id}".encode()).hexdigest()[:24]
        target = self.folder / TRANSCRIPTS_DIR / f"{key}.transcript"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, data, mode=0o600)
        return target

    def _release_transcript(self, request: CaptureRequest) -> None:
        """Remove the queue's copy of ``request``'s transcript when no other request still names it."""
        kept = Path(request.transcript_path)
        if kept.parent != self.folder / TRANSCRIPTS_DIR:
            return
        if all(r.transcript_path != request.transcript_path for r in self.requests() if r.name != request.name):
            with contextlib.suppress(OSError):
                kept.unlink()

    def requests(self) -> list[CaptureRequest]:
        """Every request in the queue, oldest first (a file that cannot be read is left out)."""
        try:
            names = sorted(n for n in os.listdir(self.folder) if n.endswith(".json"))
        except OSError:
            return []
        out = []
        for name in names:
            with contextlib.suppress(OSError, ValueError, RecursionError):
                out.append(CaptureRequest.from_json(json.loads((self.folder / name).read_text("utf-8")), name))
        return out

    def ready(self) -> list[CaptureRequest]:
        """The requests to try now: not given up, their back-off over."""
        now = self.clock()
        return [r for r in self.requests() if not r.failed and r.next_try <= now]

    def state(self) -> QueueState:
        items = self.requests()
        pending = [r for r in items if not r.failed]
        errors = sorted((r for r in items if r.last_error), key=lambda r: r.next_try if not r.failed else r.time)
        oldest = min((r.time for r in pending), default=None)
        return QueueState(len(pending), len(items) - len(pending),
                          None if oldest is None else max(0.0, self.clock() - oldest),
                          errors[-1].last_error if errors else None)

    def _save(self, request: CaptureRequest) -> None:
        write_atomic(self.folder / request.name, json.dumps(request.to_json()) + "\n", mode=0o600)

    @contextlib.contextmanager
    def _draining(self) -> Iterator[bool]:
        self.folder.mkdir(parents=True, exist_ok=True)
        with WriterLock(self.folder / LOCK_NAME, 0, what="draining the capture queue").try_hold() as held:
            yield held

    def drain(self, run: Runner, *, is_deferred: Callable[[Exception], bool] = lambda _exc: False,
              log: Callable[[str], None] = lambda _line: None) -> DrainReport:
        """Capture every ready request with ``run``, oldest first, until none is ready; at once when
        another process drains (``busy``).  A request that arrives meanwhile is taken too."""
        report = DrainReport()
        with self._draining() as held:
            if not held:
                report.busy = True
                return report
            done: set[str] = set()
            while True:
                todo = [r for r in self.ready() if r.name not in done]
                if not todo:
                    return report
                request = todo[0]
                done.add(request.name)
                self._attempt(request, run, is_deferred, log, report)

    def _attempt(self, request: CaptureRequest, run: Runner, is_deferred: Callable[[Exception], bool],
                 log: Callable[[str], None], report: DrainReport) -> None:
        attempts = request.attempts + 1
        started = replace(request, attempts=attempts, next_try=self.clock() + backoff(attempts))
        self._save(started)  # counted before it runs: a worker killed now leaves it for later, not forever
        try:
            run(started)
        except Exception as exc:
            error = " ".join(_one_line(exc).split())[:500]
            give_up = isinstance(exc, Permanent) or attempts >= MAX_ATTEMPTS
            self._save(replace(started, last_error=error, deferred=is_deferred(exc), failed=give_up))
            (report.given_up if give_up else report.retrying).append(request.name)
            log(f"capture of {request.agent} session {request.session_id} ({request.event}), attempt {attempts}: "
                f"{error}" + ("; given up" if give_up else f"; retried in {backoff(attempts):g}s"))
            return
        self._release_transcript(request)
        with contextlib.suppress(FileNotFoundError):
            (self.folder / request.name).unlink()
        report.captured.append(request.name)


def _one_line(exc: BaseException) -> str:
    one_line = getattr(exc, "one_line", None)
    return f"{type(exc).__name__}: {one_line() if callable(one_line) else exc}"


# ---------------------------------------------------------------- the worker


def has_ready(root: Path, clock: Callable[[], float] = time.time) -> bool:
    """Whether a request waits to be tried now (cheap: one listing, the small files read)."""
    folder = root / QUEUE_DIR
    try:
        if not any(n.endswith(".json") for n in os.listdir(folder)):
            return False
    except OSError:
        return False
    return bool(CaptureQueue(root, clock).ready())


def start_worker(root: Path) -> Any:
    """Start ``memvault drain-captures`` for ``root`` as a detached process (its own session, no terminal,
    stdio on /dev/null) that outlives the caller; the caller never waits for it.  Returns the process."""
    import subprocess

    from .invocation import memvault_command

    return subprocess.Popen([*memvault_command(), "--vault", str(root), "drain-captures"], cwd=str(root),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True)


def kick(root: Path) -> Any:
    """Start a worker when a request is ready (and none drains: a worker that finds the lock held exits
    at once); the process, or None.  Never raises: a queue that cannot be looked at waits for the next kick."""
    try:
        if has_ready(root) and not WriterLock(root / QUEUE_DIR / LOCK_NAME, 0).held():
            return start_worker(root)
    except OSError:
        pass
    return None


def keep_kicking(root: Path, stop: threading.Event, every: float = KICK_SECONDS) -> threading.Thread:
    """For a long-running process (serve, mcp, watch): kick now and every ``every`` seconds until ``stop``,
    reaping each worker (no zombie is left behind)."""

    def loop() -> None:
        while True:
            process = kick(root)
            if process is not None:
                with contextlib.suppress(Exception):
                    process.wait()
            if stop.wait(every):
                return

    thread = threading.Thread(target=loop, name="memvault-captures", daemon=True)
    thread.start()
    return thread
