"""The second half of a sync: the vectors of the memories waiting for them.

A sync (:mod:`.sync`) makes the catalog and the full-text index current first,
which takes seconds even for 10,000 memories, and queues what each changed
memory must embed in the vector index's ``pending`` table.  :func:`fill` then
embeds the queue a group of memories at a time, each group committed on its
own: a search meanwhile uses the vectors already there (and says how many are
missing), and an interrupted fill leaves the rest queued for the next one.

A text is embedded once: the texts of a group are made distinct (a summary
that repeats the body, a turn and its copy), then looked up in the
:class:`~.embedding_cache.EmbeddingCache`; only the misses reach the model,
shortest first, so batches carry little padding.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .derived import COMPOSED_LANES, composed, embedded_parts, parse_span
from .embedder import Embedder
from .embedding_cache import EmbeddingCache, model_text
from .vectors import Pending, VectorRow, VectorStore

EMBED_BATCH = 256  # texts given to the model at a time (it batches them further by [embedding] batch_size)
GROUP_TEXTS = 1024  # texts per committed group: a search sees progress at least this often
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class FillReport:
    """What one fill did: texts embedded by the model, texts found in the cache, seconds in the
    model, memories whose vectors were written, and memories still waiting."""

    embedded: int = 0
    cached: int = 0
    seconds: float = 0.0
    memories: int = 0
    remaining: int = 0
    stopped: bool = False  # asked to stop (``stop``) before the queue was done

    def add(self, other: FillReport) -> None:
        self.embedded += other.embedded
        self.cached += other.cached
        self.seconds += other.seconds
        self.memories += other.memories
        self.remaining = other.remaining
        self.stopped = other.stopped


class Stopped(Exception):
    """A fill was asked to stop between two batches of the model (what was embedded is in the cache)."""


def built_share(indexed: int, waiting: int) -> int:
    """The percentage of ``indexed`` memories that have their vectors while ``waiting`` wait."""
    return int(100 * max(0, indexed - waiting) / indexed) if indexed else 100


def embed_distinct(embedder: Embedder, cache: EmbeddingCache | None, texts: Sequence[str], max_tokens: int,
                   progress: Callable[[int], None] | None = None,
                   stop: Callable[[], bool] | None = None) -> tuple[dict[str, Any], FillReport]:
    """The vector of each distinct text of ``texts`` (by the text as given), and what it cost.

    Each text is read as the model reads it (:func:`model_text`), looked up in ``cache``, and
    the misses are embedded shortest first, ``EMBED_BATCH`` at a time.  A span lane's text (see
    :data:`derived.SPAN_LANES`) is pooled from one pass over its host, which also gives the host's
    own vector; a span the model cannot pool (past its window) is embedded alone.  ``progress``
    gets the number of texts done after each batch (cache hits first).  ``stop`` is asked before
    each batch: when it says so, what was embedded goes to the cache and :class:`Stopped` is raised."""
    report = FillReport()
    spans: dict[str, tuple[str, list[tuple[int, int]]]] = {}
    read: dict[str, str] = {}
    for text in dict.fromkeys(texts):
        parsed = parse_span(text)
        if parsed is not None and parsed[1]:
            spans[text] = parsed
            read[text] = text  # keyed as it is: its host is normalised already, and its ranges point into it
        else:
            read[text] = model_text(text, max_tokens)
    wanted = list(dict.fromkeys(read.values()))
    found = cache.get_many(embedder.name, embedder.dim, wanted) if cache is not None else {}
    report.cached = len(found)
    if progress is not None and found:
        progress(len(found))
    fresh: dict[str, Any] = {}
    started = time.perf_counter()
    # Spans first: one pass over each host gives its spans' vectors and its own.
    hosts: dict[str, list[str]] = {}
    for text, (host, _ranges) in spans.items():
        if text not in found:
            hosts.setdefault(host, []).append(text)
    alone: dict[str, str] = {}  # span text -> the text embedded in its place
    ordered = sorted(hosts, key=len)

    def stopping() -> None:
        if stop is None or not stop():
            return
        if cache is not None and fresh:
            cache.put_many(embedder.name, list(fresh.items()))
        raise Stopped

    for begin in range(0, len(ordered), EMBED_BATCH):
        stopping()
        part = ordered[begin : begin + EMBED_BATCH]
        vectors, pooled = embedder.embed_spans(part, [[spans[t][1] for t in hosts[host]] for host in part])
        for host, vector, group in zip(part, vectors, pooled, strict=True):
            fresh[model_text(host, max_tokens)] = vector
            for text, span_vector in zip(hosts[host], group, strict=True):
                if span_vector is not None:
                    fresh[text] = span_vector
                else:
                    start, end = spans[text][1][0]
                    alone[text] = model_text(host[start:end], max_tokens)
        report.embedded += len(part)
        if progress is not None:
            progress(sum(len(hosts[host]) for host in part))
    missing = sorted({*(t for t in wanted if t not in found and t not in fresh and t not in spans),
                      *(t for t in alone.values() if t not in found and t not in fresh)}, key=len)
    for begin in range(0, len(missing), EMBED_BATCH):
        stopping()
        part = missing[begin : begin + EMBED_BATCH]
        fresh.update(zip(part, embedder.embed(part), strict=True))
        if progress is not None:
            progress(len(part))
    report.embedded += len(missing)
    report.seconds = time.perf_counter() - started
    for text, instead in alone.items():
        fresh[text] = fresh[instead] if instead in fresh else found[instead]
    if cache is not None and fresh:
        cache.put_many(embedder.name, list(fresh.items()))
    found.update(fresh)
    return {text: found[key] for text, key in read.items()}, report


def vector_rows(texts: Sequence[tuple[str, int, str]], by_text: dict[str, Any]) -> list[VectorRow]:
    """One row per (lane, chunk, text); a composed lane's vector is the mean of its parts'."""
    rows = []
    for lane, chunk, text in texts:
        vector: npt.NDArray[np.float32] = (
            composed([by_text[part] for part in embedded_parts(lane, text)]) if lane in COMPOSED_LANES
            else by_text[text])
        rows.append(VectorRow(lane, chunk, vector))
    return rows


def _groups(pending: Sequence[Pending]) -> list[list[Pending]]:
    groups: list[list[Pending]] = [[]]
    size = 0
    for item in pending:
        if groups[-1] and size + len(item.texts) > GROUP_TEXTS:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += len(item.texts)
    return [group for group in groups if group]


def fill(vectors: VectorStore, embedder: Embedder, cache: EmbeddingCache | None, max_tokens: int, *,
         progress: Progress | None = None, max_memories: int | None = None,
         stop: Callable[[], bool] | None = None) -> FillReport:
    """Embed the queued memories (at most ``max_memories``; all by default) and store their
    vectors, one committed group at a time; ``stop`` is asked between batches of the model (a
    group cut short stays queued, what it embedded is in the cache)."""
    pending = vectors.pending(limit=max_memories)
    total_texts = sum(len({part for lane, _c, text in item.texts for part in embedded_parts(lane, text)})
                      for item in pending)
    report = FillReport()
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done = min(total_texts, done + count)
        if progress is not None:
            progress(done, total_texts)

    for group in _groups(pending):
        texts = [part for item in group for lane, _c, text in item.texts for part in embedded_parts(lane, text)]
        try:
            by_part, part_report = embed_distinct(embedder, cache, texts, max_tokens, advance, stop)
        except Stopped:
            report.stopped = True
            break
        report.add(part_report)
        settled = vectors.settle([(item.id, item.hash, vector_rows(item.texts, by_part)) for item in group])
        report.memories += settled
    if progress is not None and total_texts and done < total_texts and not report.stopped:
        progress(total_texts, total_texts)  # a bar that was drawn is closed
    report.remaining = vectors.pending_count()
    return report
