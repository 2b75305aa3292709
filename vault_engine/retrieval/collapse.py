"""The last cuts: true duplicates fold into one hit, conflicting values sit side by side, then the limit
and the character budget.

A hit folds into an earlier one only when the two state the same thing with the same values (see
:mod:`statements`; their titles, summaries and triggers are compared): the same normalised text
(the same ``dup_key``), or summary vectors (and body vectors, when both have one) at least
``duplicate_similarity`` close and nearly the same words.  Memories that differ in a value (a
number, an identifier, a name, a path, a quoted string...) are distinct and all stay.  A group of
duplicates is shown by the member a user would trust: the highest trust first (system, then
learned, then external: a copy from a tool's output never stands in for what the user stated),
then the current one, stated last (``updated``, else ``created``: a correction is a new memory
stated when it was made), then the best scored; in the place and with the score of the group's
best; the others are listed in its ``duplicates``.

Two shown hits of one scope and project that state the same thing with other values ("the TTL
is 600 seconds", "... 3600 seconds") conflict: the lower one moves up to just after the higher
one, and each names the other in ``conflicts`` and in a why-line.  Values that name *which* thing a
hit is about ("Customer 1042 is on the gold plan", "Customer 2077 ...") make two facts, not a
conflict, as governance judges them (:mod:`restatements`).  Hits with neither duplicates nor
conflicts keep their order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from ..format.kinds import TRUSTS
from .request import Hit
from .restatements import compare_texts
from .statements import Statement, differing_values, prefix_tokens, same_statement, statement_of

Vector = npt.NDArray[np.float32]
VectorOf = Callable[[str, str], Vector | None]  # (memory id, lane) -> its first vector in that lane
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_TRUST_RANK = {trust: len(TRUSTS) - n for n, trust in enumerate(TRUSTS)}  # system > learned > external


def collapse(hits: list[Hit], limit: int, threshold: float, vector_of: VectorOf, pair: bool = True) -> list[Hit]:
    """True duplicates (see the module) fold into the member a user would trust; conflicting hits sit side by
    side (unless not ``pair``: for a list of candidates that shows no conflicts).

    Only as many hits as can still be shown are compared.
    """
    folded = [_trusted(group) for group in fold(hits, limit, threshold, vector_of)]
    return side_by_side(folded) if pair else folded


def statement(hit: Hit) -> Statement:
    """What a hit states, as duplicates and conflicts are judged: its title, summary and trigger."""
    return statement_of(f"{hit.title}\n{hit.summary}\n{hit.trigger}")


def fold(hits: list[Hit], limit: int, threshold: float, vector_of: VectorOf) -> list[list[Hit]]:
    """``hits`` in groups of true duplicates, best first in each group, at most ``limit`` groups."""
    groups: list[list[Hit]] = []
    heads: list[tuple[Hit, Vector | None, Vector | None]] = []
    for hit in hits:
        if len(groups) >= limit:
            break
        summary = vector_of(hit.id, "summary") if threshold < 1 else None
        body = vector_of(hit.id, "body") if summary is not None else None
        for group, (head, head_summary, head_body) in zip(groups, heads, strict=True):
            same_text = bool(hit.dup_key) and hit.dup_key == head.dup_key
            if not same_text and not _close((summary, body), (head_summary, head_body), threshold):
                continue
            if same_statement(statement(hit), statement(head), same_text=same_text):
                group.append(hit)
                break
        else:
            groups.append([hit])
            heads.append((hit, summary, body))
    return groups


def _close(a: tuple[Vector | None, Vector | None], b: tuple[Vector | None, Vector | None], threshold: float) -> bool:
    """Summary vectors at least ``threshold`` close, and body vectors too when both have one."""
    (summary_a, body_a), (summary_b, body_b) = a, b
    if summary_a is None or summary_b is None or float(np.dot(summary_a, summary_b)) < threshold:
        return False
    return body_a is None or body_b is None or float(np.dot(body_a, body_b)) >= threshold


def _moment(hit: Hit) -> datetime:
    if hit.updated is None:
        return _EARLIEST
    return hit.updated if hit.updated.tzinfo else hit.updated.replace(tzinfo=UTC)


def _trusted(group: list[Hit]) -> Hit:
    """The group's member of the highest trust, of those the one stated last (the best on a tie),
    in the best one's place and with its score."""
    best = group[0]
    # The first of the most trusted, latest ones: the best when none is more trusted or later.
    shown = max(group, key=lambda hit: (_TRUST_RANK.get(hit.trust, 0), _moment(hit)))
    shown.duplicates.extend(hit.id for hit in group if hit is not shown)
    if shown.duplicates:
        shown.why.append(f"near-duplicates folded in: {', '.join(shown.duplicates)}")
    if shown is not best:
        reason = ("the current version of its duplicates (updated last)" if shown.trust == best.trust
                  else f"the most trusted of its duplicates ({shown.trust}, over {best.trust})")
        shown.why.append(f"{reason}: shown in the place of {best.id} with its score {best.score:.3f} "
                         f"(its own {shown.score:.3f})")
        shown.score = best.score
    return shown


