"""The relevance floors' arithmetic over a chat suite's kept answers: own questions' recall and
foreign questions' quiet under any floors, the floors a conversation's held-out fold would choose,
and the report every floor benchmark prints (LoCoMo: ``benchmarks/floor_locomo.py``; LongMemEval:
``python -m benchmarks.floor_longmemeval``).

A row (:class:`Asked`) holds what a search's best candidate reached (evidence and meaning, among all
candidates and among those carrying the query's names, numbers and identifiers), so floors are
applied to it without searching again.
"""

from __future__ import annotations

from dataclasses import dataclass

from vault_engine.config import RetrievalSettings

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


# (relevance_floor, meaning_floor, named_relevance_floor, named_meaning_floor)
Floors = tuple[float, float, float, float]


def shipped_floors() -> Floors:
    """The floors memvault ships (``[retrieval]`` defaults)."""
    d = RetrievalSettings()
    return (d.relevance_floor, d.meaning_floor, d.named_relevance_floor, d.named_meaning_floor)


def cleared(a: Asked, floors: Floors, subjects: bool = False) -> bool:
    """Whether the search answers hits under ``floors``; with ``subjects``, as the engine does (a
    question naming one of the vault's subjects is answered below them too)."""
    return ((subjects and a.about) or a.best >= floors[0] or a.meaning >= floors[1]
            or a.named_best >= floors[2] or a.named_meaning >= floors[3])


def figures(asked: list[Asked], floors: Floors, subjects: bool = False) -> tuple[float, float, float]:
    """(own R@10 without a floor, own R@10 with ``floors``, share of foreign questions answered with no hits)."""
    own = [a for a in asked if a.own]
    foreign = [a for a in asked if not a.own]
    plain = sum(a.recall for a in own) / len(own) if own else float("nan")
    floored = sum(a.recall for a in own if cleared(a, floors, subjects)) / len(own) if own else float("nan")
    empty = sum(1 for a in foreign if not cleared(a, floors, subjects)) / len(foreign) if foreign else float("nan")
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
    unfloored = figures(asked, (0.0, 0.0, 0.0, 0.0))[0]
    print(f"\nwithout a floor: own R@10 {unfloored:.3f}, foreign questions with no hits 0.00\n")
    print(f"leave-one-conversation-out (the floors chosen on the other conversations: the most foreign questions "
          f"unanswered for at most {budget:.2f} R@10 lost there):\n")
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
