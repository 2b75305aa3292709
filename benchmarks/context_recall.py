#!/usr/bin/env python3
"""The context director on LoCoMo: how much of a question's evidence its manifest lists, per budget.

Each conversation of the development half is a user's vault: its turns imported as a chat log
(:mod:`benchmarks.locomo`, ``memvault import`` then sync with the real model).  Every question of
categories 1-4 is asked as a task through :func:`vault_engine.context.director.build`, the core of
``memvault context --task QUESTION --budget N`` (recorded, as a user's call is: the manifest carries
the feedback line), at each budget.  Evidence recall is the share of the question's gold turns
whose memory id the manifest lists (resident or indexed).

Printed per budget: recall overall, per category and per conversation; the memories listed; the
characters used and their share of the conversation's characters (the imported turns' text); and
the ceiling: the recall of a budget nothing is cut for, i.e. every candidate the director found.
No setting of the director is tuned on this data; the per-conversation rows show how each
conversation fares on its own (what a leave-one-conversation-out fold would be measured on).

Usage:
    python -m benchmarks.context_recall [--data ../shared/bench/locomo_dev.json] [--cache DIR]
        [--budgets 2000,4000,6000] [--no-ceiling] [--conversations N] [--every K] [--json]

``--every K`` asks every K-th question only (a quick look); ``--cache`` keeps the built vaults
(each run works on a copy, so the recorded deliveries never change the cache).  The figures of an
older engine: the same module with that ``vault_engine`` first on ``PYTHONPATH``.
The data is CC BY-NC 4.0 and is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.locomo import CATEGORIES, DEFAULT_DATA, memory_records, open_vault, questions, turns_of
from vault_engine.context.director import TaskRequest, build
from vault_engine.vault import Vault

BUDGETS = (2000, 4000, 6000)
UNLIMITED = 10**7  # a budget nothing is cut for: every candidate the director found
TARGET = 0.90  # evidence recall at 6,000 characters


@dataclass(frozen=True)
class Asked:
    conversation: str
    category: int
    budget: int
    recall: float
    listed: int  # memories in the manifest (resident and indexed)
    used: int  # characters of the manifest
    seconds: float


def ask(data: list[dict[str, Any]], budgets: list[int], cache: Path | None,
        every: int) -> tuple[list[Asked], dict[str, int]]:
    """Every question of every conversation as a task at each budget; the conversations' characters."""
    out: list[Asked] = []
    sizes: dict[str, int] = {}
    for sample in data:
        conversation = str(sample.get("sample_id", "x"))
        records, _owners = memory_records(turns_of(sample), "chat", conversation)
        sizes[conversation] = sum(len(str(r["body"])) for r in records)
        with tempfile.TemporaryDirectory(prefix="context-recall-") as folder:
            vault, owners = _vault(sample, cache, Path(folder))
            asked = questions(sample)[::every]
            print(f"  {conversation}: {len(owners)} memories, {sizes[conversation]:,} characters, "
                  f"{len(asked)} questions", file=sys.stderr)
            for category, question, gold in asked:
                for budget in budgets:
                    started = time.perf_counter()
                    manifest = build(vault, TaskRequest(question, budget=budget))
                    seconds = time.perf_counter() - started
                    turns = {d for memory_id in manifest.ids for d in owners.get(memory_id, ())}
                    out.append(Asked(conversation, category, budget, len(gold & turns) / len(gold),
                                     len(manifest.ids), manifest.used, seconds))
    return out, sizes


