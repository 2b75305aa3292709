#!/usr/bin/env python3
"""The relevance floor on LoCoMo: foreign questions left unanswered against own questions' recall.

Each conversation of the development half gets its own vault, built the user's way (the
records of ``scripts/eval_locomo.py``: ``memvault import`` then sync).  Every question is
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
    .venv/bin/python scripts/eval_floor.py [--format chat --format facts] [--cache DIR] [--answers DIR]
        [--budget 0.01]

The data is CC BY-NC 4.0 and is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_locomo import DEFAULT_DATA, open_vault, questions

from vault_engine.config import RetrievalSettings
from vault_engine.server.requests import SearchRequest
from vault_engine.server.service import MemoryService

FLOORS = [round(0.30 + 0.01 * n, 2) for n in range(61)]  # 0.30 .. 0.90, the candidates a fold chooses from
SHOWN = FLOORS[::5]
MEANING = [round(0.35 + 0.05 * n, 2) for n in range(6)] + [9.0]  # 0.35 .. 0.60, and off
NAMED = [round(0.40 + 0.05 * n, 2) for n in range(7)] + [9.0]  # 0.40 .. 0.70, and off
NAMED_MEANING = [round(0.25 + 0.05 * n, 2) for n in range(6)] + [9.0]  # 0.25 .. 0.50, and off


@dataclass(frozen=True)
class Asked:
    conversation: str  # the vault's
    own: bool
    best: float  # the best evidence among the search's candidates (0 without any)
    meaning: float  # the best cosine among them
    recall: float  # R@10 of the gold turns (own questions; 0 for foreign ones)
    about: bool = False  # the query names one of the vault's subjects that a candidate carries
    named_best: float = 0.0  # the best evidence among the candidates that carry the query's names, numbers, codes
    named_meaning: float = 0.0  # the best cosine among them


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


# (relevance_floor, meaning_floor, named_relevance_floor, named_meaning_floor)
Floors = tuple[float, float, float, float]


def cleared(a: Asked, floors: Floors, subjects: bool = False) -> bool:
    """Whether the search answers hits under ``floors``; with ``subjects``, as the engine does (a
    question naming one of the vault's subjects is answered below them too)."""
    return ((subjects and a.about) or a.best >= floors[0] or a.meaning >= floors[1]
            or a.named_best >= floors[2] or a.named_meaning >= floors[3])


def figures(asked: list[Asked], floors: Floors, subjects: bool = False) -> tuple[float, float, float]:
    """(own R@10 without a floor, own R@10 with ``floors``, share of foreign questions answered with no hits)."""
    own = [a for a in asked if a.own]
    foreign = [a for a in asked if not a.own]
    plain = sum(a.recall for a in own) / len(own)
    floored = sum(a.recall for a in own if cleared(a, floors, subjects)) / len(own)
    empty = sum(1 for a in foreign if not cleared(a, floors, subjects)) / len(foreign)
    return plain, floored, empty


def choose(asked: list[Asked], budget: float) -> Floors:
    """The floors that leave the most foreign questions unanswered for at most ``budget`` R@10 on ``asked``."""
    best: tuple[float, Floors] = (-1.0, (min(FLOORS), min(MEANING), min(NAMED), min(NAMED_MEANING)))
    for floors in ((f, m, n, p) for f in FLOORS[::2] for m in MEANING for n in NAMED for p in NAMED_MEANING):
        plain, floored, empty = figures(asked, floors)
        if plain - floored <= budget and empty > best[0]:
            best = (empty, floors)
    return best[1]


def report(fmt: str, asked: list[Asked], shipped: Floors, budget: float) -> None:
    print(f"\n### format: {fmt}\n")
    print(f"| relevance floor | own R@10 | lost | foreign questions with no hits | the same with meaning floor "
          f"{shipped[1]:.2f} and the named floors {shipped[2]:.2f} / {shipped[3]:.2f} too: lost | "
          "foreign with no hits |")
    print("|---|---|---|---|---|---|")
    for floor in sorted({*SHOWN, shipped[0]}):
        plain, floored, empty = figures(asked, (floor, 9.0, 9.0, 9.0))
        _p, m_floored, m_empty = figures(asked, (floor, *shipped[1:]))
        mark = " (shipped)" if abs(floor - shipped[0]) < 1e-9 else ""
        print(f"| {floor:.2f}{mark} | {floored:.3f} | {plain - floored:.3f} | {empty:.2f} | {plain - m_floored:.3f} | "
              f"{m_empty:.2f} |")
    print(f"\nwithout a floor: own R@10 {figures(asked, (0.0, 0.0))[0]:.3f}, foreign questions with no hits 0.00\n")
    print(f"leave-one-conversation-out (both floors chosen on the other four: the most foreign questions unanswered "
          f"for at most {budget:.2f} R@10 lost there):\n")
    print("| held out | chosen floors | lost | foreign with no hits | shipped: lost | shipped: foreign no hits |")
    print("|---|---|---|---|---|---|")
    conversations = sorted({a.conversation for a in asked})
    for held in conversations:
        train = [a for a in asked if a.conversation != held]
        test = [a for a in asked if a.conversation == held]
        chosen = choose(train, budget)
        plain, floored, empty = figures(test, chosen)
        s_plain, s_floored, s_empty = figures(test, shipped)
        meaning = "off" if chosen[1] > 1 else f"{chosen[1]:.2f}"
        named = " / ".join("off" if f > 1 else f"{f:.2f}" for f in chosen[2:])
        print(f"| {held} | {chosen[0]:.2f} / {meaning} / {named} | {plain - floored:.3f} | {empty:.2f} | "
              f"{s_plain - s_floored:.3f} | {s_empty:.2f} |")
    _p, floored, empty = figures(asked, shipped)
    print(f"\nshipped floors {' / '.join(f'{f:.2f}' for f in shipped)} on all five: "
          f"{_p - floored:.3f} R@10 lost, "
          f"{empty:.2f} of the foreign questions answered with no hits")
    _p, floored, empty = figures(asked, shipped, subjects=True)
    alone = [a for a in asked if cleared(a, shipped, subjects=True) and not cleared(a, shipped)]
    own = [a for a in alone if a.own]
    print(f"as searched (a question naming a subject of the vault that a candidate carries is answered, below the "
          f"floors too): {_p - floored:.3f} R@10 lost, {empty:.2f} of the foreign questions answered with no hits; "
          f"answered for a named subject alone: {len(own)} own questions (R@10 {sum(a.recall for a in own):.2f} "
          f"in all), {len(alone) - len(own)} foreign ones")


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
    defaults = RetrievalSettings()
    shipped = (defaults.relevance_floor, defaults.meaning_floor, defaults.named_relevance_floor,
               defaults.named_meaning_floor)
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
