"""A background fill of vectors makes way for whoever wants the search indexes, and carries on after;
a sync shows the fill it waits for, then its own from where that one was."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.sync import vectors_waiting
from vault_engine.locks import WriterLock
from vault_engine.store import STATE_DIR
from vault_engine.vault import Vault
from vault_engine.vault.indexes import run_filler

TOPICS = ["kubernetes ingress", "postgres vacuum", "redis eviction", "terraform state", "grafana alerts"]


class Counting(HashEmbedder):
    """The fake model, counting its batches and calling ``after`` once after each."""

    def __init__(self, after: Callable[[int], None] | None = None):
        super().__init__()
        self.batches = 0
        self.after = after
        self._within = False

    def _done(self) -> None:
        self.batches += 1
        if self.after is not None:
            self.after(self.batches)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = super().embed(texts)
        if not self._within:
            self._done()
        return out

    def embed_spans(self, texts: Sequence[str], spans: Sequence[Sequence[Sequence[tuple[int, int]]]]
                    ) -> tuple[npt.NDArray[np.float32], list[list[npt.NDArray[np.float32] | None]]]:
        self._within = True
        try:
            out = super().embed_spans(texts, spans)
        finally:
            self._within = False
        self._done()
        return out


def _queued(vault: Vault, count: int, *, long: bool = False) -> None:
    """``count`` memories searchable by their words, waiting for their vectors (``long``: one sentence
    longer than the fake model's window each, so three texts to embed, none of them a span)."""
    def body(n: int) -> str:
        topic = TOPICS[n % len(TOPICS)]
        if long:
            return f"Note {n} on {topic} says " + " ".join(f"w{n}x{k}" for k in range(90)) + "."
        return f"Note {n}: the team settled how {topic} is set up. It was decided in meeting {n}. Team {n} owns it."

    records = [json.dumps({"title": f"Note {n} on {TOPICS[n % len(TOPICS)]}", "body": body(n)}) for n in range(count)]
    assert not vault.import_jsonl(records).errors
    assert vault.sync(vectors=False).pending == count


def _other_process_lock(vault: Vault) -> WriterLock:
    """The index lock as another process (or thread) opens it: its own file handles."""
    return WriterLock(vault.index_lock.path, 5, "updating the search indexes", patient=True)


def test_a_background_fill_does_not_start_while_the_indexes_are_wanted(make_vault: Callable[..., Vault]) -> None:
    model = Counting()
    vault = Vault(make_vault().root, embedder=model)
    _queued(vault, 40)
    with _other_process_lock(vault).wanting():
        report = vault.fill_vectors(yielding=True)
    assert report.stopped and report.memories == 0 and model.batches == 0
    assert vault.fill_vectors().remaining == 0  # a fill in the foreground does not make way


def test_a_background_fill_stops_at_the_next_batch_and_keeps_what_it_embedded(
        make_vault: Callable[..., Vault]) -> None:
    other = None
    wanting = None

    def want_after_first(batches: int) -> None:  # a sync starts while the first batch is embedded
        nonlocal other, wanting
        if batches == 1:
            other = _other_process_lock(vault)
            wanting = other.wanting()
            wanting.__enter__()

    model = Counting(want_after_first)
    vault = Vault(make_vault().root, embedder=model)
    _queued(vault, 200, long=True)  # 600 texts: three batches of the model in the first group
    report = vault.fill_vectors(yielding=True)
    assert wanting is not None
    wanting.__exit__(None, None, None)
    assert report.stopped and model.batches == 1 and report.remaining > 0
    first = model.calls
    rest = vault.fill_vectors()  # what a sync that took over does
    assert rest.remaining == 0 and rest.cached >= first > 0  # the stopped batch came from the cache


def test_the_background_filler_waits_while_wanted_then_finishes(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault().root, embedder=Counting())
    _queued(vault, 60)
    other = _other_process_lock(vault)
    done = threading.Event()
    with other.wanting():
        thread = threading.Thread(target=lambda: (run_filler(vault), done.set()))
        thread.start()
        time.sleep(0.6)
        assert not done.is_set() and vectors_waiting(vault.root / STATE_DIR) == 60  # made way, waits
    thread.join(30)
    assert done.is_set() and vectors_waiting(vault.root / STATE_DIR) == 0


def test_a_sync_shows_the_fill_it_waits_for_then_carries_it_on(make_vault: Callable[..., Vault]) -> None:
    shown: list[tuple[int, int]] = []
    vault = Vault(make_vault().root, embedder=Counting(), progress=lambda done, total: shown.append((done, total)))
    _queued(vault, 30)
    other = _other_process_lock(vault)
    inside = threading.Event()

    def another_fill() -> None:  # holds the indexes for a while, saying how far it is
        with other.hold():
            inside.set()
            for n in range(1, 6):
                other.beat(f"vectors {n}/40")
                time.sleep(0.15)

    thread = threading.Thread(target=another_fill)
    thread.start()
    assert inside.wait(5)
    report = vault.sync()
    thread.join(5)
    assert report.pending == 0
    theirs = [pair for pair in shown if pair[0] <= 5]
    assert theirs and theirs == sorted(theirs) and theirs[-1][0] >= 3  # the other's progress first
    assert all(total == 40 for _, total in theirs)
    ours = shown[len(theirs):]  # then this sync's own, carried on where the other left the queue (30 of 40)
    assert ours and ours[-1] == (40, 40) and all(total == 40 and done >= 10 for done, total in ours)


def test_the_lock_file_names_the_holder_and_its_progress(make_vault: Callable[..., Vault], tmp_path: Path) -> None:
    seen: list[str] = []

    def look(_batches: int) -> None:
        seen.append(vault.index_lock.path.read_text().split("\n")[1])

    vault = Vault(make_vault().root, embedder=Counting(look))
    _queued(vault, 20)
    vault.fill_vectors()
    assert seen and all(" vectors " in line and line.endswith("/20") for line in seen)
