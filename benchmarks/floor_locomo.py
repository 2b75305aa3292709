#!/usr/bin/env python3
"""The relevance floor on LoCoMo: foreign questions left unanswered against own questions' recall.

Each conversation of the development half gets its own vault, built the user's way (the
records of ``benchmarks/locomo_eval.py``: ``memvault import`` then sync).  Every question is
asked, through ``MemoryService.search`` (what ``POST /v1/search`` and MCP ``memory_search``
call; limit 10, ``weak`` on so the hits below the floor are seen with their evidence), of:

- its own conversation's vault: R@10 of the gold turns, without a floor and with it (a
  question none of whose candidates clears the floors answers nothing, so its recall is 0);
- every other conversation's vault (foreign questions: the vault does not hold the answer):
  the share that clears neither floor, i.e. is answered with no hits.

Printed per format: both figures across relevance floors (alone, and with the shipped
``meaning_floor`` beside it), the shipped floors marked; then leave-one-conversation-out: for
each held-out conversation both floors are chosen on the other four (the most foreign
questions unanswered for at most ``--budget`` R@10 lost there) and applied to the held-out
one, beside the shipped floors' figures on it.  Last, the searches as the engine answers them: a
question that names one of the vault's subjects (a given tag, here a speaker) carried by a
candidate is answered below the floors too; how many own and foreign questions that answers.
The sweep and the choice read the floors alone: nearly every LoCoMo question names a speaker,
so with that rule in them the benchmark would choose floors for none of the queries they guard.

Usage:
    .venv/bin/python -m benchmarks.floor_locomo [--format chat --format facts] [--cache DIR] [--answers DIR]
        [--budget 0.01]

The data is CC BY-NC 4.0 and is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.floors import Asked, report, shipped_floors
from benchmarks.locomo import DEFAULT_DATA, open_vault, questions
from vault_engine.server.requests import SearchRequest
from vault_engine.server.service import MemoryService


def ask(data: list[dict[str, Any]], fmt: str, cache: Path | None) -> list[Asked]:
    out: list[Asked] = []
    for sample in data:
        conversation = str(sample.get("sample_id"))
        with tempfile.TemporaryDirectory(prefix="floor-") as folder:
            vault, owners, _seconds, _size = open_vault(sample, fmt, cache, Path(folder))
            service = MemoryService(vault)
            for other in data:
                own = other is sample
                for _category, question, gold in questions(other):
                    answer = service.search(SearchRequest.parse({"query": question, "limit": 10, "weak": True}))
                    hits = answer["hits"]
                    relevance = answer.get("relevance") or {}
                    best, meaning = float(relevance.get("best", 0.0)), float(relevance.get("meaning", 0.0))
                    turns = {d for h in hits for d in owners.get(h["id"], [])}
                    recall = len(gold & turns) / len(gold) if own else 0.0
                    named = relevance.get("named") or {}
                    out.append(Asked(conversation, own, best, meaning, recall, bool(relevance.get("subjects")),
                                     float(named.get("best", 0.0)), float(named.get("meaning", 0.0))))
            service.close()
        print(f"  {fmt} {conversation}: asked", file=sys.stderr)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--format", action="append", dest="formats", choices=("chat", "facts", "curated"),
                        help="record format (repeatable; default: chat and facts)")
    parser.add_argument("--cache", type=Path, help="reuse (or keep) the built vaults here, as eval_locomo does")
    parser.add_argument("--answers", type=Path,
                        help="keep each format's answers here (FOLDER/FORMAT.json) and reuse them: only the floor "
                             "arithmetic runs again")
    parser.add_argument("--budget", type=float, default=0.01, help="R@10 a chosen floor may cost (default 0.01)")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"error: benchmark data not found at {args.data} (use --data)")
    data = json.loads(args.data.read_text(encoding="utf-8"))
    shipped = shipped_floors()
    for fmt in args.formats or ["chat", "facts"]:
        saved = args.answers / f"{fmt}.json" if args.answers else None
        if saved is not None and saved.is_file():
            asked = [Asked(**row) for row in json.loads(saved.read_text(encoding="utf-8"))]
        else:
            asked = ask(data, fmt, args.cache)
            if saved is not None:
                saved.parent.mkdir(parents=True, exist_ok=True)
                saved.write_text(json.dumps([dataclasses.asdict(a) for a in asked]), encoding="utf-8")
        report(fmt, asked, shipped, args.budget)


if __name__ == "__main__":
    main()
