"""The context director: what an agent should know before a task, within a budget, and why.

Candidates are the current memories in scope (global ones and the current
project's; never another project's, never superseded or trashed) that
either stand on their own (the core profile, passive or both recall, or
selectors that match the task) or are relevant to the task text (the
hybrid search's top hits).  A selector is checked against what the request
says: a memory whose path globs do not match ``--path`` is out, while a
dimension the request leaves out excludes nothing.

Ranking follows the spec's scores: lifecycle (proven 300, trial 100), +160
for an explicit memory, +25 per matching selector (project, path, task,
operation, phase), +20 per success, -2 per ignore, -80 per correction or
failure; then relevance to the task text; then title and id.

In a shared vault, a memory whose ``sender`` is someone other than the
current sender (the request's, else the vault's) says so in its reasons:
``from another sender: bob`` (see :mod:`vault_engine.senders`).

The search goes as deep as the budget could list (:func:`search_depth`), and its hits are
not cut at the search's own presentation limit: more budget lists more memories.

Delivery: the core profile (within the profile budget), passive/both
memories, the hot tier and the few best matching proven policies go in
full (the resident part); the rest become manifest entries (title, abstract, id,
``whyApplied``), as many as the budget can list, the best ranked written
richest (:mod:`.manifest`).  The rendered text never exceeds the
budget.  Each delivery is journalled as an ``application`` event, whose id
agents pass back with ``memvault feedback``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import senders, store
from ..errors import InvalidInput, VaultError
from ..format.ids import new_event_id
from ..format.value import SYNTHESIS_SOURCE
from ..index.catalog import CatalogRow
from ..journal import Event
from ..retrieval.selectors import path_matches
from .manifest import (
    BRIEFEST,
    HOT_LEAD,
    POLICY_LEAD,
    Manifest,
    ManifestItem,
    ResidentItem,
    entry_line,
    fit,
)

if TYPE_CHECKING:
    from ..vault import Vault

STATE_SCORE = {"proven": 300, "trial": 100}
EXPLICIT_BONUS = 160
SELECTOR_BONUS = 25
SUCCESS_BONUS = 20
IGNORE_PENALTY = 2
FAILURE_PENALTY = 80
SEARCH_DEPTH = 30  # the fewest search hits considered, whatever the budget
MAX_SEARCH_DEPTH = 300  # the most, whatever the budget
EXPLICIT_REASON = "user explicit setting"
OVERVIEW_ROWS = 200  # the project's memories an overview considers (the most recently updated)


@dataclass(frozen=True, slots=True)
class TaskRequest:
    """The task an agent is about to do."""

    task: str
    path: str | None = None
    operation: str | None = None
    phase: str | None = None
    kind: str | None = None  # the task kind, matched against `tasks` selectors
    project: str | None = None
    budget: int | None = None
    overview: bool = False  # a session's start: every current memory of the project may apply
    sender: str | None = None  # who asks (None: whoever the vault writes as); others' memories are marked
    # The task's vector is kept in the embedding cache, for a task asked again and again by a process that
    # would otherwise load the model for it (an agent's session start, see SearchQuery.keep_vector).
    keep_vector: bool = False


@dataclass(slots=True)
class Candidate:
    row: CatalogRow
    score: int
    relevance: int | None  # rank in the hybrid search of the task text (1 = best), None: not found
    why: list[str]
    matched: int  # selectors matched beyond the project
    brief: list[str]  # the reasons of a brief entry (see :mod:`.manifest`)
    standing: bool  # applies without the search (selectors, recall, tier, an overview)


# ---------------------------------------------------------------- selection and ranking


def _word_in(word: str, text: str) -> bool:
    return bool(re.search(rf"(?<!\w){re.escape(word.strip().lower())}(?!\w)", text.lower())) if word.strip() else False


def match(row: CatalogRow, request: TaskRequest, project: str | None) -> tuple[bool, list[str], int]:
    """(admitted, reasons, selectors matched beyond the project) of one memory for the request."""
    why: list[str] = []
    matched = 0
    if row.scope == "project" and row.project:
        if row.project != project:
            return False, [], 0
        why.append(f"current project ({project})")
    else:
        why.append("global")
    if row.paths and request.path is not None:
        hit = next((p for p in row.paths if path_matches((p,), request.path)), None)
        if hit is None:
            return False, [], 0
        why.append(f"path {hit} matches {request.path}")
        matched += 1
    if row.tasks:
        hit = next((t for t in row.tasks if (request.kind and t.lower() == request.kind.lower())
                    or _word_in(t, request.task)), None)
        if hit is not None:
            why.append(f"task {hit} matches")
            matched += 1
        elif request.kind is not None:
            return False, [], 0
    for name, selectors, value in (("operation", row.operations, request.operation),
                                   ("phase", row.phases, request.phase)):
        if selectors and value is not None:
            hit = next((s for s in selectors if s.lower() == value.lower()), None)
            if hit is None:
                return False, [], 0
            why.append(f"{name} {hit} matches")
            matched += 1
    return True, why, matched


def score(row: CatalogRow, matched: int) -> int:
    """The spec's score: lifecycle, authority, selectors (the project counts as one), application history."""
    applied = row.applied
    selectors = matched + (1 if row.scope == "project" and row.project else 0)
    return (
        STATE_SCORE.get(row.lifecycle, 0)
        + (EXPLICIT_BONUS if row.authority == "explicit" else 0)
        + SELECTOR_BONUS * selectors
        + SUCCESS_BONUS * applied.get("used-successfully", 0)
        - IGNORE_PENALTY * applied.get("ignored", 0)
        - FAILURE_PENALTY * (applied.get("corrected", 0) + applied.get("contributed-to-failure", 0))
    )


