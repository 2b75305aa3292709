"""A context manifest and its text within the budget: what is delivered in full, what is listed, and how
each listed entry is written so that the budget lists as many memories as it can.

The resident part (core profile, passive recall, hot tier, matching proven policies) is written in
full.  Each other candidate is an entry of the index, in one of these forms, richest first:

- the bold title, an abstract of 320, 160, 80, 32 or 0 characters (``[context] abstract_steps``)
  and every reason it applies;
- brief: the title and the short reasons (:attr:`ManifestItem.brief`: what sets the entry apart,
  e.g. ``relevant #12`` for the twelfth search hit of the task text);
- brief with the title cut to :data:`BRIEF_TITLE` characters.

:func:`fit` lists first, then enriches: every entry in its briefest form, the last ones dropped
until the text fits; then, form by form, the entries from the best ranked down take the richer form
while the budget allows.  More budget lists more memories until the candidates run out, and what is
left over gives the best ranked entries their titles, reasons and abstracts: lines grow shorter down
the list.  A matching policy leaves the resident part (listed at the top instead) only when the
entries that apply on their own (selectors, recall, an overview; not mere search hits) would not fit
beside it.  The rendered text never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..format.text import clip, printable
from .quoting import PREAMBLE, inline, quoted

HEADER = "<memory-context>\n"
FOOTER = "</memory-context>\n"
MAY_APPLY = "## May apply (open one with `memvault show ID --depth 2`)\n\n"
POLICY_LEAD = "proven policy whose selectors match"
HOT_LEAD = "hot tier: always resident"
BRIEF_TITLE = 32  # the title of the briefest entries: a few words, enough to tell what the memory is about


@dataclass(slots=True)
class ResidentItem:
    id: str
    title: str
    text: str
    why: list[str]


@dataclass(slots=True)
class ManifestItem:
    id: str
    title: str
    abstract: str
    why: list[str]
    source: str = field(default="", repr=False)  # the text abstracts are cut from
    brief: list[str] = field(default_factory=list, repr=False)  # the short reasons of a brief entry (empty: why)
    standing: bool = True  # applies on its own (False: a search hit of the task text only)


@dataclass(slots=True)
class Manifest:
    task: str
    project: str | None
    budget: int
    resident: list[ResidentItem]
    manifest: list[ManifestItem]
    application: str | None = None
    omitted: int = 0  # candidates that did not fit the budget
    note: str | None = None
    markdown: str = ""

    @property
    def used(self) -> int:
        return len(self.markdown)

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.resident] + [m.id for m in self.manifest]

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task, "project": self.project, "budget": self.budget, "used": self.used,
            "application": self.application,
            "resident": [{"id": r.id, "title": r.title, "text": r.text, "why": r.why} for r in self.resident],
            "manifest": [{"id": m.id, "title": m.title, "abstract": m.abstract, "whyApplied": m.why}
                         for m in self.manifest],
            "omitted": self.omitted, "note": self.note, "markdown": self.markdown,
        }


@dataclass(frozen=True, slots=True)
class Form:
    """How one entry is written: the bold title, ``abstract`` characters of abstract and every reason;
    or ``brief``: the title (cut to ``title`` characters unless None) and the short reasons."""

    abstract: int = 0
    brief: bool = False
    title: int | None = None


def forms(steps: Sequence[int]) -> list[Form]:
    """The forms an entry may take, richest first."""
    return [Form(size) for size in steps] + [Form(brief=True), Form(brief=True, title=BRIEF_TITLE)]


BRIEFEST = Form(brief=True, title=BRIEF_TITLE)


# ---------------------------------------------------------------- rendering


def _why(reasons: Sequence[str]) -> str:
    return inline("; ".join(reasons))


def _resident_block(item: ResidentItem) -> str:
    return f"### {inline(item.title)} ({item.id})\n{quoted(item.text)}_why: {_why(item.why)}_\n\n"


def entry_line(item: ManifestItem, form: Form) -> str:
    """The entry's line in ``form`` (the abstract it shows is :func:`abstract_of`)."""
    if form.brief:
        title = clip(item.title, form.title) if form.title is not None else item.title
        return f"- `{item.id}` {inline(title)} _(why: {_why(item.brief or item.why)})_\n"
    text = f"- `{item.id}` **{inline(item.title)}**"
    abstract = abstract_of(item, form)
    if abstract:
        text += f": {inline(abstract)}"
    return text + f" _(why: {_why(item.why)})_\n"


