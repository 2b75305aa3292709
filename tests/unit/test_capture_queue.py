"""The capture queue with fake runners and a fake clock: enqueue, drain, retry with back-off, give up,
one drainer at a time, and a request left by a killed worker drained later."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from vault_engine.captures import (
    BACKOFF,
    MAX_ATTEMPTS,
    QUEUE_DIR,
    CaptureQueue,
    CaptureRequest,
    Permanent,
    backoff,
    has_ready,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def put(queue: CaptureQueue, session: str = "s1", event: str = "SessionEnd") -> CaptureRequest:
    return queue.put("claude-code", session, f"/t/{session}.jsonl", "/work/api", event)


def test_a_request_is_one_durable_file_read_back_as_written(tmp_path: Path) -> None:
    queue = CaptureQueue(tmp_path, Clock())
    request = put(queue)
    files = list((tmp_path / QUEUE_DIR).glob("*.json"))
    assert [f.name for f in files] == [request.name]
    assert files[0].stat().st_mode & 0o777 == 0o600
    assert queue.requests() == [request]
    assert request.flush and not put(queue, "s2", "PreCompact").flush


def test_drain_runs_each_ready_request_oldest_first_and_removes_it(tmp_path: Path) -> None:
    queue = CaptureQueue(tmp_path, Clock())
    for session in ("a", "b", "c"):
        put(queue, session)
    seen: list[str] = []
    report = queue.drain(lambda r: seen.append(r.session_id))
    assert seen == ["a", "b", "c"] and len(report.captured) == 3
    assert queue.requests() == [] and not has_ready(tmp_path)


def test_a_request_that_arrives_while_draining_is_taken_too(tmp_path: Path) -> None:
    queue = CaptureQueue(tmp_path, Clock())
    put(queue, "a")
    seen: list[str] = []

    def run(request: CaptureRequest) -> None:
        seen.append(request.session_id)
        if request.session_id == "a":
            put(queue, "b")

    queue.drain(run)
    assert seen == ["a", "b"]


def test_a_failure_is_retried_after_its_backoff_with_its_error_kept(tmp_path: Path) -> None:
    clock = Clock()
    queue = CaptureQueue(tmp_path, clock)
    put(queue)
    calls: list[int] = []

    def failing(request: CaptureRequest) -> None:
        calls.append(request.attempts)
        raise OSError("disk full")

    report = queue.drain(failing)
    assert calls == [1] and len(report.retrying) == 1
    (left,) = queue.requests()
    assert left.attempts == 1 and left.last_error == "OSError: disk full" and not left.failed
    assert left.next_try == clock.now + BACKOFF[0]
    queue.drain(failing)
    assert calls == [1], "tried again before its back-off passed"
    state = queue.state()
    assert (state.pending, state.failed, state.last_error) == (1, 0, "OSError: disk full")
    clock.now += BACKOFF[0]
    report = queue.drain(lambda r: calls.append(r.attempts))
    assert calls == [1, 2] and len(report.captured) == 1 and queue.requests() == []


def test_after_the_last_attempt_the_request_is_kept_as_failed(tmp_path: Path) -> None:
    clock = Clock()
    queue = CaptureQueue(tmp_path, clock)
    put(queue)

    def failing(_request: CaptureRequest) -> None:
        raise RuntimeError("model down")

    for attempt in range(1, MAX_ATTEMPTS + 1):
        queue.drain(failing)
        clock.now += backoff(attempt)
    (left,) = queue.requests()
    assert left.failed and left.attempts == MAX_ATTEMPTS
    assert queue.ready() == [] and not has_ready(tmp_path, clock)
    state = queue.state()
    assert (state.pending, state.failed, state.oldest_seconds) == (0, 1, None)
    assert state.last_error == "RuntimeError: model down"


def test_a_permanent_failure_is_given_up_at_once(tmp_path: Path) -> None:
    queue = CaptureQueue(tmp_path, Clock())
    put(queue)

    def unreadable(_request: CaptureRequest) -> None:
        raise Permanent("not a transcript")

    report = queue.drain(unreadable)
    assert len(report.given_up) == 1 and queue.requests()[0].failed


def test_a_deferred_capture_stays_queued_as_deferred(tmp_path: Path) -> None:
    clock = Clock()
    queue = CaptureQueue(tmp_path, clock)
    put(queue)

    class Deferred(Exception):
        pass

    def deferring(_request: CaptureRequest) -> None:
        raise Deferred("the model did not answer; turns buffered")

    queue.drain(deferring, is_deferred=lambda exc: isinstance(exc, Deferred))
    (left,) = queue.requests()
    assert left.deferred and not left.failed
    clock.now += BACKOFF[0]
    seen: list[bool] = []
    queue.drain(lambda r: seen.append(r.deferred))
    assert seen == [True] and queue.requests() == []


def test_concurrent_drainers_take_each_request_once(tmp_path: Path) -> None:
    for session in range(12):
        put(CaptureQueue(tmp_path, Clock()), f"s{session}")
    taken: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def run(request: CaptureRequest) -> None:
        with lock:
            taken.append(request.session_id)
        threading.Event().wait(0.01)

    def drainer() -> None:
        start.wait()
        CaptureQueue(tmp_path, Clock()).drain(run)

    threads = [threading.Thread(target=drainer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(taken) == sorted(f"s{n}" for n in range(12))


def test_a_drainer_finds_the_lock_held_and_does_nothing(tmp_path: Path) -> None:
    queue = CaptureQueue(tmp_path, Clock())
    put(queue)
    inner: list[bool] = []

    def run(_request: CaptureRequest) -> None:
        inner.append(CaptureQueue(tmp_path, Clock()).drain(lambda _r: pytest.fail("taken twice")).busy)

    queue.drain(run)
    assert inner == [True]


KILLER = """
import os, signal, sys
from pathlib import Path
from vault_engine.captures import CaptureQueue

