#!/usr/bin/env python3
"""The relevance floor on the LongMemEval S development pool: own questions' recall, foreign ones' quiet.

A sample of the pool's questions (every ``--stride``-th non-abstention record, sorted by question id)
each gets its own vault, built the user's way (:mod:`benchmarks.haystacks`: each session of its
haystack, in date order, imported as its own chat log, both roles, positional handles; no session
id reaches the vault, since the evidence sessions' ids give the answer away), then sync.  A hit maps
back to its turns by their handles.  Every sampled question is asked, through
``MemoryService.search`` (what ``POST /v1/search`` and MCP ``memory_search`` call; limit 10,
``weak`` on), of:

- its own vault: R@10 of the turns marked ``has_answer``;
- every other sampled vault whose haystack holds none of its evidence sessions (foreign: the vault
  does not hold the answer): whether it is answered with no hits.

The abstention questions (ids ending in ``_abs``: the haystack holds no answer) are asked of their
own vaults and counted apart.  The rows are those of :mod:`benchmarks.floors` (a haystack in the
place of a conversation), printed with its report and kept with ``--answers`` for
:mod:`benchmarks.choose_floors`.

Usage:
    .venv/bin/python -m benchmarks.floor_longmemeval [--stride 12] [--abstentions 14] [--cache DIR] [--answers FILE]

The data is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import haystacks
from benchmarks.floors import Asked, cleared, report, shipped_floors
from vault_engine.server.requests import SearchRequest
from vault_engine.server.service import MemoryService
from vault_engine.vault import Vault


def open_vault(item: dict[str, Any], cache: Path | None, folder: Path) -> tuple[Vault, set[str]]:
    """The question's vault (built, or reused from ``cache``) and the ids of its answer turns."""
    root = (cache / str(item["question_id"])) if cache else folder / "vault"
    built = haystacks.open_vault(item, root, reuse=cache is not None, cold=False)
    sessions, _evidence = haystacks.sessions_of(item)
    gold = {t.handle for session in sessions for t in session if t.answer}
    return built.vault, {memory for memory, turns in built.turns.items() if gold & set(turns)}


def ask(data: list[dict[str, Any]], stride: int, abstentions: int,
        cache: Path | None) -> tuple[list[Asked], list[Asked]]:
    """(the sampled questions' rows, the first ``abstentions`` abstention questions' rows of their own vaults)."""
    plain = [r for r in data if not str(r["question_id"]).endswith("_abs")]
    sample = plain[::stride]
    abstain = [r for r in data if str(r["question_id"]).endswith("_abs")][:abstentions]
    out: list[Asked] = []
    abstained: list[Asked] = []
    for item in [*sample, *abstain]:
        started = time.perf_counter()
        name = str(item["question_id"])
        with tempfile.TemporaryDirectory(prefix="lme-") as folder:
            vault, answers = open_vault(item, cache, Path(folder))
            haystack = set(item["haystack_session_ids"])
            service = MemoryService(vault)
            asked = [item] if item in abstain else [
                q for q in sample if q is item or not set(q["answer_session_ids"]) & haystack]
            for question in asked:
                own = question is item
                answer = service.search(SearchRequest.parse({"query": question["question"], "limit": 10,
                                                             "weak": True}))
                relevance = answer.get("relevance") or {}
                named = relevance.get("named") or {}
                found = {h["id"] for h in answer["hits"]} & answers
                recall = len(found) / len(answers) if own and answers else 0.0
                row = Asked(name, own and item not in abstain, float(relevance.get("best", 0.0)),
                            float(relevance.get("meaning", 0.0)), recall, bool(relevance.get("subjects")),
                            float(named.get("best", 0.0)), float(named.get("meaning", 0.0)))
                (abstained if item in abstain else out).append(row)
            service.close()
        print(f"  {name}: {len(asked)} asked, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return out, abstained


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=haystacks.DEFAULT_DATA)
    parser.add_argument("--stride", type=int, default=12, help="ask every N-th non-abstention question (default 12)")
    parser.add_argument("--abstentions", type=int, default=14, help="how many abstention questions (default all 14)")
    parser.add_argument("--cache", type=Path, help="reuse (or keep) the built vaults here")
    parser.add_argument("--answers", type=Path, help="keep the rows here and reuse them: only the arithmetic runs")
    parser.add_argument("--budget", type=float, default=0.01, help="R@10 a chosen floor may cost (default 0.01)")
    args = parser.parse_args()
    if args.answers is not None and args.answers.is_file():
        saved = json.loads(args.answers.read_text(encoding="utf-8"))
        asked = [Asked(**row) for row in saved["asked"]]
        abstained = [Asked(**row) for row in saved["abstained"]]
    else:
        data = haystacks.load(args.data)
        asked, abstained = ask(data, args.stride, args.abstentions, args.cache)
        if args.answers is not None:
            args.answers.write_text(json.dumps({"asked": [dataclasses.asdict(a) for a in asked],
                                                "abstained": [dataclasses.asdict(a) for a in abstained]}))
    shipped = shipped_floors()
    report("longmemeval (haystacks in the place of conversations)", asked, shipped, args.budget)
    quiet = sum(1 for a in abstained if not cleared(a, shipped, subjects=True))
    print(f"\nabstention questions (the haystack holds no answer) answered with no hits: {quiet} of {len(abstained)}")


if __name__ == "__main__":
    main()