def abstract_of(item: ManifestItem, form: Form) -> str:
    return clip(item.source, form.abstract) if not form.brief and form.abstract > 0 and item.source else ""


def render_markdown(manifest: Manifest, lines: Sequence[str], usage: bool) -> str:
    """The block an agent reads: memvault's own markup around memory text quoted as data (:mod:`.quoting`);
    ``lines`` are the entries' lines (:func:`entry_line`)."""
    parts = [HEADER, PREAMBLE, f"Task: {inline(clip(manifest.task, 200))}\n"]
    if manifest.project:
        parts.append(f"Project: {inline(manifest.project)}\n")
    parts.append("\n")
    if manifest.resident:
        parts.append("## Always apply\n\n")
        parts += [_resident_block(item) for item in manifest.resident]
    if lines:
        parts.append(MAY_APPLY)
        parts += lines
        parts.append("\n")
    if usage and manifest.application:
        parts.append(f"After the task, report what helped: `memvault feedback ID --outcome used-successfully "
                     f"--application {manifest.application}` (or ignored, overridden, corrected, "
                     f"contributed-to-failure).\n")
    parts.append(FOOTER)
    return printable("".join(parts))  # for an agent or a terminal: no escape sequence in a title runs


# ---------------------------------------------------------------- fitting


class _Lines:
    """The entries' line lengths per form, computed once each (``printable`` works character by
    character, so the text's length is the sum of its parts')."""

    def __init__(self, items: Sequence[ManifestItem], ladder: Sequence[Form]) -> None:
        self.items, self.ladder = items, ladder
        self._chars: dict[tuple[int, int], int] = {}

    def chars(self, entry: int, level: int) -> int:
        key = (entry, level)
        if key not in self._chars:
            self._chars[key] = len(printable(entry_line(self.items[entry], self.ladder[level])))
        return self._chars[key]


def _fixed(manifest: Manifest, usage: bool) -> int:
    """The characters of everything but the entry lines (the entries' section header included)."""
    return len(render_markdown(manifest, [""] if manifest.manifest else [], usage))


def _demote_policy(manifest: Manifest) -> bool:
    """Move the last resident policy to the top of the entries; False when there is none."""
    at = max((n for n, item in enumerate(manifest.resident) if item.why and item.why[0] == POLICY_LEAD), default=None)
    if at is None:
        return False
    item = manifest.resident.pop(at)
    manifest.manifest.insert(0, ManifestItem(item.id, item.title, "", item.why[1:], item.text))
    return True


def fit(manifest: Manifest, steps: Sequence[int], usage_min: int = 1500) -> None:
    """Make the text fit the budget (see the module): list, then enrich from the top."""
    usage = manifest.budget >= usage_min
    budget = manifest.budget
    ladder = forms(steps)
    briefest = len(ladder) - 1
    # The resident policies stay in full unless the entries that apply on their own do not fit beside them.
    while True:
        standing = sum(len(printable(entry_line(item, BRIEFEST))) for item in manifest.manifest if item.standing)
        if _fixed(manifest, usage) + standing <= budget or not _demote_policy(manifest):
            break
    lines = _Lines(manifest.manifest, ladder)
    total = _fixed(manifest, usage) + sum(lines.chars(n, briefest) for n in range(len(manifest.manifest)))
    while manifest.manifest and total > budget:
        total -= lines.chars(len(manifest.manifest) - 1, briefest)
        manifest.manifest.pop()
        manifest.omitted += 1
        if not manifest.manifest:
            total = _fixed(manifest, usage)
    while manifest.resident and total > budget:
        manifest.resident.pop()
        manifest.omitted += 1
        total = _fixed(manifest, usage)
    if total > budget:
        text = render_markdown(manifest, [], False)
        manifest.markdown = text if len(text) <= budget else ""
        return
    # Enrich: form by form, from the best ranked entry down, while the budget allows.
    levels = [briefest] * len(manifest.manifest)
    for level in range(briefest - 1, -1, -1):
        for n in range(len(levels)):
            if levels[n] != level + 1:
                break
            grown = total + lines.chars(n, level) - lines.chars(n, level + 1)
            if grown > budget:
                break
            levels[n], total = level, grown
    for item, level in zip(manifest.manifest, levels, strict=True):
        item.abstract = abstract_of(item, ladder[level])
    manifest.markdown = render_markdown(
        manifest, [entry_line(item, ladder[level]) for item, level in zip(manifest.manifest, levels, strict=True)],
        usage)