def run(request):
    os.kill(os.getpid(), signal.SIGKILL)

CaptureQueue(Path(sys.argv[1])).drain(run)
"""


def test_a_request_of_a_killed_worker_is_drained_later(tmp_path: Path) -> None:
    queue = CaptureQueue(tmp_path)
    request = put(queue)
    done = subprocess.run([sys.executable, "-c", KILLER, str(tmp_path)], env=os.environ.copy(), timeout=60)
    assert done.returncode == -signal.SIGKILL
    (left,) = queue.requests()
    assert left.name == request.name and left.attempts == 1  # the attempt was counted before it ran
    later = Clock()
    later.now = left.next_try
    seen: list[str] = []
    report = CaptureQueue(tmp_path, later).drain(lambda r: seen.append(r.session_id))
    assert seen == ["s1"] and not report.busy and queue.requests() == []


def test_a_file_that_is_not_a_request_is_left_alone(tmp_path: Path) -> None:
    queue = CaptureQueue(tmp_path, Clock())
    put(queue)
    (tmp_path / QUEUE_DIR / "0-broken.json").write_text(json.dumps({"agent": "x"}))
    assert [r.session_id for r in queue.requests()] == ["s1"]


def test_a_transient_transcript_is_kept_until_no_request_names_it(tmp_path: Path) -> None:
    """OpenCode's plugin deletes its dump once the hook returns: the worker reads the queue's copy, one per
    session (the next dump replaces it), removed when the last request naming it is done."""
    queue = CaptureQueue(tmp_path, Clock())
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"first": 1}\n')
    kept = queue.keep_transcript("opencode", "ses_1", dump.read_bytes())
    first = queue.put("opencode", "ses_1", str(kept), "/work/api", "PreCompact")
    dump.write_text('{"first": 1}\n{"second": 2}\n')
    assert queue.keep_transcript("opencode", "ses_1", dump.read_bytes()) == kept  # the same session's copy, replaced
    queue.put("opencode", "ses_1", str(kept), "/work/api", "SessionEnd")
    dump.unlink()
    seen: list[str] = []

    def run(request: CaptureRequest) -> None:
        seen.append(Path(request.transcript_path).read_text())
        if request.name != first.name:
            assert kept.exists()

    queue.drain(run)
    assert seen == ['{"first": 1}\n{"second": 2}\n'] * 2
    assert not kept.exists() and queue.requests() == []
