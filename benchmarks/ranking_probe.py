"""Re-orderings of the dumped LoCoMo rankings, simulated: do they raise R@10 (multi-hop above all)?

Reads the rankings ``python -m benchmarks.locomo_eval --dump FILE`` wrote (top 50 per question, one
format) and re-orders each question's list four ways, with a score of ``1 / (k + rank)``
standing in for the engine's:

- ``sessions``: the second and later hits from one session scored down (``decay`` per hit past
  ``free``), so the page spreads over more sessions;
- ``questions``: a turn scored down by the share of its sentences that end in "?" (a turn that
  asks states nothing);
- ``specifics``: a turn scored up when it names values (numbers, quoted titles, identifiers) or
  names other than the conversation's speakers, as :mod:`vault_engine.retrieval.statements`
  reads them;
- ``list-mmr``: for list questions ("What books has John read?": a plural noun after what or
  which), maximal marginal relevance over the top 30 with the turns' vectors (the vault's model).

It prints R@10 overall and multi-hop, and per conversation, beside the dumped order, so a
setting can be judged by the folds it helps.  Nothing here is built into search: these were
the candidates for the multi-hop gap (see "Tried and not kept" in docs/decisions/retrieval-ranking.md).

Usage:
    python -m benchmarks.locomo_eval --data ../shared/bench/locomo_dev.json --format chat --quick --dump dump.jsonl
    python -m benchmarks.ranking_probe --dump dump.jsonl --data ../shared/bench/locomo_dev.json [--no-vectors]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.locomo import DEFAULT_DATA, turns_of
from vault_engine.retrieval.statements import NAME, statement_of

Reorder = Callable[[dict[str, Any]], list[str]]
LIST_QUESTION = re.compile(
    r"^(what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:\w+\s+){0,2}?(\w+s)\s+"
    r"(has|have|does|do|did|is|are|were|was)\b", re.I)
NOT_PLURAL = frozenset({"is", "was", "has", "does", "this", "his", "its"})
SENTENCE = re.compile(r"(?<=[.!?])\s+")


def turns(data: list[dict[str, Any]]) -> tuple[dict[tuple[str, str], str], dict[str, frozenset[str]]]:
    """(conversation, turn id) -> the turn's text as the benchmark imports it; conversation -> its
    speakers, case folded."""
    texts: dict[tuple[str, str], str] = {}
    speakers: dict[str, frozenset[str]] = {}
    for sample in data:
        conversation = str(sample["sample_id"])
        said = turns_of(sample)
        speakers[conversation] = frozenset(t.speaker.casefold() for t in said)
        texts.update({(conversation, t.dia_id): f"{t.speaker}: {t.text}" for t in said})
    return texts, speakers


def is_list_question(question: str) -> bool:
    match = LIST_QUESTION.match(question)
    return match is not None and match.group(2).casefold() not in NOT_PLURAL


def by_score(ranking: list[str], factor: Callable[[str], float], k: float) -> list[str]:
    score = {t: factor(t) / (k + n) for n, t in enumerate(ranking)}
    return sorted(ranking, key=lambda t: -score[t])


def spread(ranking: list[str], decay: float, free: int, k: float) -> list[str]:
    seen: Counter[str] = Counter()
    out: list[str] = []
    pool = list(enumerate(ranking))
    while pool and len(out) < 10:
        best = max(range(len(pool)), key=lambda n: decay ** max(0, seen[pool[n][1].split(":")[0]] - free + 1)
                   / (k + pool[n][0]))
        _, turn = pool.pop(best)
        out.append(turn)
        seen[turn.split(":")[0]] += 1
    return out + [t for _, t in pool]


def mmr(ranking: list[str], vector: Callable[[str], np.ndarray], trade: float, k: float, depth: int = 30) -> list[str]:
    head, rest = ranking[:depth], ranking[depth:]
    relevance = {t: k / (k + n) for n, t in enumerate(head)}
    out: list[str] = []
    pool = list(head)
    while pool and len(out) < 10:
        def gain(t: str) -> float:
            return relevance[t] - trade * max((float(vector(t) @ vector(o)) for o in out), default=0.0)
        best = max(pool, key=gain)
        pool.remove(best)
        out.append(best)
    return out + pool + rest


def measure(rows: list[dict[str, Any]], reorder: Reorder) -> tuple[float, float, list[str]]:
    scores: dict[Any, list[float]] = defaultdict(list)
    for row in rows:
        top = reorder(row)[:10]
        recall = sum(g in top for g in row["gold"]) / len(row["gold"])
        for key in ("all", (row["category"],)):
            scores[key].append(recall)
            scores[(key, row["conversation"])].append(recall)

    def mean(key: Any) -> float:
        return sum(scores[key]) / len(scores[key]) if scores[key] else 0.0
    folds = [f"{mean(('all', c)):.3f} / {mean((('multi-hop',), c)):.3f}"
             for c in sorted({r["conversation"] for r in rows})]
    return mean("all"), mean(("multi-hop",)), folds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dump", type=Path, required=True, help="benchmarks.locomo_eval --dump output (one format)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-vectors", action="store_true", help="skip list-mmr (it loads the model)")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.dump.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["setup"].startswith("hybrid")]
    texts, speakers = turns(json.loads(args.data.read_text()))

    def text(row: dict[str, Any], turn: str) -> str:
        return texts.get((row["conversation"], turn), ": ")

    def asks(row: dict[str, Any], turn: str) -> float:
        sentences = [s for s in SENTENCE.split(text(row, turn).split(":", 1)[1].strip()) if s]
        return sum(s.endswith("?") for s in sentences) / len(sentences) if sentences else 0.0

    def specifics(row: dict[str, Any], turn: str) -> int:
        said = statement_of(text(row, turn).split(":", 1)[1])
        names = {t for t, kind in zip(said.tokens, said.kinds, strict=True)
                 if kind == NAME and t not in speakers[row["conversation"]]}
        return len(names) + len(said.values)

    def sessions(decay: float, free: int) -> Reorder:
        return lambda row: spread(row["ranking"], decay, free, 10.0)

    def questions(weight: float) -> Reorder:
        return lambda row: by_score(row["ranking"], lambda t: 1 - weight * asks(row, t), 10.0)

    def specific(weight: float, k: float) -> Reorder:
        return lambda row: by_score(row["ranking"], lambda t: 1 + weight * min(specifics(row, t), 2) / 2, k)

    systems: list[tuple[str, Reorder]] = [("dumped order", lambda row: row["ranking"])]
    systems += [(f"sessions decay {d} after {f}", sessions(d, f)) for d, f in ((0.9, 1), (0.9, 3), (0.7, 2))]
    systems += [(f"questions -{w}", questions(w)) for w in (0.2, 0.5)]
    systems += [(f"specifics +{w} (k {k:g})", specific(w, k)) for w, k in ((0.2, 10.0), (0.5, 5.0))]
    if not args.no_vectors:
        import tempfile

        from vault_engine.store import create_vault
        from vault_engine.vault import Vault

        needed = sorted({(r["conversation"], t) for r in rows if is_list_question(r["question"])
                         for t in r["ranking"][:30]})
        with tempfile.TemporaryDirectory(prefix="ranking-probe-") as folder:
            root = Path(folder) / "vault"
            create_vault(root, git=False)
            matrix = Vault(root).embedder().embed([texts.get(key, "") for key in needed])  # as a vault loads it
        vectors = dict(zip(needed, matrix, strict=True))

        def diverse(trade: float) -> Reorder:
            def reorder(row: dict[str, Any]) -> list[str]:
                if not is_list_question(row["question"]):
                    return list(row["ranking"])
                return mmr(row["ranking"], lambda t: vectors[(row["conversation"], t)], trade, 10.0)
            return reorder
        systems += [(f"list-mmr {trade}", diverse(trade)) for trade in (0.5, 1.0, 2.0, 3.0)]
    lists = sum(is_list_question(r["question"]) for r in rows if r["category"] == "multi-hop")
    print(f"{len(rows)} questions; list questions among multi-hop: {lists}")
    conversations = sorted({r["conversation"] for r in rows})
    print(f"| re-ordering | R@10 | multi-hop R@10 | {' | '.join(conversations)} |")
    print(f"|---|---|---|{'---|' * len(conversations)}")
    for name, reorder in systems:
        overall, multi_hop, folds = measure(rows, reorder)
        print(f"| {name} | {overall:.3f} | {multi_hop:.3f} | {' | '.join(folds)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
