"""The search indexes' lock: waited for while its holder makes progress, a holder that hangs reported,
and a holder that can stop part-way told when someone waits."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vault_engine.errors import VaultBusy
from vault_engine.locks import WriterLock

# Holds a patient lock, beats BEATS times EVERY seconds, then says whether someone waits and lets go;
# with BEATS 0 it holds in silence until its stdin closes; with "until-wanted" it beats until someone waits.
HOLDER = """
import sys, time
from pathlib import Path
from vault_engine.locks import WriterLock
lock = WriterLock(Path(sys.argv[1]), 5, "updating the search indexes", patient=True)
mode, every = sys.argv[2], float(sys.argv[3])
with lock.hold():
    print("locked", flush=True)
    if mode == "until-wanted":
        n = 0
        while not lock.wanted():
            n += 1
            lock.beat(f"vectors {n}/1000")
            time.sleep(every)
        print("made way", flush=True)
    elif int(mode) == 0:
        sys.stdin.read()
    else:
        for n in range(int(mode)):
            time.sleep(every)
            lock.beat(f"vectors {n + 1}/{mode}")
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(mode: str, every: float = 0.0) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "index.lock"), mode, str(every)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        return proc

    yield start
    for proc in started:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=10)


def _lock(tmp_path: Path, timeout: float, *, patient: bool = True) -> WriterLock:
    return WriterLock(tmp_path / "index.lock", timeout, "updating the search indexes", patient=patient)


def test_a_holder_that_makes_progress_is_waited_for_past_the_timeout(
        tmp_path: Path, holder: Callable[..., subprocess.Popen[str]]) -> None:
    proc = holder("10", 0.2)  # two seconds of work, a beat every 0.2 s
    seen: list[str] = []
    started = time.monotonic()
    with _lock(tmp_path, 0.8).hold(on_wait=seen.append):
        waited = time.monotonic() - started
    assert waited > 1.2  # well past the 0.8 s a wait without progress is given
    done = [int(note.split()[1].split("/")[0]) for note in seen]  # what a sync's bar shows meanwhile
    assert len(done) >= 3 and done == sorted(done) and done[-1] >= 8 and all(n.endswith("/10") for n in seen)
    assert proc.wait(timeout=10) == 0


def test_a_plain_lock_gives_up_after_its_timeout_whatever_the_holder_says(
        tmp_path: Path, holder: Callable[..., subprocess.Popen[str]]) -> None:
    holder("10", 0.2)
    started = time.monotonic()
    with pytest.raises(VaultBusy) as info, _lock(tmp_path, 0.5, patient=False).hold():
        pass
    assert time.monotonic() - started < 1.5
    assert "waited 0.5s" in info.value.one_line()


def test_a_holder_that_hangs_is_reported_with_its_pid(tmp_path: Path,
                                                        holder: Callable[..., subprocess.Popen[str]]) -> None:
    proc = holder("0")  # holds the lock and says nothing: stuck
    started = time.monotonic()
    with pytest.raises(VaultBusy) as info, _lock(tmp_path, 0.5).hold():
        pass
    assert 0.5 <= time.monotonic() - started < 2
    message = info.value.one_line()
    assert message == (f"vault is busy: another memvault process (pid {proc.pid}) is updating the search indexes "
                       f"and has made no progress for 0.5s ({tmp_path / 'index.lock'}); try again, or stop that "
                       "process if it hangs")
    assert info.value.exit_code == 75


def test_a_holder_is_told_that_someone_waits_and_makes_way(tmp_path: Path,
                                                           holder: Callable[..., subprocess.Popen[str]]) -> None:
    lock = _lock(tmp_path, 2.0)
    proc = holder("until-wanted", 0.05)
    assert not lock.wanted()
    with lock.hold():  # says it waits: the holder sees it at its next step and lets go
        assert proc.stdout is not None and proc.stdout.readline().strip() == "made way"
    assert not lock.wanted()  # nobody waits once the lock is had
    with lock.wanting():
        assert WriterLock(lock.path, 0, patient=True).wanted()  # a sync says so for all of its steps
    assert not lock.wanted()
    assert not WriterLock(lock.path, 0).wanted()  # a plain lock has no waiters to tell about


def test_threads_of_one_process_wait_for_each_other_patiently(tmp_path: Path) -> None:
    """A server's request thread and its watcher share one lock: the same patience, the same signal."""
    import threading

    lock = _lock(tmp_path, 0.5)
    inside, seen_wanted = threading.Event(), threading.Event()

    def work() -> None:
        with lock.hold():
            inside.set()
            for n in range(20):  # two seconds of beats, stopping early once someone waits
                if lock.wanted():
                    seen_wanted.set()
                    return
                lock.beat(f"vectors {n}/20")
                time.sleep(0.1)

    thread = threading.Thread(target=work)
    thread.start()
    assert inside.wait(5)
    time.sleep(0.2)
    with lock.hold():
        assert seen_wanted.is_set()
    thread.join(5)
