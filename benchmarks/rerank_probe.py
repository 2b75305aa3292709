#!/usr/bin/env python3
"""How much could a learned re-ranker add?  A measurement on the LoCoMo development half.

For every question, the top 50 hits of the shipped search (with their lane
ranks, cosines, fused score, re-ranking effects and a few text features) are
labelled gold or not.  Then:

- ``current``: the shipped order;
- ``learned``: a logistic regression over those features, trained on four
  conversations and applied to the fifth (leave one conversation out, so no
  question is ranked by a model that saw it);
- ``oracle``: gold hits first: the ceiling of any re-ranker over these 50.

Usage (after ``python -m benchmarks.locomo_eval --cache DIR`` has built the vaults):
    python -m benchmarks.rerank_probe --cache DIR
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from benchmarks.locomo import CATEGORIES, DEFAULT_DATA, clean_evidence, turns_of
from vault_engine import config as config_mod
from vault_engine.retrieval.searcher import Hit, Searcher, SearchQuery
from vault_engine.vault import Vault

RANK_LANES = ("fts", "summary", "body", "context", "sentence", "vector")
COSINE_LANES = ("summary", "body", "context", "sentence")
_CAPITALISED = re.compile(r"(?<![.!?] )(?<!^)\b[A-Z][a-z]+")


def features(hit: Hit, top: float) -> list[float]:
    out = [1.0 / (10 + hit.lanes[lane]) if lane in hit.lanes else 0.0 for lane in RANK_LANES]
    out += [hit.similarity.get(lane, 0.0) for lane in COSINE_LANES]
    out += [hit.base, *(math.log(hit.rerank.get(name, 1.0)) for name in ("terms", "tags", "time"))]
    out += [hit.rerank.get("thread", 0.0), hit.score / top if top else 0.0]
    text = hit.summary.split("] ", 1)[-1].split(": ", 1)[-1]
    sentences = max(1, text.count(".") + text.count("!") + text.count("?"))
    out += [1.0 if text.rstrip().endswith("?") else 0.0, text.count("?") / sentences, math.log(1 + len(text)),
            math.log(1 + len(_CAPITALISED.findall(text)))]
    return out


@dataclasses.dataclass
class Row:
    conversation: str
    category: int
    question: str
    features: list[float]
    gold: bool
    rank: int
    turns: list[str]
    wanted: tuple[str, ...]


def collect(data: list[dict[str, Any]], cache: Path, fmt: str = "chat") -> list[Row]:
    rows: list[Row] = []
    for sample in data:
        name = str(sample["sample_id"])
        root = cache / fmt / name
        owners = json.loads((root / ".memvault" / "locomo-owners.json").read_text())
        base = config_mod.load(root)
        retrieval = dataclasses.replace(config_mod.RetrievalSettings(), max_context_chars=10**9)
        searcher = Searcher(root, dataclasses.replace(base, retrieval=retrieval), Vault(root).embedder())
        known = {t.dia_id for t in turns_of(sample)}
        for number, qa in enumerate(sample["qa"]):
            category = int(qa.get("category", 0))
            gold = set(clean_evidence(list(qa.get("evidence") or []), known))
            if category not in CATEGORIES or not gold:
                continue
            hits = searcher.search(SearchQuery(str(qa["question"]), limit=50)).hits
            top = hits[0].score if hits else 1.0
            for rank, hit in enumerate(hits):
                turns = owners.get(hit.id, [])
                rows.append(Row(name, category, f"{name}/{number}", features(hit, top),
                                any(t in gold for t in turns), rank, turns, tuple(sorted(gold))))
        searcher.close()
    return rows


def fit(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], l2: float = 1e-2,
        steps: int = 3000, rate: float = 0.5) -> tuple[Any, Any, Any, float]:
    mean, scale = x.mean(0), x.std(0) + 1e-9
    z = (x - mean) / scale
    w = np.zeros(z.shape[1])
    b = 0.0
    for _ in range(steps):
        error = 1 / (1 + np.exp(-(z @ w + b))) - y
        w -= rate * (z.T @ error / len(y) + l2 * w)
        b -= rate * float(error.mean())
    return mean, scale, w, b


def recall(rows: list[Row], order: npt.NDArray[np.float64]) -> dict[str, float]:
    by_question: dict[str, list[int]] = defaultdict(list)
    for at, row in enumerate(rows):
        by_question[row.question].append(at)
    per: dict[str, list[float]] = defaultdict(list)
    for members in by_question.values():
        members.sort(key=lambda at: -order[at])
        seen: list[str] = []
        for at in members:
            seen += [t for t in rows[at].turns if t not in seen]
        wanted = set(rows[members[0]].wanted)
        value = len(wanted & set(seen[:10])) / len(wanted)
        per["all"].append(value)
        per[CATEGORIES[rows[members[0]].category]].append(value)
    return {name: float(np.mean(values)) for name, values in per.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, required=True, help="the --cache folder of benchmarks.locomo_eval")
    parser.add_argument("--format", default="chat", help="which of benchmarks.locomo_eval's record formats "
                        "(default chat)")
    args = parser.parse_args()
    rows = collect(json.loads(args.data.read_text(encoding="utf-8")), args.cache, args.format)
    x = np.array([r.features for r in rows])
    y = np.array([float(r.gold) for r in rows])
    conversations = np.array([r.conversation for r in rows])
    learned = np.zeros(len(rows))
    for held_out in sorted(set(conversations)):
        train = conversations != held_out
        mean, scale, w, b = fit(x[train], y[train])
        learned[~train] = ((x[~train] - mean) / scale) @ w + b
    ranks = np.array([r.rank for r in rows], dtype=float)
    orders = {"current": -ranks, "learned (leave one conversation out)": learned,
              "oracle (gold first)": y * 100 - ranks / 100}
    print("| order of the top 50 | R@10 | " + " | ".join(CATEGORIES.values()) + " |")
    print("|---|---|" + "---|" * len(CATEGORIES))
    for name, order in orders.items():
        scores = recall(rows, order)
        cells = " | ".join(f"{scores.get(c, 0.0):.3f}" for c in CATEGORIES.values())
        print(f"| {name} | {scores['all']:.3f} | {cells} |")


if __name__ == "__main__":
    main()
