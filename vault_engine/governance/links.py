"""Wikilinks as governance reads them: a link's text resolved to the id of an active memory."""

from __future__ import annotations

from collections.abc import Iterable

from ..format.text import link_text
from .actions import View


def link_targets(view: View) -> dict[str, str]:
    """Link targets (file stems and titles, lowercased) to ids, as wikilinks resolve them."""
    out: dict[str, str] = {}
    for memory_id, memory in view.active.items():
        path = view.paths.get(memory_id, "")
        stem = path.rsplit("/", 1)[-1][:-3] if path.endswith(".md") else ""
        if stem:
            out.setdefault(stem.lower(), memory_id)
        out.setdefault(memory.title.lower(), memory_id)
    return out


def resolve_link(link: str, targets: dict[str, str], ids: Iterable[str]) -> str | None:
    """The id a link (``[[stem|label]]``, ``[[title#part]]``, a bare id) points to, or None."""
    text = link_text(link)
    if text in ids:
        return text
    return targets.get(text.lower())
