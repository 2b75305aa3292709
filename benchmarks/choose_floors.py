#!/usr/bin/env python3
"""The relevance floors, chosen over three suites at once and checked leave-one-out, from their kept answers.

Reads the rows the three floor benchmarks keep (``--answers``): the LoCoMo development
conversations (``benchmarks/floor_locomo.py``: own questions' R@10, foreign questions), the LongMemEval
development pool (``benchmarks.floor_longmemeval``: the same on haystacks) and the small-vault suite
(``benchmarks.small_vaults``: found@3 of everyday questions, unrelated questions, vaults of 1
to 300 memories).  Each row holds the evidence and meaning a search's best candidate reached (among
all candidates and among those carrying the query's names, numbers and identifiers), so any floors
can be applied to it without searching again.

The suites pull apart: a chat log's own questions are answered by some turn at any floor, so alone
they would raise the floors until small vaults answer nothing, and the small vaults alone would
lower them until chat logs answer every foreign question.  So the four floors (``relevance_floor``,
``meaning_floor``, ``named_relevance_floor``, ``named_meaning_floor``) are chosen on all three
together: the floors that find the most in small vaults (found@3, the mean over the sizes) while
answering no more foreign chat questions, and losing no more R@10, than memvault did before word
rarity was read from English (``BEFORE``: LoCoMo chat, as searched), and leaving at least
``SMALL_QUIET`` of the unrelated questions quiet at every size; ties go to the quieter chat logs.

Checked leave-one-out: each LoCoMo conversation and each vault size is held out in turn, the floors
chosen on everything else, and the held-out part measured with them, beside the shipped floors.
Last, the shipped floors on every suite, the small vaults size by size.

Usage:
    .venv/bin/python -m benchmarks.choose_floors --locomo ANSWERS/chat.json --lme LME.json --small SMALL.json

Each suite's rows come from its benchmark's ``--answers``; run them with the code whose floors are chosen.
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from benchmarks.floors import Floors, shipped_floors

RELEVANCE = [round(0.40 + 0.05 * n, 2) for n in range(11)]  # 0.40 .. 0.90
MEANING = [0.40, 0.45, 0.50, 0.55, 0.60, 9.0]
NAMED = [round(0.35 + 0.05 * n, 2) for n in range(8)] + [9.0]  # 0.35 .. 0.70, and off
NAMED_MEANING = [0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 9.0]
# LoCoMo chat as searched before this change (docs/decisions/relevance-floor.md): 0.67 of
# the foreign questions answered with no hits, 0.001 R@10 lost to the floors.
BEFORE_QUIET = 0.67
BEFORE_LOST = 0.001
SMALL_QUIET = 0.95  # the share of unrelated questions a small vault must leave quiet, at every size


@dataclass
class Suite:
    """One suite's rows as columns: evidence, meaning, named evidence, named meaning, subjects."""

    name: str
    recall: npt.NDArray[np.float64]  # own questions: the recall at stake
    own: npt.NDArray[np.float64]
    other: npt.NDArray[np.float64]  # unrelated questions
    group: npt.NDArray[np.str_]  # own rows' fold (a conversation, a haystack, a vault size)
    other_group: npt.NDArray[np.str_]

    def without(self, fold: str) -> Suite:
        keep, keep_other = self.group != fold, self.other_group != fold
        return replace(self, recall=self.recall[keep], own=self.own[keep], other=self.other[keep_other],
                       group=self.group[keep], other_group=self.other_group[keep_other])

    def only(self, fold: str) -> Suite:
        keep, keep_other = self.group == fold, self.other_group == fold
        return replace(self, recall=self.recall[keep], own=self.own[keep], other=self.other[keep_other],
                       group=self.group[keep], other_group=self.other_group[keep_other])

    def folds(self) -> list[str]:
        return sorted(set(self.group.tolist()) | set(self.other_group.tolist()), key=lambda f: (len(f), f))


def _cleared(rows: npt.NDArray[np.float64], f: Floors) -> npt.NDArray[np.bool_]:
    return ((rows[:, 4] > 0) | (rows[:, 0] >= f[0]) | (rows[:, 1] >= f[1]) | (rows[:, 2] >= f[2])
            | (rows[:, 3] >= f[3]))


