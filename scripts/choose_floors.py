#!/usr/bin/env python3
"""The relevance floors, chosen leave-one-suite-out over three suites, from their kept answers.

Reads the rows the three floor benchmarks keep (``--answers``): the LoCoMo development
conversations (``scripts/eval_floor.py``: own questions' R@10, foreign questions), the LongMemEval
development pool (``scripts/eval_floor_lme.py``: the same on haystacks) and the small-vault suite
(``scripts/eval_small_vaults.py``: found@3 of everyday questions, unrelated questions, vaults of 1
to 300 memories).  Each row holds the evidence and meaning a search's best candidate reached (among
all candidates and among those carrying the query's names, numbers and identifiers), so any floors
can be applied to it without searching again.

For every suite held out, the four floors (``relevance_floor``, ``meaning_floor``,
``named_relevance_floor``, ``named_meaning_floor``) are chosen on the other two: the floors that
leave the most unrelated questions quiet (averaged over the two suites) while costing each of them at
most ``--budget`` of its recall (R@10 for the chat suites, found@3 for the small vaults, against no
floor at all); then applied to the held-out suite and printed beside the shipped floors.  Last, the
shipped floors on every suite, the small vaults size by size.

Usage:
    .venv/bin/python scripts/choose_floors.py --locomo ANSWERS/chat.json --lme LME.json --small SMALL.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vault_engine.config import RetrievalSettings

RELEVANCE = [round(0.40 + 0.05 * n, 2) for n in range(11)]  # 0.40 .. 0.90
MEANING = [0.40, 0.45, 0.50, 0.55, 0.60, 9.0]
NAMED = [round(0.35 + 0.05 * n, 2) for n in range(8)] + [9.0]  # 0.35 .. 0.70, and off
NAMED_MEANING = [0.25, 0.30, 0.35, 0.40, 0.45, 9.0]
Floors = tuple[float, float, float, float]


@dataclass
class Suite:
    """One suite's rows as columns: for the questions it answers, what its answer (the gold turns'
    recall, or the question's memory) reached; for the unrelated ones, what the best candidate reached."""

    name: str
    # own questions: the recall at stake, and the evidence that decides whether it is kept
    recall: npt.NDArray[np.float64]
    own: npt.NDArray[np.float64]  # columns: evidence, meaning, named evidence, named meaning, subjects
    other: npt.NDArray[np.float64]  # unrelated questions, the same columns
    group: npt.NDArray[np.int64]  # own rows' group (a small vault's size; 0 for the chat suites)
    other_group: npt.NDArray[np.int64]


def _cleared(rows: npt.NDArray[np.float64], f: Floors) -> npt.NDArray[np.bool_]:
    return ((rows[:, 4] > 0) | (rows[:, 0] >= f[0]) | (rows[:, 1] >= f[1]) | (rows[:, 2] >= f[2])
            | (rows[:, 3] >= f[3]))


def chat_suite(name: str, rows: list[dict[str, float]]) -> Suite:
    """A chat suite's rows (``eval_floor.Asked``): a question's recall is kept when the search answers."""
    def cols(selected: list[dict[str, float]]) -> npt.NDArray[np.float64]:
        return np.array([[r["best"], r["meaning"], r.get("named_best", 0.0), r.get("named_meaning", 0.0),
                          float(r.get("about", False))] for r in selected], dtype=np.float64).reshape(-1, 5)

    own = [r for r in rows if r["own"]]
    other = [r for r in rows if not r["own"]]
    return Suite(name, np.array([r["recall"] for r in own]), cols(own), cols(other),
                 np.zeros(len(own), dtype=np.int64), np.zeros(len(other), dtype=np.int64))