def _vault(sample: dict[str, Any], cache: Path | None, folder: Path) -> tuple[Vault, dict[str, list[str]]]:
    """The conversation's chat-log vault: built in ``folder``, or a copy of the one kept in ``cache``."""
    if cache is None:
        vault, owners, _seconds, _size = open_vault(sample, "chat", None, folder)
        return vault, owners
    kept, owners, _seconds, _size = open_vault(sample, "chat", cache, folder)
    shutil.copytree(kept.root, folder / "vault")
    return Vault(folder / "vault"), owners


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def summary(asked: list[Asked], sizes: dict[str, int]) -> dict[str, Any]:
    """Per budget: recall overall, per category and per conversation; listed, used, share, ms."""
    out: dict[str, Any] = {}
    for budget in sorted({a.budget for a in asked}):
        rows = [a for a in asked if a.budget == budget]
        by_category: dict[str, list[float]] = defaultdict(list)
        by_conversation: dict[str, list[Asked]] = defaultdict(list)
        for a in rows:
            by_category[CATEGORIES[a.category]].append(a.recall)
            by_conversation[a.conversation].append(a)
        out[str(budget)] = {
            "recall": _mean([a.recall for a in rows]),
            "categories": {c: _mean(by_category[c]) for c in CATEGORIES.values() if c in by_category},
            "conversations": {
                c: {"recall": _mean([a.recall for a in got]), "listed": _mean([a.listed for a in got]),
                    "used": _mean([a.used for a in got]),
                    "share": _mean([a.used for a in got]) / sizes[c]}
                for c, got in by_conversation.items()},
            "listed": _mean([a.listed for a in rows]), "most_listed": max(a.listed for a in rows),
            "used": _mean([a.used for a in rows]), "most_used": max(a.used for a in rows),
            "share": _mean([a.used / sizes[a.conversation] for a in rows]),
            "ms_p50": statistics.median(a.seconds for a in rows) * 1000,
            "questions": len(rows),
        }
    return out


def _label(budget: str) -> str:
    return "no limit (every candidate)" if int(budget) >= UNLIMITED else f"{int(budget):,}"


def report(result: dict[str, Any]) -> None:
    budgets = list(result)
    print("\n| budget (characters) | evidence recall | " + " | ".join(CATEGORIES.values())
          + " | memories listed (mean / most) | characters used (mean / most) | share of the conversation | ms p50 |")
    print("|---|---|" + "---|" * len(CATEGORIES) + "---|---|---|---|")
    for budget in budgets:
        r = result[budget]
        row = " | ".join(f"{r['categories'][c]:.3f}" if c in r["categories"] else "-" for c in CATEGORIES.values())
        print(f"| {_label(budget)} | {r['recall']:.3f} | {row} | {r['listed']:.1f} / {r['most_listed']} "
              f"| {r['used']:,.0f} / {r['most_used']:,} | {100 * r['share']:.2f}% | {r['ms_p50']:.0f} |")
    conversations = list(result[budgets[0]]["conversations"])
    print("\nPer conversation: recall, memories listed, "
          "characters used (share of the conversation's characters)\n")
    print("| conversation | " + " | ".join(_label(b) for b in budgets) + " |")
    print("|---|" + "---|" * len(budgets))
    for c in conversations:
        cells: list[str] = []
        for budget in budgets:
            r = result[budget]["conversations"][c]
            cells.append(f"{r['recall']:.3f}, {r['listed']:.1f}, {r['used']:,.0f} ({100 * r['share']:.2f}%)")
        print(f"| {c} | " + " | ".join(cells) + " |")
    if "6000" in result:
        got = result["6000"]["recall"]
        print(f"\nevidence recall at 6,000 characters: {got:.3f} (target {TARGET:.2f}: "
              f"{'met' if got >= TARGET else 'not met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache", type=Path, help="keep the built vaults here and reuse them on later runs")
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS),
                        help="comma-separated budgets in characters (default %(default)s)")
    parser.add_argument("--no-ceiling", action="store_true", help="skip the unlimited budget")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations (0: all)")
    parser.add_argument("--every", type=int, default=1, help="ask every K-th question only (default 1: all)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"error: benchmark data not found at {args.data} (use --data)")
    try:
        budgets = [int(b) for b in args.budgets.split(",") if b.strip()]
    except ValueError:
        raise SystemExit(f"error: --budgets takes numbers separated by commas, got {args.budgets!r}") from None
    if not args.no_ceiling:
        budgets.append(UNLIMITED)
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        data = data[: args.conversations]
    asked, sizes = ask(data, budgets, args.cache, max(1, args.every))
    result = summary(asked, sizes)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        report(result)


if __name__ == "__main__":
    main()
