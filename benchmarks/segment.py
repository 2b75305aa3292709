#!/usr/bin/env python3
"""What splitting the scripts written without spaces costs text that has none of them.

Every text field a full-text document holds passes ``segment.indexed`` and every query
``query_terms``; on English text both only look for a run and find none (at once for ASCII
text, by a scan of its characters otherwise).  Measured in one run, alternating: the
full-text documents of N synthetic memories (``stress/synthetic.py``, all ASCII) written into
a fresh Tantivy index with the segmentation as shipped, and with it replaced by the identity
(the baseline); the same with typographic punctuation in every text ("a — b", not ASCII);
then ``query_terms`` over the generator's queries, both ways.  Medians of --repeats, and their
ratio; and ``segment.indexed`` alone over every text field (the steady figure, where the whole
index step varies with the machine's load).  The words of the queries are the same both ways: checked.

    .venv/bin/python -m benchmarks.segment [--count 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stress.synthetic import Generator
from vault_engine.index import fulltext, segment
from vault_engine.index.fulltext import FullTextIndex

TEXTS = ("title", "summary", "trigger", "body")


def typographic(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its texts' first space an em dash between spaces and its last word quoted."""
    out = dict(doc)
    for name in TEXTS:
        text = str(doc[name])
        out[name] = text.replace(" ", " \u2014 ", 1) + " \u201cok\u201d" if text else text
    return out


def documents(count: int) -> list[dict[str, Any]]:
    out = []
    for memory in Generator(seed=7).memories(count):
        r = memory.record
        out.append({"id": memory.id, "title": r.get("title", ""), "summary": r.get("summary", ""),
                    "trigger": r.get("trigger", ""), "body": r.get("body", ""), "tags": list(r.get("tags", [])),
                    "type": r.get("type", "fact"), "scope": "global", "trust": "learned", "lifecycle": "proven",
                    "tier": "cold", "status": "active", "hash": memory.id, "path": f"memories/{memory.id}.md"})
    return out


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    docs = documents(args.count)
    queries = [q.text for q in Generator(seed=7).queries(2_000, args.count)] * 5
    shipped = segment.indexed

    non_ascii = [typographic(doc) for doc in docs]

    def index_all(which: list[dict[str, Any]]) -> Callable[[], None]:
        def run() -> None:
            with tempfile.TemporaryDirectory() as tmp:
                FullTextIndex(Path(tmp) / "ft").apply(which, [])
        return run

    def read_queries() -> None:
        for query in queries:
            fulltext.query_terms(query)

    def identity(text: str) -> str:
        return text

    expected = [fulltext.query_terms(q) for q in queries]
    steps = ("index", "index, typographic", "queries")
    times: dict[str, list[float]] = {f"{step} {name}": [] for step in steps for name in ("shipped", "baseline")}
    original_words = segment.words
    ways = [("shipped", shipped, original_words), ("baseline", identity, lambda text, word: word.findall(text))]
    for repeat in range(args.repeats):
        for name, indexed, split in ways if repeat % 2 == 0 else ways[::-1]:  # each goes first in turn
            segment.indexed = indexed
            segment.words = split
            times[f"index {name}"].append(timed(index_all(docs)))
            times[f"index, typographic {name}"].append(timed(index_all(non_ascii)))
            times[f"queries {name}"].append(timed(read_queries))
            assert [fulltext.query_terms(q) for q in queries] == expected, "the words of English queries changed"
    segment.indexed, segment.words = shipped, original_words
    fields = [[str(doc[name]) for doc in which for name in TEXTS] for which in (docs, non_ascii)]

    def splitting(texts: list[str]) -> Callable[[], object]:
        return lambda: [shipped(text) for text in texts]

    alone = [statistics.median(timed(splitting(f)) for _ in range(args.repeats)) for f in fields]
    print(f"{args.count} memories, {len(queries)} queries, median of {args.repeats}")
    print("| step | shipped | baseline (no segmentation) | ratio |")
    print("|---|---|---|---|")
    for step, unit, scale in (("index", "s", 1.0), ("index, typographic", "s", 1.0),
                              ("queries", "us per query", 1e6 / len(queries))):
        a = statistics.median(times[f"{step} shipped"])
        b = statistics.median(times[f"{step} baseline"])
        print(f"| {step} | {a * scale:.3f} {unit} | {b * scale:.3f} {unit} | {a / b:.3f} |")
    for label, seconds, step in (("ASCII", alone[0], "index"), ("typographic", alone[1], "index, typographic")):
        share = seconds / statistics.median(times[f"{step} shipped"])
        print(f"segment.indexed alone over every text field, {label}: {seconds:.3f} s ({share:.1%} of the index step)")


if __name__ == "__main__":
    main()
