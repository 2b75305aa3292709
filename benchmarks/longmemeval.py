#!/usr/bin/env python3
"""LongMemEval S (development pool): retrieval of the evidence turns and sessions, per question type.

Each question gets its own vault, its haystack imported the user's way (:mod:`benchmarks.haystacks`:
each session its own chat log through ``Vault.import_jsonl``, both roles, positional handles, no
session id anywhere), indexed by sync with the real model and an empty embedding cache.  The question
is asked through ``MemoryService.search`` (what ``POST /v1/search`` and MCP ``memory_search`` call;
limit 100, ``weak`` on, the character cap of the hits lifted so the list is the whole ranking); the
hits map back to turns.  Plain BM25 (:mod:`benchmarks.bm25`, every turn a document ``"[date] role:
text"``) ranks the same turns in the same run.

Scored over the non-abstention questions, as LongMemEval scores turn-level retrieval:

- turn R@5, R@10: the share of the turns marked ``has_answer`` in the top k turns;
- session ``recall_any@k``, ``recall_all@k``: the turn ranking collapsed to sessions, each session
  ranked by its best turn (LongMemEval's ``evaluate_retrieval_turn2session``: the top k distinct
  sessions); any / every evidence session (``answer_session_ids``) among the top k;
- ``nDCG@10``: of that session ranking, binary relevance.

Every system is printed per question type.  ``--setup NAME:section.key=value,...`` adds a system
built and searched with those settings (its vaults apart); with two or more systems the choice among
them is checked leave-one-question-type-out: for each type, the system with the best turn R@5 +
recall_all@5 on the other types, measured on the one left out.

Cost, per haystack built in this run: index seconds (import and sync), the tokens the model read
(each text it embedded, cut at its window, [CLS] and [SEP] counted) per memory and in total, and
with ``--naive`` the same turns embedded once each by fastembed (its defaults, the same int8 graph)
in the same process: the ratios of time and tokens to that naive pass.

Usage:
    python -m benchmarks.longmemeval [--sample N] [--cache DIR] [--setup NAME:KEY=VALUE,...]
        [--naive] [--json] [--dump FILE.jsonl]

``--sample N`` asks N questions, drawn from each question type in proportion to its size (evenly
spaced within the type, in question-id order: the same N give the same questions).  ``--cache DIR``
keeps the built vaults (per system) and reuses them.  The data is read from where it lies.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import haystacks
from benchmarks.bm25 import Bm25
from benchmarks.reading import ReadCounter, naive_pass
from vault_engine.server.requests import SearchRequest
from vault_engine.server.service import MemoryService

DEFAULT = "memvault"
BM25 = "bm25"
DEPTH = 100  # hits asked of a search (the service's most)
BANDS = ((1, 5), (6, 10), (11, 20), (21, 50), (51, DEPTH))
METRICS = ("turn_r5", "turn_r10", "any5", "all5", "any10", "all10", "ndcg10")
CAP = {"retrieval.max_context_chars": 10**9}  # the hits' character cap lifted: the list is the ranking


def stratified(items: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """``size`` items drawn from each question type in proportion to its share (largest remainders),
    evenly spaced within the type in question-id order; all of them when ``size`` is 0 or more."""
    if size <= 0 or size >= len(items):
        return list(items)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in sorted(items, key=lambda i: str(i["question_id"])):
        by_type[str(item["question_type"])].append(item)
    exact = {t: size * len(group) / len(items) for t, group in by_type.items()}
    counts = {t: int(share) for t, share in exact.items()}
    for t in sorted(exact, key=lambda t: (-(exact[t] - counts[t]), t))[: size - sum(counts.values())]:
        counts[t] += 1
    out = []
    for t, group in sorted(by_type.items()):
        n = counts[t]
        out += [group[int((j + 0.5) * len(group) / n)] for j in range(n)]
    return sorted(out, key=lambda i: str(i["question_id"]))


def sessions_ranked(turns: list[str]) -> list[int]:
    """The turn ranking collapsed to sessions: each session at its best turn's place."""
    return list(dict.fromkeys(haystacks.session_of(t) for t in turns))


