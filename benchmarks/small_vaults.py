#!/usr/bin/env python3
"""Search in a new user's vault: the right memory found, unrelated questions quiet, at every size.

A vault starts with a handful of memories.  The suite (``tests/fixtures/suites/everyday.json``)
holds a developer's everyday memories as a person types them (``memvault add TEXT``), questions a
person asks in their own words, each naming the memory that answers it, and questions the vault
does not answer.  For each size it builds vaults the user's way (``Vault.add``, what ``memvault add``
calls, then sync with the real model) and asks every question through ``MemoryService.search`` (the
call behind ``POST /v1/search`` and MCP ``memory_search``; limit 10):

- size 1: one vault per memory, holding it alone;
- size 5 and 30: the memories in consecutive groups of that size (the last group filled from the
  first memories);
- size 300: every memory of the suite plus other everyday memories of the same developer
  (``everyday_more.json``: team facts, preferences, procedures and personal facts that answer none
  of the suite's questions) up to 300.

Each question is asked of every vault holding its memory; every unrelated question of every vault.

- **found@3**: the share of questions whose memory is among the first three hits and is not weak
  (it clears the relevance floor: a confident answer);
- **quiet**: the share of unrelated questions answered with no hits;
- **others shown**: for the questions the vault answers, how many other memories the engine shows
  as relevant beside the answer (hits not marked weak), on average: what a prompt hook would put in
  the agent's context for nothing.

Printed per size, with the engine's settings as they are (``MEMVAULT_RETRIEVAL_*`` variables
change them).  ``--answers FILE`` keeps the raw answers (evidence and meaning of each question's
memory and of the best candidate) so ``--floors`` sweeps can be printed without searching again.

Usage:
    .venv/bin/python -m benchmarks.small_vaults [--sizes 1 5 30 300] [--answers FILE] [--sweep]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.floors import Floors, shipped_floors
from vault_engine.retrieval.relevance import Specifics
from vault_engine.retrieval.rerank import stems
from vault_engine.server.requests import SearchRequest
from vault_engine.server.service import MemoryService
from vault_engine.store import create_vault
from vault_engine.vault import Vault
from vault_engine.vault.results import NewMemory

SUITES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "suites"
SUITE = SUITES / "everyday.json"
MORE = SUITES / "everyday_more.json"
SIZES = (1, 5, 30, 300)


@dataclass(frozen=True)
class Asked:
    size: int
    vault: int
    own: bool  # a question its vault answers (False: an unrelated one)
    query: str
    rank: int  # the 1-based rank of the question's memory among the hits (0: not a hit, or unrelated)
    evidence: float  # the evidence of the question's memory (0 when not a hit)
    meaning: float  # its best cosine with the question
    best: float  # the best evidence among the search's candidates
    best_meaning: float
    subjects: bool  # the query names a subject of the vault that a candidate carries
    carried: bool = False  # the question's memory carries the query's specific words (names, numbers, codes)
    named_best: float = 0.0  # the best evidence among candidates that carry them
    named_meaning: float = 0.0  # the best cosine among them
    others: int = 0  # hits the engine does not mark weak that are not the question's memory
    hits: tuple[tuple[bool, float, float, bool], ...] = ()  # each hit: (the question's memory, evidence, meaning, weak)


def groups(keys: list[str], size: int) -> list[list[str]]:
    """``keys`` in consecutive groups of ``size`` (the last one filled from the first keys)."""
    if size == 1:
        return [[k] for k in keys]
    if size >= len(keys):
        return [list(keys)]
    out = []
    for start in range(0, len(keys), size):
        group = keys[start:start + size]
        if len(group) < size:
            group += [k for k in keys if k not in group][:size - len(group)]
        out.append(group)
    return out


def filler(count: int) -> list[str]:
    """``count`` other everyday memories of the same person (answering none of the suite's questions)."""
    more: list[str] = json.loads(MORE.read_text(encoding="utf-8"))
    if count > len(more):
        raise SystemExit(f"{MORE} holds {len(more)} memories; {count} are needed")
    return more[:count]


def build(root: Path, texts: list[str], extra: int) -> Vault:
    create_vault(root, git=False)
    vault = Vault(root)
    for text in [*texts, *filler(extra)]:
        vault.add(NewMemory(text=text))
    vault.sync()
    return vault


def ask_all(suite: dict[str, Any], sizes: list[int]) -> list[Asked]:
    memories = {m["key"]: m["text"] for m in suite["memories"]}
    keys = list(memories)
    out: list[Asked] = []
    for size in sizes:
        started = time.perf_counter()
        vault_groups = [keys] if size > len(keys) else groups(keys, size)
        for number, group in enumerate(vault_groups):
            with tempfile.TemporaryDirectory(prefix="small-") as folder:
                vault = build(Path(folder) / "vault", [memories[k] for k in group], max(0, size - len(group)))
                by_text = {memories[k]: k for k in group}
                key_of = {}
                for entry in vault.scan().active():
                    body = entry.memory.body.strip()
                    if body in by_text:
                        key_of[entry.memory.id] = by_text[body]
                missing = set(group) - set(key_of.values())
                if missing:
                    raise SystemExit(f"memories not stored as typed: {sorted(missing)}")
                service = MemoryService(vault)
                questions = [(q["q"], q["target"]) for q in suite["questions"] if q["target"] in group]
                questions += [(q, None) for q in suite["unrelated"]]
                for query, target in questions:
                    answer = service.search(SearchRequest.parse({"query": query, "limit": 10, "weak": True}))
                    relevance = answer.get("relevance") or {}
                    rank, evidence, meaning, carried = 0, 0.0, 0.0, False
                    others = sum(1 for hit in answer["hits"] if not hit.get("weak")
                                 and (target is None or key_of.get(hit["id"]) != target))
                    for n, hit in enumerate(answer["hits"], 1):
                        if target is not None and key_of.get(hit["id"]) == target:
                            rank, evidence = n, float(hit["evidence"])
                            meaning = max(hit["similarity"].values(), default=0.0)
                            carried = Specifics.of(query).carried_by(stems(memories[target]))
                            break
                    out.append(Asked(size, number, target is not None, query, rank, evidence, meaning,
                                     float(relevance.get("best", 0.0)), float(relevance.get("meaning", 0.0)),
                                     bool(relevance.get("subjects")), carried,
                                     float((relevance.get("named") or {}).get("best", 0.0)),
                                     float((relevance.get("named") or {}).get("meaning", 0.0)), others,
                                     tuple((target is not None and key_of.get(h["id"]) == target, float(h["evidence"]),
                                            max(h["similarity"].values(), default=0.0), bool(h.get("weak")))
                                           for h in answer["hits"])))
                service.close()
        print(f"  size {size}: {len(vault_groups)} vaults, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return out




def found(a: Asked, floors: Floors) -> bool:
    return 0 < a.rank <= 3 and (a.evidence >= floors[0] or a.meaning >= floors[1]
                                or (a.carried and (a.evidence >= floors[2] or a.meaning >= floors[3])))


def quiet(a: Asked, floors: Floors) -> bool:
    return not (a.subjects or a.best >= floors[0] or a.best_meaning >= floors[1]
                or a.named_best >= floors[2] or a.named_meaning >= floors[3])


def figures(asked: list[Asked], floors: Floors) -> tuple[float, float, int, int]:
    own = [a for a in asked if a.own]
    other = [a for a in asked if not a.own]
    f = sum(found(a, floors) for a in own) / len(own) if own else float("nan")
    q = sum(quiet(a, floors) for a in other) / len(other) if other else float("nan")
    return f, q, len(own), len(other)


def report(asked: list[Asked], floors: Floors, sweep: bool) -> None:
    sizes = sorted({a.size for a in asked})
    print(f"\nfloors: relevance {floors[0]:.2f}, meaning {floors[1]:.2f}; carrying the query's names "
          f"{floors[2]:.2f}, meaning {floors[3]:.2f}\n")
    print("| vault size | vaults | questions | found@3 | others shown | unrelated asked | quiet |")
    print("|---|---|---|---|---|---|---|")
    for size in sizes:
        rows = [a for a in asked if a.size == size]
        f, q, n_own, n_other = figures(rows, floors)
        own = [a for a in rows if a.own]
        shown = sum(a.others for a in own) / len(own) if own else float("nan")
        print(f"| {size} | {len({a.vault for a in rows})} | {n_own} | {f:.3f} | {shown:.2f} | {n_other} | {q:.3f} |")
    misses = [a for a in asked if a.own and not found(a, floors)]
    if misses:
        print("\nmissed (size: question -> rank, evidence, meaning):")
        for a in misses:
            print(f"  {a.size}: {a.query!r} -> rank {a.rank}, evidence {a.evidence:.2f}, meaning {a.meaning:.2f}")
    loud = [a for a in asked if not a.own and not quiet(a, floors)]
    if loud:
        print("\nunrelated questions answered (size: question -> best evidence, meaning):")
        for a in sorted(loud, key=lambda a: (a.size, a.query))[:40]:
            print(f"  {a.size}: {a.query!r} -> {a.best:.2f}, {a.best_meaning:.2f}")
    if sweep:
        print("\n| relevance floor / named floor / named meaning floor | "
              + " | ".join(f"found@3 {s} / quiet {s}" for s in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for step in range(50, 81, 5):
            for named in (0.40, 0.45, 0.50, 0.55):
                for para in (0.25, 0.30, 0.35):
                    cells = []
                    for size in sizes:
                        rows = [a for a in asked if a.size == size]
                        f, q, _n, _m = figures(rows, (step / 100, floors[1], named, para))
                        cells.append(f"{f:.3f} / {q:.3f}")
                    print(f"| {step / 100:.2f} / {named:.2f} / {para:.2f} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=SUITE)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--answers", type=Path, help="keep the answers here and reuse them when present")
    parser.add_argument("--sweep", action="store_true", help="also print found@3 and quiet across relevance floors")
    args = parser.parse_args()
    suite = json.loads(args.suite.read_text(encoding="utf-8"))
    if args.answers is not None and args.answers.is_file():
        asked = [Asked(**{**row, "hits": tuple(tuple(h) for h in row.get("hits", ()))})
                 for row in json.loads(args.answers.read_text(encoding="utf-8"))]
    else:
        asked = ask_all(suite, args.sizes)
        if args.answers is not None:
            args.answers.write_text(json.dumps([dataclasses.asdict(a) for a in asked]), encoding="utf-8")
    report(asked, shipped_floors(), args.sweep)


if __name__ == "__main__":
    main()