def side_by_side(hits: list[Hit]) -> list[Hit]:
    """``hits`` with each pair that states one thing with other values labelled, the lower one
    moved up to just after the higher one (the others keep their order)."""
    later: dict[int, list[int]] = {}
    for first, second, values in conflicts(hits):
        for mine, theirs, flip in ((hits[first], hits[second], False), (hits[second], hits[first], True)):
            shown = "; ".join(f"{b} vs {a}" if flip else f"{a} vs {b}" for a, b in values)
            mine.conflicts.append(theirs.id)
            mine.why.append(f"states a different value than {theirs.id}: {shown}")
        later.setdefault(first, []).append(second)
    if not later:
        return hits
    placed = [False] * len(hits)
    out: list[Hit] = []
    for start in range(len(hits)):
        queue = [] if placed[start] else [start]
        while queue:
            index = queue.pop(0)
            if placed[index]:
                continue
            placed[index] = True
            out.append(hits[index])
            queue += later.get(index, [])
    return out


def conflicts(hits: list[Hit]) -> list[tuple[int, int, list[tuple[str, str]]]]:
    """Pairs (i < j) of hits of one scope and project that state the same with other values, and those values.

    Only pairs sharing one of their rarest words are compared (see :func:`prefix_tokens`): no
    other pair can agree on two in three words.
    """
    statements = [statement(hit) for hit in hits]
    rarity = Counter(token for s in statements for token in set(s.tokens))
    postings: dict[tuple[str, int], list[int]] = {}
    out = []
    for second, current in enumerate(statements):
        candidates: set[int] = set()
        for item in prefix_tokens(current, rarity):
            candidates.update(postings.get(item, ()))
            postings.setdefault(item, []).append(second)
        for first in sorted(candidates):
            if (hits[first].scope, hits[first].project) != (hits[second].scope, hits[second].project):
                continue
            values = differing_values(statements[first], current)
            if values and not _distinct(hits[first], hits[second]):
                out.append((first, second, values))
    return out


def _distinct(a: Hit, b: Hit) -> bool:
    """Whether the values two hits differ in name different things ("Customer 1042" / "Customer 2077"),
    as governance judges them (:func:`.restatements.compare_texts`): no conflict, two facts."""
    older, newer = sorted((a, b), key=lambda hit: (_moment(hit), hit.id))
    return compare_texts(f"{older.title}\n{older.summary}", f"{newer.title}\n{newer.summary}").distinct is not None


def cut(hits: list[Hit], limit: int, max_chars: int) -> list[Hit]:
    """The first ``limit`` hits, stopping before the one that would pass ``max_chars`` (never the first)."""
    out: list[Hit] = []
    used = 0
    for hit in hits[:limit]:
        if out and used + hit.chars > max_chars:
            break
        out.append(hit)
        used += hit.chars
    return out