def scores(turns: list[str], gold: set[str], evidence: set[int]) -> dict[str, float]:
    """The metrics of one question's turn ranking (see the module docstring)."""
    sessions = sessions_ranked(turns)
    out = {f"turn_r{k}": len(gold & set(turns[:k])) / len(gold) for k in (5, 10)}
    for k in (5, 10):
        top = set(sessions[:k])
        out[f"any{k}"] = float(bool(evidence & top))
        out[f"all{k}"] = float(evidence <= top)
    gains = sum(1 / _log2(rank + 1) for rank, s in enumerate(sessions[:10], 1) if s in evidence)
    ideal = sum(1 / _log2(rank + 1) for rank in range(1, min(10, len(evidence)) + 1))
    out["ndcg10"] = gains / ideal if ideal else 0.0
    return out


def _log2(x: int) -> float:
    import math

    return math.log2(x)


def band(rank: int | None) -> str:
    for low, high in BANDS:
        if rank is not None and low <= rank <= high:
            return f"{low}-{high}"
    return f">{DEPTH}"


def searched(built: haystacks.Built, question: str) -> tuple[list[str], float]:
    """The turn ranking the user's search gives (hits mapped to their turns), and its seconds."""
    service = MemoryService(built.vault)
    try:
        started = time.perf_counter()
        answer = service.search(SearchRequest.parse({"query": question, "limit": DEPTH, "weak": True}))
        seconds = time.perf_counter() - started
    finally:
        service.close()
    ranked: list[str] = []
    for hit in answer["hits"]:
        ranked += [t for t in built.turns.get(hit["id"], []) if t not in ranked]
    return ranked, seconds


def bm25_ranked(sessions: list[list[haystacks.Turn]], question: str) -> list[str]:
    turns = [t for session in sessions for t in session]
    return [turns[i].handle for i in Bm25([t.body for t in turns]).ranking(question)][:DEPTH]


def run(items: list[dict[str, Any]], setups: dict[str, dict[str, Any]], cache: Path | None, naive: bool,
        quiet: bool, embeddings: Path | None = None) -> dict[str, Any]:
    """Every question asked of every system: the rows (one per question and system) and the costs."""
    rows: list[dict[str, Any]] = []
    costs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="lme-") as folder:
        for number, item in enumerate(items, 1):
            name = str(item["question_id"])
            sessions, evidence = haystacks.sessions_of(item)
            gold = {t.handle for s in sessions for t in s if t.answer}
            question = str(item["question"])
            kind = str(item["question_type"])
            rankings = {BM25: (bm25_ranked(sessions, question), 0.0)}
            for system, changes in setups.items():
                root = (cache / _slug(system) / name) if cache else Path(folder) / _slug(system)
                counter = ReadCounter()
                built = haystacks.open_vault(item, root, reuse=cache is not None, changes={**CAP, **changes},
                                             wrap=counter.wrap, embeddings=embeddings,
                                             cold=embeddings is None)
                cost = dict(built.saved)
                if built.cost is not None:
                    cost.update(counter.report(len(built.turns)))
                    if naive:
                        cost.update(naive_pass([t.body for s in sessions for t in s], counter))
                    built.saved.update(cost)
                    haystacks.save_cost(root, built.saved)
                costs[system].append({"question": name, **cost})
                rankings[system] = searched(built, question)
            for system, (ranked, seconds) in rankings.items():
                ranks = {g: ranked.index(g) + 1 if g in ranked else None for g in sorted(gold)}
                rows.append({"question": name, "type": kind, "system": system, "query_s": seconds,
                             **scores(ranked, gold, evidence), "gold_ranks": ranks,
                             "evidence_ranks": {s: (sessions_ranked(ranked).index(s) + 1
                                                    if s in sessions_ranked(ranked) else None)
                                                for s in sorted(evidence)}})
            if not quiet:
                mine = next(r for r in rows[::-1] if r["system"] == next(iter(setups)))
                print(f"  {number}/{len(items)} {name} ({kind}): turn R@5 {mine['turn_r5']:.2f}, "
                      f"all@5 {mine['all5']:.0f}", file=sys.stderr, flush=True)
    return {"rows": rows, "costs": dict(costs)}