def chat_suite(name: str, rows: list[dict[str, float]]) -> Suite:
    """A chat suite's rows (``eval_floor.Asked``): a question's recall is kept when the search answers;
    a foreign question is grouped with the vault it was asked of."""
    def cols(selected: list[dict[str, float]]) -> npt.NDArray[np.float64]:
        return np.array([[r["best"], r["meaning"], r.get("named_best", 0.0), r.get("named_meaning", 0.0),
                          float(r.get("about", False))] for r in selected], dtype=np.float64).reshape(-1, 5)

    own = [r for r in rows if r["own"]]
    other = [r for r in rows if not r["own"]]
    return Suite(name, np.array([r["recall"] for r in own]), cols(own), cols(other),
                 np.array([str(r["conversation"]) for r in own]), np.array([str(r["conversation"]) for r in other]))


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
    return Suite("small vaults", recall, own_cols, other_cols, np.array([str(r["size"]) for r in own]),
                 np.array([str(r["size"]) for r in other]))


def figures(suite: Suite, f: Floors) -> tuple[float, float, float]:
    """(recall without floors, recall with ``f``, share of unrelated questions quiet)."""
    plain = float(suite.recall.mean()) if len(suite.recall) else float("nan")
    floored = float((suite.recall * _cleared(suite.own, f)).mean()) if len(suite.recall) else float("nan")
    quiet = float((~_cleared(suite.other, f)).mean()) if len(suite.other) else float("nan")
    return plain, floored, quiet


def choose(locomo: Suite, small: Suite) -> Floors:
    """The floors that find the most in small vaults within the chat log's and the small vaults' bounds."""
    sizes = [small.only(size) for size in small.folds()]
    best: tuple[tuple[float, float], Floors] = ((-1.0, -1.0), (9.0, 9.0, 9.0, 9.0))
    for f in itertools.product(RELEVANCE, MEANING, NAMED, NAMED_MEANING):
        plain, floored, quiet = figures(locomo, f)
        if quiet < BEFORE_QUIET or plain - floored > BEFORE_LOST + 1e-9:
            continue
        per_size = [figures(size, f) for size in sizes]
        if any(q < SMALL_QUIET for _p, _f, q in per_size):
            continue
        score = (sum(found for _p, found, _q in per_size) / len(per_size), quiet)
        if score > best[0]:
            best = (score, f)
    return best[1]


def show(f: Floors) -> str:
    return " / ".join("off" if x > 1 else f"{x:.2f}" for x in f)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, required=True, help="benchmarks.floor_locomo's kept answers "
                        "(FORMAT.json)")
    parser.add_argument("--lme", type=Path, required=True, help="benchmarks.floor_longmemeval's kept answers")
    parser.add_argument("--small", type=Path, required=True, help="benchmarks.small_vaults's kept answers")
    args = parser.parse_args()
    locomo = chat_suite("LoCoMo chat", json.loads(args.locomo.read_text()))
    lme = chat_suite("LongMemEval", json.loads(args.lme.read_text())["asked"])
    small = small_suite(json.loads(args.small.read_text()))
    shipped: Floors = shipped_floors()
    print("floors: relevance / meaning / named relevance / named meaning\n")
    print("leave-one-out: each conversation and each vault size held out, the floors chosen on the rest\n")
    print("| held out | chosen on the rest | recall lost (found@3 for a size) | unrelated quiet | "
          "shipped: recall lost | shipped: quiet |")
    print("|---|---|---|---|---|---|")
    for suite, fold in [(locomo, c) for c in locomo.folds()] + [(small, s) for s in small.folds()]:
        chosen = choose(locomo.without(fold), small) if suite is locomo else choose(locomo, small.without(fold))
        held = suite.only(fold)
        plain, floored, quiet = figures(held, chosen)
        s_plain, s_floored, s_quiet = figures(held, shipped)
        label = f"{suite.name} {fold}" if suite is locomo else f"small vaults of {fold}"
        lost = plain - floored if suite is locomo else floored
        s_lost = s_plain - s_floored if suite is locomo else s_floored
        print(f"| {label} | {show(chosen)} | {lost:.3f} | {quiet:.3f} | {s_lost:.3f} | {s_quiet:.3f} |")
    print(f"\nchosen on everything: {show(choose(locomo, small))}; shipped: {show(shipped)}\n")
    print("| suite | recall without floors | with the shipped floors | unrelated quiet |")
    print("|---|---|---|---|")
    for suite in (locomo, lme):
        plain, floored, quiet = figures(suite, shipped)
        print(f"| {suite.name} (R@10) | {plain:.3f} | {floored:.3f} | {quiet:.3f} |")
    for size in small.folds():
        plain, floored, quiet = figures(small.only(size), shipped)
        print(f"| small vaults of {size} (found@3) | {plain:.3f} | {floored:.3f} | {quiet:.3f} |")


if __name__ == "__main__":
    main()