def history_reasons(row: CatalogRow) -> list[str]:
    out = []
    if row.authority == "explicit":
        out.append(EXPLICIT_REASON)
    if row.lifecycle == "trial":
        out.append("trial: not yet proven")
    good = row.applied.get("used-successfully", 0)
    if good:
        out.append(f"used successfully {good} time{'s' if good != 1 else ''}")
    bad = row.applied.get("corrected", 0) + row.applied.get("contributed-to-failure", 0)
    if bad:
        out.append(f"corrected or failed {bad} time{'s' if bad != 1 else ''}")
    return out


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """Score first, then relevance to the task text, then title and id (stable)."""
    return sorted(candidates, key=lambda c: (-c.score, c.relevance if c.relevance is not None else 10**9,
                                             c.row.title.casefold(), c.row.id))


# ---------------------------------------------------------------- the director


def build(vault: Vault, request: TaskRequest, *, record: bool = True,
          relevance: Callable[[TaskRequest, str | None], list[str]] | None = None) -> Manifest:
    """The manifest for ``request``; journalled as an application unless ``record`` is False."""
    settings = vault.config.context
    budget = request.budget if request.budget is not None else settings.budget_chars
    if budget < 0:
        raise InvalidInput(f"--budget must be at least 0, got {budget}")
    if not request.task.strip():
        raise InvalidInput("context needs a task (--task TEXT)")
    project = request.project
    manifest = Manifest(request.task, project, budget, [], [])
    if not vault.config.vault.retrieval:
        manifest.note = "retrieval is off (vault.retrieval = false): no memories are delivered"
        manifest.markdown = ""
        return manifest

    current = senders.clean(request.sender) or vault.sender
    ranked_ids = (relevance or _search_relevance(vault))(request, project)
    relevance_rank = {memory_id: n for n, memory_id in enumerate(ranked_ids, 1)}
    catalog_rows = _catalog_rows(vault, ranked_ids, project, request.overview)
    candidates: list[Candidate] = []
    for row in catalog_rows:
        if not row.current or row.trust == "external":
            continue
        admitted, why, matched = match(row, request, project)
        if not admitted:
            continue
        found = relevance_rank.get(row.id)
        standing = (row.type == "core-profile" or row.recall in ("passive", "both") or row.tier == "hot"
                    or matched > 0)
        overview = request.overview and row.scope == "project" and row.project == project
        if not standing and found is None and not overview:
            continue
        # A brief entry's reasons: what sets it apart (not its scope, which the block's header says).
        brief = why[1:] + [r for r in history_reasons(row) if r != EXPLICIT_REASON]
        why += history_reasons(row)
        if row.source == SYNTHESIS_SOURCE and row.links:  # its members are one `memvault show` away
            why.append(f"overview of {len(row.links)} memories: {', '.join(row.links)}")
            brief.append(f"overview of {len(row.links)} memories")
        other = senders.other_sender(row.sender, current)
        if other is not None:
            why.append(senders.why(other))
            brief.append(senders.why(other))
        if found is not None:
            why.append(f"relevant to the task text (rank {found})")
            brief.append(f"relevant #{found}")
        candidates.append(Candidate(row, score(row, matched), found, why, matched, brief or why[:1],
                                    standing or overview))

    ordered = rank(candidates)
    resident_ids = _resident(ordered, settings.profile_budget_chars, settings.max_resident_policies)
    bodies = _bodies(vault, [c.row for c in ordered if c.row.id in resident_ids])
    for candidate in ordered:
        row = candidate.row
        if row.id in resident_ids and row.id in bodies:
            manifest.resident.append(ResidentItem(row.id, row.title, bodies[row.id], _resident_why(candidate)))
        else:
            source = row.summary or row.trigger or row.title
            manifest.manifest.append(ManifestItem(row.id, row.title, "", candidate.why, source, candidate.brief,
                                                  candidate.standing))
    event_id = new_event_id() if record and (manifest.resident or manifest.manifest) else None
    manifest.application = event_id
    # Who the user is first, then what always applies (recall, then the hot tier), then the matching policies.
    order = {"core profile: always resident": 0, HOT_LEAD: 2, POLICY_LEAD: 3}
    manifest.resident.sort(key=lambda item: order.get(item.why[0], 1))
    fit(manifest, settings.abstract_steps)
    if event_id is not None:
        if manifest.ids:
            event = application_event(request, project, manifest.ids, event_id)
            with vault.transaction(sync=False) as tx:  # the journal only: nothing for the indexes
                tx.record(event)
        else:
            manifest.application = None
            fit(manifest, settings.abstract_steps)
    return manifest


