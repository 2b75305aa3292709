#!/usr/bin/env python3
"""LoCoMo retrieval benchmark: recall@5, recall@10 and MRR of the gold evidence turns.

Each dialog turn of a conversation becomes one memory in that conversation's
own vault (imported through ``Vault.import_jsonl``, the core of ``memvault
import``, and indexed by the real sync engine with the real model); each
question (categories 1-4) is a search.  The adversarial questions (category 5: they ask about
something the conversation attributes to the other person, or never says) are scored apart, as
their own row: R@10 of their evidence turn (the turn that says what was really said), never
mixed into the averages of categories 1-4.  It prints the table for BM25 alone,
vectors alone and the hybrid, overall and per category, for each record format.

The formats are what different people would feed the vault; none of them has a
field a person would not write:

- ``chat``: a chat log as an importer writes it: ``title``, ``body`` = ``[date]
  Speaker: text``, ``source: conversation:<id>#<turn>`` (so the engine sees each
  turn between its neighbours), ``occurred_at``, the speaker as a tag.  No summary.
- ``facts``: the same turns as plain facts: no thread source, no summary, no tag (what most
  people import: a note says who it is about in its text, not in a tag).
- ``facts-tagged``: the plain facts with the speaker as a tag (comparison only).
- ``curated``: the chat log with ``summary`` filled in with the whole turn, as a
  person curating each record would (labelled: users do not write this).
- ``body``: (comparison only) plain turns with the neighbours pasted into the body.
- ``chat-maintained``: the chat log after ``memvault maintain`` (merges, cross-links and
  syntheses: an overview memory over related turns, which counts for its members' turns;
  ``MEMVAULT_SYNTHESIS_MAX_MEMBERS=0`` runs the same without syntheses).

- ``episodes``: the conversations through ``memvault ingest`` (each session replayed as a
  chat exporter gives it, cut into episodes on the offline path): the machinery and the
  figures of ``python -m benchmarks.locomo_ingest`` (R@5 of the gold turns inside the top 5 episodes;
  ``--set`` and ``--setup`` do not apply to it: it searches with the vault's defaults).

Usage:
    python -m benchmarks.locomo_eval [--data ../shared/bench/locomo_dev.json] [--format chat --format facts]
        [--cache DIR] [--dump FILE.jsonl] [--setup NAME:KEY=VALUE,...] [--set KEY=VALUE] [--quick]

Each ``--setup`` system is printed per conversation beside the defaults; with two or more of
them, the benchmark also chooses leave-one-conversation-out: for each conversation, the system with
the best R@10 on the other conversations, measured on the one left out.

``--dump`` writes every question's ranking (top 50, with each gold turn's
rank) as JSON lines; the per-category error analysis printed after the table
shows where the gold turns landed (ranks 1-5, 6-10, 11-20, 21-50, beyond 50),
which tells whether a miss is a ranking problem (a re-ranker can fix it) or a
recall problem (the lanes never found the turn).

The data is CC BY-NC 4.0 and is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import episodes  # the episodes format: LoCoMo through conversation ingestion
from benchmarks.locomo import (  # the data, the records and the vaults, shared with the benchmarks built on this one
    ALL_CATEGORIES,
    CATEGORIES,
    DEFAULT_DATA,
    FORMATS,
    clean_evidence,
    open_vault,
    turns_of,
)
from vault_engine import config as config_mod
from vault_engine.retrieval.searcher import Searcher, SearchQuery
from vault_engine.server.requests import SearchRequest as ServiceSearch
from vault_engine.server.service import MemoryService

EPISODES = "_episodes"  # an episodes format's results (benchmarks.episodes.measure), in place of the setups
DEFAULT_FORMATS = ("chat", "facts", "episodes", "curated")


PURE = {"alpha_recency": 0.0, "alpha_event_time": 0.0, "min_score": 0.0, "rerank": False, "weight_feedback": 0.0,
        "vector_drop_tags": False}
SETUPS: dict[str, dict[str, Any]] = {
    # Single lanes are pure rankings (no boosts, no score floor), so the comparison isolates the fusion.
    "bm25": {"weight_vector": 0.0, **PURE},
    "vectors": {"weight_fts": 0.0, **PURE},
    # The spec's starting point: k=60, fts 1.0, vector 1.5, one vector ranking (best lane per memory).
    "hybrid (k=60, 1.0/1.5)": {"rrf_k": 60, "weight_fts": 1.0, "weight_vector": 1.5, "vector_fusion": "max",
                               "rerank": False, "weight_feedback": 0.0, "vector_drop_tags": False},
    "hybrid (defaults, no re-ranking)": {"rerank": False},
    # The shipped defaults of memvault.toml.
    "hybrid (defaults)": {},
}
# The user's entry point: what `POST /v1/search` and MCP memory_search call (MemoryService.search,
# limit 10), with the vault's own settings, character budget included.  Not a Searcher setup.
SERVICE = "the user's search (HTTP/MCP service, limit 10)"


BUCKETS = ((1, 5), (6, 10), (11, 20), (21, 50))
DEPTH = 50


def evaluate(data: list[dict[str, Any]], fmt: str, setups: dict[str, dict[str, Any]],
             overrides: dict[str, Any], verbose: bool, cache: Path | None = None,
             dump: list[dict[str, Any]] | None = None, analyse: bool = True) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[int, list[tuple[int, float, float, float]]]] = {
        name: defaultdict(list) for name in setups
    }
    # setup -> category -> bucket label -> gold turns that landed there
    landed: dict[str, dict[int, dict[str, int]]] = {name: defaultdict(lambda: defaultdict(int)) for name in setups}
    timings: dict[str, list[float]] = defaultdict(list)
    index_seconds: list[float] = []
    # setup -> conversation -> (category, R@10) per question: the leave-one-conversation-out folds
    folds: dict[str, dict[str, list[tuple[int, float]]]] = {name: defaultdict(list) for name in setups}
    for sample in data:
        conversation = str(sample.get("sample_id", "x"))
        turns = turns_of(sample)
        known = {t.dia_id for t in turns}
        with tempfile.TemporaryDirectory(prefix="locomo-") as folder:
            vault, owners, seconds, size = open_vault(sample, fmt, cache, Path(folder))
            root = vault.root
            if seconds is not None:
                index_seconds.append(seconds)
            base = config_mod.load(root)
            for name, changes in setups.items():
                if name == SERVICE:
                    continue
                # The engine's built-in retrieval defaults, not the vault file's (a cached vault may predate them).
                retrieval = dataclasses.replace(
                    config_mod.RetrievalSettings(), **{"max_context_chars": 10**9, **overrides, **changes}
                )
                searcher = Searcher(root, dataclasses.replace(base, retrieval=retrieval), vault.embedder())
                for qa in sample["qa"]:
                    category = int(qa.get("category", 0))
                    if category not in ALL_CATEGORIES:
                        continue
                    gold = set(clean_evidence(list(qa.get("evidence") or []), known))
                    if not gold:
                        continue
                    started = time.perf_counter()
                    hits = searcher.search(SearchQuery(str(qa["question"]), limit=10)).hits
                    timings[name].append(time.perf_counter() - started)
                    ranked = _turns(hits, owners)
                    r5 = len(gold & set(ranked[:5])) / len(gold)
                    r10 = len(gold & set(ranked[:10])) / len(gold)
                    first = next((n for n, d in enumerate(ranked[:10], 1) if d in gold), None)
                    results[name][category].append((1, r5, r10, 1.0 / first if first else 0.0))
                    folds[name][conversation].append((category, r10))
                    deep = list(ranked)
                    if analyse:
                        deep_hits = searcher.search(SearchQuery(str(qa["question"]), limit=DEPTH)).hits
                        deep += [d for d in _turns(deep_hits, owners) if d not in ranked]
                    gold_ranks = {g: (deep.index(g) + 1 if g in deep[:DEPTH] else None) for g in sorted(gold)}
                    for rank in gold_ranks.values():
                        landed[name][category][_bucket(rank)] += 1
                    if dump is not None:
                        texts = {t.dia_id: f"{t.speaker}: {t.text}" for t in turns}
                        dump.append({
                            "format": fmt, "setup": name, "conversation": sample.get("sample_id"),
                            "category": ALL_CATEGORIES[category],
                            "question": qa["question"], "answer": qa.get("answer"),
                            "gold": {g: {"rank": r, "text": texts[g]} for g, r in gold_ranks.items()},
                            "r5": r5, "r10": r10,
                            "top10": [{"turn": d, "gold": d in gold, "text": texts.get(d, "")} for d in ranked[:10]],
                            "why": {h.id: h.why for h in hits[:3]},
                            "ranking": deep[:DEPTH],
                        })
                searcher.close()
            if SERVICE in setups:
                service = MemoryService(vault)
                for qa in sample["qa"]:
                    category = int(qa.get("category", 0))
                    gold = set(clean_evidence(list(qa.get("evidence") or []), known))
                    if category not in ALL_CATEGORIES or not gold:
                        continue
                    started = time.perf_counter()
                    answer = service.search(ServiceSearch.parse({"query": str(qa["question"]), "limit": 10}))
                    timings[SERVICE].append(time.perf_counter() - started)
                    ranked = _turns([_Hit(h["id"]) for h in answer["hits"]], owners)
                    r5 = len(gold & set(ranked[:5])) / len(gold)
                    r10 = len(gold & set(ranked[:10])) / len(gold)
                    first = next((n for n, d in enumerate(ranked[:10], 1) if d in gold), None)
                    results[SERVICE][category].append((1, r5, r10, 1.0 / first if first else 0.0))
                    folds[SERVICE][conversation].append((category, r10))
                service.close()
        if verbose and index_seconds:
            print(f"  {sample.get('sample_id', '?')}: {size} memories indexed in {index_seconds[-1]:.1f} s",
                  file=sys.stderr)
    summary: dict[str, dict[str, Any]] = {}
    for name, by_category in results.items():
        rows = [r for c, values in by_category.items() if c in CATEGORIES for r in values]
        summary[name] = {
            "overall": _scores(rows),
            **{ALL_CATEGORIES[c]: _scores(by_category[c]) for c in sorted(by_category)},
            "query_ms_p50": statistics.median(timings[name]) * 1000 if timings[name] else 0.0,
        }
    summary["_folds"] = {name: {c: _fold(rows) for c, rows in sorted(by.items())} for name, by in folds.items()}
    summary["_landed"] = {name: {ALL_CATEGORIES[c]: dict(b) for c, b in sorted(by.items())}
                          for name, by in landed.items()}
    summary["_meta"] = {
        "index_seconds_per_conversation": statistics.median(index_seconds) if index_seconds else None,
        "format": fmt,
        "analysed": analyse,
    }
    return summary


def _fold(rows: list[tuple[int, float]]) -> dict[str, float]:
    """One conversation's R@10 (categories 1-4), each category's and the adversarial one, with counts."""
    out: dict[str, float] = {}
    for key, wanted in (("r10", set(CATEGORIES)), *((name, {c}) for c, name in ALL_CATEGORIES.items())):
        values = [r for c, r in rows if c in wanted]
        count = "n" if key == "r10" else f"n_{key}"
        out[key], out[count] = (sum(values) / len(values) if values else 0.0), len(values)
    return out


@dataclasses.dataclass(frozen=True)
class _Hit:
    id: str


def _turns(hits: list[Any], owners: dict[str, list[str]]) -> list[str]:
    ranked: list[str] = []
    for hit in hits:
        ranked.extend(d for d in owners.get(hit.id, []) if d not in ranked)
    return ranked


def _bucket(rank: int | None) -> str:
    for low, high in BUCKETS:
        if rank is not None and low <= rank <= high:
            return f"{low}-{high}"
    return f">{DEPTH}"


def _scores(rows: list[tuple[int, float, float, float]]) -> dict[str, float]:
    if not rows:
        return {"n": 0, "r5": 0.0, "r10": 0.0, "mrr": 0.0}
    return {
        "n": len(rows),
        "r5": sum(r[1] for r in rows) / len(rows),
        "r10": sum(r[2] for r in rows) / len(rows),
        "mrr": sum(r[3] for r in rows) / len(rows),
    }


def print_table(summary: dict[str, dict[str, Any]]) -> None:
    print("| system | R@5 | R@10 | MRR | " + " | ".join(f"{c} R@10" for c in CATEGORIES.values())
          + " | adversarial R@10 (apart) | query ms p50 |")
    print("|---|---|---|---|" + "---|" * len(CATEGORIES) + "---|---|")
    for name, scores in summary.items():
        if name.startswith("_"):
            continue
        overall = scores["overall"]
        cells = [f"{scores.get(c, {}).get('r10', 0.0):.3f}" for c in ALL_CATEGORIES.values()]
        print(f"| {name} | {overall['r5']:.3f} | {overall['r10']:.3f} | {overall['mrr']:.3f} | "
              + " | ".join(cells) + f" | {scores['query_ms_p50']:.1f} |")
    meta = summary["_meta"]
    n = next(iter(v for k, v in summary.items() if not k.startswith("_")))["overall"]["n"]
    seconds = meta["index_seconds_per_conversation"]
    indexing = f"indexing {seconds:.1f} s per conversation (median, import + sync)" if seconds else "cached vaults"
    print(f"\n{n} questions (categories 1-4 with evidence; the adversarial ones apart); format={meta['format']}; "
          f"{indexing}")


def print_folds(summary: dict[str, dict[str, Any]], baseline: str = "hybrid (defaults)") -> None:
    """R@10 per conversation for every setup, and on how many of them each beats ``baseline``: a
    change is kept only when it helps on at least four of the five development conversations."""
    folds = summary["_folds"]
    if baseline not in folds or len(folds) < 2:
        return
    conversations = list(folds[baseline])
    print(f"\nPer conversation (R@10 / multi-hop / open-domain / adversarial R@10; folds better than {baseline}):")
    print("| system | " + " | ".join(conversations) + " | better on |")
    print("|---|" + "---|" * len(conversations) + "---|")
    for name, by in folds.items():
        better = sum(1 for c in conversations if by[c]["r10"] > folds[baseline][c]["r10"] + 1e-9)
        cells = [" / ".join(f"{by[c][k]:.3f}" for k in ("r10", "multi-hop", "open-domain", "adversarial"))
                 for c in conversations]
        mark = "-" if name == baseline else f"{better} of {len(conversations)}"
        print(f"| {name} | " + " | ".join(cells) + f" | {mark} |")


def print_choice(summary: dict[str, dict[str, Any]], baseline: str = "hybrid (defaults)") -> None:
    """Leave-one-conversation-out over the systems compared: for each conversation, the system with
    the best R@10 on the other four, and what it gives on the one left out.  Their total is what
    choosing among these systems is worth on conversations the choice never saw."""
    folds = {name: by for name, by in summary["_folds"].items() if name != SERVICE}
    if baseline not in folds or len(folds) < 3:
        return
    conversations = list(folds[baseline])

    def mean(name: str, among: list[str], key: str, weight: str) -> float:
        total = sum(folds[name][c][weight] for c in among)
        return float(sum(folds[name][c][key] * folds[name][c][weight] for c in among) / total) if total else 0.0

    print(f"\nLeave-one-conversation-out: the system chosen on the other conversations (best R@10 among {len(folds)}):")
    print(f"| held out | chosen | R@10 / multi-hop held out | {baseline} |")
    print("|---|---|---|---|")
    chosen: dict[str, str] = {}
    for held in conversations:
        others = [c for c in conversations if c != held]
        chosen[held] = max(sorted(folds), key=lambda n: (round(mean(n, others, "r10", "n"), 9), n == baseline))
        got, base = folds[chosen[held]][held], folds[baseline][held]
        print(f"| {held} | {chosen[held]} | {got['r10']:.3f} / {got['multi-hop']:.3f} "
              f"| {base['r10']:.3f} / {base['multi-hop']:.3f} |")

    def held_out(key: str, weight: str, pick: Any) -> float:
        total = sum(folds[baseline][c][weight] for c in conversations)
        return float(sum(folds[pick(c)][c][key] * folds[pick(c)][c][weight] for c in conversations) / total)

    print(f"| all | | {held_out('r10', 'n', chosen.get):.3f} / {held_out('multi-hop', 'n_multi-hop', chosen.get):.3f} "
          f"| {held_out('r10', 'n', lambda c: baseline):.3f} / "
          f"{held_out('multi-hop', 'n_multi-hop', lambda c: baseline):.3f} |")


def print_landing(summary: dict[str, dict[str, Any]]) -> None:
    names = [k for k in summary if not k.startswith("_")]
    name = "hybrid (defaults)" if "hybrid (defaults)" in names else names[0]
    print(f"\nWhere the gold turns landed (share of gold turns per rank band; {name}):")
    bands = [f"{low}-{high}" for low, high in BUCKETS] + [f">{DEPTH}"]
    print("| category | R@5 | R@10 | MRR | " + " | ".join(f"rank {b}" for b in bands) + " |")
    print("|---|---|---|---|" + "---|" * len(bands))
    for category, counts in summary["_landed"][name].items():
        total = sum(counts.values()) or 1
        scores = summary[name][category]
        print(f"| {category} | {scores['r5']:.3f} | {scores['r10']:.3f} | {scores['mrr']:.3f} | "
              + " | ".join(f"{counts.get(b, 0) / total:.3f}" for b in bands) + " |")


def _typed(key: str, value: str) -> Any:
    current = getattr(config_mod.RetrievalSettings(), key)
    if isinstance(current, bool):
        return value.lower() in ("1", "true", "yes", "on")
    return type(current)(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--format", action="append", choices=FORMATS, dest="formats",
                        help="a record format to measure (repeatable; default: chat, facts and curated)")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations (0: all)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a [retrieval] setting for every system, e.g. --set rrf_k=20")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--dump", type=Path, help="write every question's ranking here (JSON lines)")
    parser.add_argument("--quick", action="store_true",
                        help="only the extra --setup systems and the defaults, without the rank-band analysis")
    parser.add_argument("--cache", type=Path, help="keep the built vaults here and reuse them on later runs")
    parser.add_argument("--setup", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                        help="an extra system to compare, e.g. --setup k20:rrf_k=20,weight_vector=1.0")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"error: benchmark data not found at {args.data} (use --data)")
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        data = data[: args.conversations]
    overrides: dict[str, Any] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = _typed(key, value)
    setups = {"hybrid (defaults)": {}} if args.quick else dict(SETUPS)
    setups[SERVICE] = {}
    for item in args.setup:
        name, _, spec = item.partition(":")
        setups[name] = {k: _typed(k, v) for k, v in (pair.split("=", 1) for pair in spec.split(",") if pair)}
    dump: list[dict[str, Any]] | None = [] if args.dump else None
    results = {}
    for fmt in args.formats or DEFAULT_FORMATS:
        if not args.json:
            print(f"== format: {fmt}", file=sys.stderr)
        if fmt == "episodes":
            results[fmt] = {EPISODES: episodes.measure(data, args.cache / "episodes" if args.cache else None,
                                                       quiet=args.json)}
            continue
        results[fmt] = evaluate(data, fmt, setups, overrides, verbose=not args.json, cache=args.cache, dump=dump,
                                analyse=not args.quick or dump is not None)
    if args.dump and dump is not None:
        args.dump.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in dump), encoding="utf-8")
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for fmt, summary in results.items():
        print(f"\n### format: {fmt}\n")
        if EPISODES in summary:
            episodes.print_report(summary[EPISODES])
            continue
        print_table(summary)
        print_folds(summary)
        print_choice(summary)
        if summary["_meta"].get("analysed"):
            print_landing(summary)
    if len(results) > 1:
        print_formats(results)


def print_formats(results: dict[str, dict[str, dict[str, Any]]]) -> None:
    """The user's search (through the service) across the formats, side by side."""
    print(f"\n### {SERVICE}, by record format\n")
    print("| format | R@5 | R@10 | MRR | " + " | ".join(f"{c} R@10" for c in CATEGORIES.values())
          + " | adversarial R@10 (apart) | indexing s per conversation |")
    print("|---|---|---|---|" + "---|" * len(CATEGORIES) + "---|---|")
    for fmt, summary in results.items():
        if EPISODES in summary:
            print(_episodes_row(summary[EPISODES]))
            continue
        name = SERVICE
        scores, seconds = summary[name], summary["_meta"]["index_seconds_per_conversation"]
        label = f"{fmt} (summaries filled in by hand)" if fmt == "curated" else fmt
        cells = [f"{scores.get(c, {}).get('r10', 0.0):.3f}" for c in ALL_CATEGORIES.values()]
        indexing = f"{seconds:.1f}" if seconds else "cached"
        print(f"| {label} | {scores['overall']['r5']:.3f} | {scores['overall']['r10']:.3f} | "
              f"{scores['overall']['mrr']:.3f} | " + " | ".join(cells) + f" | {indexing} |")


def _episodes_row(result: dict[str, Any]) -> str:
    """The episodes format in the formats table: R@5 is its figure (top 5 episodes), no R@10."""
    overall, categories = result["overall"], result["categories"]
    cells = [f"{categories[c]['r5']:.3f} (R@5)" if c in categories else "" for c in CATEGORIES.values()] + [""]
    convs = result["conversations"].values()
    seconds = [c["ingest_seconds"] + c["sync_seconds"] for c in convs if not c["cached"]]
    indexing = f"{statistics.median(seconds):.1f}" if seconds else "cached"
    return (f"| episodes (`memvault ingest`, top 5 episodes) | {overall['r5']:.3f} | | {overall['mrr']:.3f} | "
            + " | ".join(cells) + f" | {indexing} |")


if __name__ == "__main__":
    main()