def _slug(system: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in system)


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    rows = result["rows"]
    systems = list(dict.fromkeys(r["system"] for r in rows))
    types = sorted({r["type"] for r in rows})
    table: dict[str, dict[str, dict[str, float]]] = {}
    for system in systems:
        mine = [r for r in rows if r["system"] == system]
        table[system] = {"all": _mean(mine)}
        for kind in types:
            table[system][kind] = _mean([r for r in mine if r["type"] == kind])
    landed: dict[str, dict[str, int]] = {}
    for system in systems:
        counts: dict[str, int] = defaultdict(int)
        for r in rows:
            if r["system"] == system:
                for rank in r["gold_ranks"].values():
                    counts[band(rank)] += 1
        landed[system] = dict(counts)
    return {"table": table, "landed": landed, "costs": _costs(result["costs"]), "types": types,
            "query_ms_p50": {s: 1000 * statistics.median(r["query_s"] for r in rows if r["system"] == s)
                             for s in systems if s != BM25}}


def _mean(rows: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {"n": len(rows)}
    for key in METRICS:
        out[key] = sum(r[key] for r in rows) / len(rows) if rows else 0.0
    return out


def _costs(costs: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for system, items in costs.items():
        measured = [c for c in items if "tokens" in c and c.get("cold")]  # a first index's cost only
        if not measured:
            continue
        summary = {"haystacks": len(measured),
                   "index_s_p50": statistics.median(c["index_s"] for c in measured),
                   "tokens_per_memory_p50": statistics.median(c["tokens"] / c["memories"] for c in measured),
                   "tokens_total": sum(c["tokens"] for c in measured),
                   "texts_per_memory_p50": statistics.median(c["texts"] / c["memories"] for c in measured)}
        timed = [c for c in measured if "naive_s" in c]
        if timed:
            summary["naive_s_p50"] = statistics.median(c["naive_s"] for c in timed)
            summary["naive_tokens_total"] = sum(c["naive_tokens"] for c in timed)
            summary["time_ratio_p50"] = statistics.median(c["index_s"] / c["naive_s"] for c in timed)
            summary["token_ratio_p50"] = statistics.median(c["tokens"] / c["naive_tokens"] for c in timed)
        out[system] = summary
    return out


def choose(table: dict[str, dict[str, dict[str, float]]], types: list[str],
           rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Leave-one-question-type-out over the memvault systems: for each type, the system with the best
    turn R@5 + recall_all@5 over the questions of the other types, and what it gives on the held-out one."""
    systems = [s for s in table if s != BM25]
    folds = []
    for held in types:
        def fit(system: str, held: str = held) -> float:
            others = [r for r in rows if r["system"] == system and r["type"] != held]
            return float(sum(r["turn_r5"] + r["all5"] for r in others)) / max(1, len(others))
        chosen = max(systems, key=lambda s: (round(fit(s), 9), s == systems[0]))
        folds.append({"held_out": held, "chosen": chosen, "turn_r5": table[chosen][held]["turn_r5"],
                      "all5": table[chosen][held]["all5"], "default_turn_r5": table[systems[0]][held]["turn_r5"],
                      "default_all5": table[systems[0]][held]["all5"]})
    return folds


def report(summary: dict[str, Any], folds: list[dict[str, Any]]) -> None:
    table, types = summary["table"], summary["types"]
    head = "turn R@5 | turn R@10 | any@5 | all@5 | any@10 | all@10 | nDCG@10"
    for group in ["all", *types]:
        n = int(next(iter(table.values()))[group]["n"])
        print(f"\n### {group} ({n} questions)\n\n| system | {head} |\n|---|---|---|---|---|---|---|---|")
        for system, by in table.items():
            print(f"| {system} | " + " | ".join(f"{by[group][m]:.3f}" for m in METRICS) + " |")
    print("\nWhere the gold turns landed (rank bands of the turns marked has_answer):\n")
    bands = [f"{low}-{high}" for low, high in BANDS] + [f">{DEPTH}"]
    print("| system | " + " | ".join(bands) + " |\n|---|" + "---|" * len(bands))
    for system, counts in summary["landed"].items():
        total = sum(counts.values()) or 1
        print(f"| {system} | " + " | ".join(f"{counts.get(b, 0) / total:.3f}" for b in bands) + " |")
    for system, cost in summary["costs"].items():
        line = (f"\n{system}: {cost['haystacks']} haystacks indexed in this run: {cost['index_s_p50']:.1f} s each "
                f"(median, import + sync, empty embedding cache); {cost['texts_per_memory_p50']:.2f} texts and "
                f"{cost['tokens_per_memory_p50']:.0f} tokens read per memory (median), {cost['tokens_total']} in all")
        if "naive_s_p50" in cost:
            line += (f"; fastembed each turn once: {cost['naive_s_p50']:.1f} s, {cost['naive_tokens_total']} tokens "
                     f"(x{cost['time_ratio_p50']:.2f} time, x{cost['token_ratio_p50']:.2f} tokens)")
        print(line)
    for system, ms in summary["query_ms_p50"].items():
        print(f"{system}: query {ms:.0f} ms (median)")
    if folds:
        print("\nLeave-one-question-type-out (chosen on the other types by turn R@5 + all@5):\n")
        print("| held out | chosen | turn R@5 | all@5 | default turn R@5 | default all@5 |\n|---|---|---|---|---|---|")
        for f in folds:
            print(f"| {f['held_out']} | {f['chosen']} | {f['turn_r5']:.3f} | {f['all5']:.3f} "
                  f"| {f['default_turn_r5']:.3f} | {f['default_all5']:.3f} |")


def _setup(text: str) -> tuple[str, dict[str, Any]]:
    name, _, spec = text.partition(":")
    changes: dict[str, Any] = {}
    for pair in filter(None, spec.split(",")):
        key, _, value = pair.partition("=")
        if "." not in key:
            raise SystemExit(f"error: a setting is section.key=value, got {pair!r}")
        changes[key] = json.loads(value) if value[:1] in "0123456789-[{tf\"" else value
    return name, changes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=haystacks.DEFAULT_DATA)
    parser.add_argument("--sample", type=int, default=0, help="ask N questions, stratified by type (0: all)")
    parser.add_argument("--cache", type=Path, help="keep the built vaults here and reuse them")
    parser.add_argument("--setup", action="append", default=[], metavar="NAME:SECTION.KEY=VALUE,...",
                        help="another system, built and searched with these settings")
    parser.add_argument("--naive", action="store_true", help="time fastembed embedding each turn once")
    parser.add_argument("--embeddings", type=Path,
                        help="build with the embedding cache kept here (quicker rebuilds; no first-index cost)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--dump", type=Path, help="write every question's row here (JSON lines)")
    args = parser.parse_args()
    items = [i for i in haystacks.load(args.data) if not haystacks.abstention(i)]
    items = stratified(items, args.sample)
    setups: dict[str, dict[str, Any]] = {DEFAULT: {}}
    setups.update(_setup(s) for s in args.setup)
    result = run(items, setups, args.cache, args.naive, args.json, args.embeddings)
    summary = summarise(result)
    folds = choose(summary["table"], summary["types"], result["rows"]) if len(setups) > 1 else []
    if args.dump:
        args.dump.write_text("".join(json.dumps(r) + "\n" for r in result["rows"]), encoding="utf-8")
    if args.json:
        print(json.dumps({**summary, "folds": folds}, indent=2, sort_keys=True))
        return
    report(summary, folds)


if __name__ == "__main__":
    main()