def _catalog_rows(vault: Vault, ranked_ids: Sequence[str], project: str | None,
                  overview: bool = False) -> list[CatalogRow]:
    """Standing candidates of the scope plus the rows of the search hits (the search built the indexes);
    for an ``overview``, the project's memories too."""
    searcher = vault.searcher()
    rows = {row.id: row for row in searcher.standing(project)}
    if overview and project:
        rows.update((row.id, row) for row in searcher.catalog.of_project(project, OVERVIEW_ROWS) if row.id not in rows)
    rows.update(searcher.rows({i for i in ranked_ids if i not in rows}))
    return list(rows.values())


def _bodies(vault: Vault, rows: Sequence[CatalogRow]) -> dict[str, str]:
    """Full text of the memories delivered in full (only these files are read)."""
    out: dict[str, str] = {}
    for row in rows:
        try:
            memory = store.read_entry(vault.root, row.path).memory
        except VaultError:
            continue  # changed or broken since the last sync: it stays in the manifest
        if memory.id == row.id:
            out[row.id] = memory.body.strip() or memory.summary or memory.title
    return out


def _resident_why(candidate: Candidate) -> list[str]:
    row = candidate.row
    lead = ("core profile: always resident" if row.type == "core-profile"
            else f"{row.recall} recall: always in context" if row.recall in ("passive", "both")
            else HOT_LEAD if row.tier == "hot"
            else POLICY_LEAD)
    return [lead, *candidate.why]


def _resident(ordered: Sequence[Candidate], profile_budget: int, max_policies: int) -> set[str]:
    """Ids delivered in full: the core profile within its budget, passive/both memories,
    the hot tier (kept under its own budget by governance), and the best matching proven policies."""
    out: set[str] = set()
    used = 0
    policies = 0
    for candidate in ordered:
        row = candidate.row
        size = len(row.title) + len(row.summary) + 200
        if row.type == "core-profile":
            if used + size <= profile_budget:
                out.add(row.id)
                used += size
        elif row.recall in ("passive", "both") or row.tier == "hot":
            out.add(row.id)
        elif (row.type == "collaboration-policy" and row.lifecycle == "proven" and candidate.matched > 0
              and policies < max_policies):
            out.add(row.id)
            policies += 1
    return out


def search_depth(budget: int) -> int:
    """How many search hits a manifest of ``budget`` characters could list at most: as many as its
    briefest entries fit (the shortest title, one reason), within SEARCH_DEPTH .. MAX_SEARCH_DEPTH."""
    shortest = len(entry_line(ManifestItem("m-" + "0" * 26, "x", "", [], brief=["relevant #1"]), BRIEFEST))
    return max(SEARCH_DEPTH, min(MAX_SEARCH_DEPTH, budget // shortest))


def _search_relevance(vault: Vault) -> Callable[[TaskRequest, str | None], list[str]]:
    def relevance(request: TaskRequest, project: str | None) -> list[str]:
        from ..retrieval.searcher import SearchQuery

        settings = vault.config.context
        budget = request.budget if request.budget is not None else settings.budget_chars
        # Every hit up to what the budget could list: not cut at the search's presentation limit.
        result = vault.search(SearchQuery(request.task, limit=search_depth(budget), project=project,
                                            path=request.path, keep_vector=request.keep_vector, candidates=True))
        # Ranked hits are not all relevant (a small vault returns everything): a memory counts when the
        # search weighs it relevant itself (it clears the relevance floor), when its meaning is close
        # enough, or when it shares words with the task and is not far off in meaning (one common word
        # such as "add" is not relevance).
        out = []
        for hit in result.hits:
            cosine = max(hit.similarity.values(), default=0.0)
            if (not hit.weak or cosine >= settings.min_similarity
                    or ("fts" in hit.lanes and cosine >= settings.min_word_similarity)):
                out.append(hit.id)
        return out

    return relevance


def application_event(request: TaskRequest, project: str | None, ids: Sequence[str], event_id: str) -> Event:
    payload = {"ids": list(ids), "task": request.task, "project": project, "path": request.path,
               "operation": request.operation, "phase": request.phase, "kind": request.kind}
    return Event("application", ids[0] if ids else "", {k: v for k, v in payload.items() if v is not None},
                 id=event_id)


def describe(manifest: Manifest) -> str:
    """One line for stderr: what was delivered."""
    return (f"{len(manifest.resident)} resident, {len(manifest.manifest)} in the manifest, "
            f"{manifest.used} of {manifest.budget} characters"
            + (f", {manifest.omitted} left out for the budget" if manifest.omitted else "")
            + (f"; application {manifest.application}" if manifest.application else ""))


def as_json_text(manifest: Manifest) -> str:
    return json.dumps(manifest.to_json(), ensure_ascii=False, indent=2)