def small_suite(rows: list[dict[str, float]]) -> Suite:
    """The small vaults' rows (``eval_small_vaults.Asked``): a question counts when its memory is in the
    first three hits and clears the floors itself (by the named floors only when it carries the
    query's specific words); an unrelated one is quiet when no candidate clears them."""
    own = [r for r in rows if r["own"]]
    other = [r for r in rows if not r["own"]]
    own_cols = np.array([[r["evidence"], r["meaning"], r["evidence"] if r["carried"] else 0.0,
                          r["meaning"] if r["carried"] else 0.0, 0.0] for r in own], dtype=np.float64)
    other_cols = np.array([[r["best"], r["best_meaning"], r["named_best"], r["named_meaning"],
                            float(r["subjects"])] for r in other], dtype=np.float64)
    recall = np.array([1.0 if 0 < r["rank"] <= 3 else 0.0 for r in own])
    return Suite("small vaults", recall, own_cols, other_cols, np.array([r["size"] for r in own]),
                 np.array([r["size"] for r in other]))


def figures(suite: Suite, f: Floors, size: int | None = None) -> tuple[float, float, float]:
    """(recall without floors, recall with ``f``, share of unrelated questions quiet)."""
    keep = np.ones(len(suite.recall), dtype=bool) if size is None else suite.group == size
    keep_other = np.ones(len(suite.other), dtype=bool) if size is None else suite.other_group == size
    recall = suite.recall[keep]
    plain = float(recall.mean()) if len(recall) else float("nan")
    floored = float((recall * _cleared(suite.own[keep], f)).mean()) if len(recall) else float("nan")
    other = suite.other[keep_other]
    quiet = float((~_cleared(other, f)).mean()) if len(other) else float("nan")
    return plain, floored, quiet


def choose(suites: list[Suite], budget: float) -> Floors:
    best: tuple[float, Floors] = (-1.0, (RELEVANCE[0], MEANING[0], NAMED[0], NAMED_MEANING[0]))
    for f in itertools.product(RELEVANCE, MEANING, NAMED, NAMED_MEANING):
        quiet = []
        for suite in suites:
            plain, floored, q = figures(suite, f)
            if plain - floored > budget:
                break
            quiet.append(q)
        else:
            score = sum(quiet) / len(quiet)
            if score > best[0]:
                best = (score, f)
    return best[1]


def show(f: Floors) -> str:
    return " / ".join("off" if x > 1 else f"{x:.2f}" for x in f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, required=True, help="eval_floor.py's kept answers (FORMAT.json)")
    parser.add_argument("--lme", type=Path, required=True, help="eval_floor_lme.py's kept answers")
    parser.add_argument("--small", type=Path, required=True, help="eval_small_vaults.py's kept answers")
    parser.add_argument("--budget", type=float, default=0.02, help="the recall a choice may cost each suite")
    args = parser.parse_args()
    suites = [chat_suite("LoCoMo chat", json.loads(args.locomo.read_text())),
              chat_suite("LongMemEval", json.loads(args.lme.read_text())["asked"]),
              small_suite(json.loads(args.small.read_text()))]
    d = RetrievalSettings()
    shipped: Floors = (d.relevance_floor, d.meaning_floor, d.named_relevance_floor, d.named_meaning_floor)
    print(f"floors: relevance / meaning / named relevance / named meaning; budget {args.budget:.2f} of recall\n")
    print("| held out | chosen on the other two | recall lost | unrelated quiet | shipped: recall lost | "
          "shipped: quiet |")
    print("|---|---|---|---|---|---|")
    for held in suites:
        chosen = choose([s for s in suites if s is not held], args.budget)
        plain, floored, quiet = figures(held, chosen)
        s_plain, s_floored, s_quiet = figures(held, shipped)
        print(f"| {held.name} | {show(chosen)} | {plain - floored:.3f} | {quiet:.3f} | {s_plain - s_floored:.3f} | "
              f"{s_quiet:.3f} |")
    print(f"\nchosen on all three: {show(choose(suites, args.budget))}; shipped: {show(shipped)}\n")
    print("| suite | recall without floors | with the shipped floors | unrelated quiet |")
    print("|---|---|---|---|")
    for suite in suites:
        sizes = sorted(set(suite.group.tolist())) if suite.name == "small vaults" else [None]
        for size in sizes:
            plain, floored, quiet = figures(suite, shipped, size)
            label = suite.name if size is None else f"{suite.name}, size {size} (found@3)"
            print(f"| {label} | {plain:.3f} | {floored:.3f} | {quiet:.3f} |")


if __name__ == "__main__":
    main()
