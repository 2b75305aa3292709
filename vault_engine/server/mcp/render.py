"""The text an agent reads for each tool's result: compact, and naming the tools rather than the CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...patterns import lazy_pattern


def _clip(text: str | None, size: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def _reasons(why: Sequence[str]) -> str:
    """The reasons a hit matched, without the arithmetic of fusion and boosts."""
    return "; ".join(w for w in why if not w.startswith(("fused:", "boosts:"))
                     and not w.endswith(("no match", "not in the top candidates")))


WIDEN = "all_projects: true searches every project"


def _searched(result: Mapping[str, Any]) -> str:
    """Where a search looked, when it was narrowed to a project."""
    project = result.get("project")
    return f" in {project} and the global memories" if project else ""


def render_search(result: Mapping[str, Any]) -> str:
    hits = result.get("hits") or []
    lines: list[str] = []
    if result.get("notice"):
        lines.append(str(result["notice"]) + (" (search again with weak: true to list them)"
                                              if result.get("weak_left_out") else ""))
    if hits:
        widen = f"; {WIDEN}" if result.get("project") else ""
        lines.append(f'{len(hits)} memor{"y" if len(hits) == 1 else "ies"} match "{_clip(result.get("query"), 80)}"'
                     f"{_searched(result)} (open one with memory_read{widen}):")
        for hit in hits:
            where = hit.get("type") or "memory"
            if hit.get("scope") == "project" and hit.get("project"):
                where += f", project {hit['project']}"
            if hit.get("lifecycle") == "trial":
                where += ", trial"
            if hit.get("weak"):
                where += ", weak match"
            line = f"- {hit['id']}  {hit['title']}  (score {float(hit.get('score') or 0):.3f}; {where})"
            summary = _clip(hit.get("summary") or hit.get("snippet"), 240)
            if summary:
                line += f": {summary}"
            reasons = _reasons(hit.get("why") or [])
            if reasons:
                line += f" [why: {reasons}]"
            lines.append(line)
    else:
        widen = f" ({WIDEN})" if result.get("project") else ""
        lines.append(f'No memory matches "{_clip(result.get("query"), 80)}"{_searched(result)}{widen}.')
    revivable = result.get("revivable") or []
    if revivable:
        lines.append("In the trash but relevant (the user can restore one with `memvault trash restore ID`):")
        lines += [f"- {item['id']}  {item['title']}  (score {float(item.get('score') or 0):.3f})"
                  for item in revivable]
    return "\n".join(lines)


def render_read(view: Mapping[str, Any]) -> str:
    text = str(view.get("text") or "").replace("read it with --depth 2", "read it with memory_read depth 2")
    if view.get("warning"):
        text = text.rstrip("\n") + f"\n({view['warning']})\n"
    return text


def render_remember(result: Mapping[str, Any]) -> str:
    where = f" in project {result['project']}" if result.get("project") else ""
    if result.get("created"):
        text = f"Remembered {result['id']}{where} ({result['path']})."
    else:
        text = f"Already remembered: added evidence to {result['id']}{where} ({result['path']})."
    if result.get("notice"):
        text += f" {result['notice']}"
    return text


def _conflicts(result: Mapping[str, Any]) -> str:
    conflicts = result.get("conflicts") or []
    return f" Conflicts: {'; '.join(map(str, conflicts))}." if conflicts else ""


def render_correct(result: Mapping[str, Any]) -> str:
    old = result.get("related")
    return (f"Corrected {old}: the new version is {result['id']} ({result['path']}); {old} is kept as superseded "
            f"(undo: memvault rollback {old})." + _conflicts(result))


def render_forget(result: Mapping[str, Any]) -> str:
    return (f"Moved {result['id']} to the trash ({result['path']}); it can be restored with "
            f"`memvault trash restore {result['id']}`." + _conflicts(result))


_SHOW_HINT = lazy_pattern(r"`memvault show ID --depth 2`")
_FEEDBACK_HINT = lazy_pattern(r"`memvault feedback ID --outcome used-successfully --application (\S+)`")


def render_context(manifest: Mapping[str, Any]) -> str:
    text = str(manifest.get("markdown") or "")
    text = _SHOW_HINT.sub("memory_read, depth 1 or 2", text)
    text = _FEEDBACK_HINT.sub(r"memory_feedback with each applied id, outcome used-successfully and application \1",
                              text)
    if not text.strip():
        text = "No memories apply to this task."
    if manifest.get("note"):
        text = text.rstrip("\n") + f"\n({manifest['note']})\n"
    application = manifest.get("application")
    if application and str(application) not in text:
        text = text.rstrip("\n") + (f"\nApplication id: {application} (pass it to memory_feedback for each memory "
                                    "you applied).\n")
    return text


def render_feedback(result: Mapping[str, Any]) -> str:
    action, ident, outcome = result.get("action"), result["id"], result["outcome"]
    if action == "already-recorded":
        return f"Already recorded {outcome} for {ident} in application {result.get('application')}; it counts once."
    text = f"Recorded {outcome} for {ident}"
    if action == "promoted":
        text += f": promoted from {result['old_lifecycle']} to {result['lifecycle']}"
    elif action == "superseded":
        text += f": it is now superseded (undo: memvault rollback {ident})"
    else:
        text += f" (lifecycle {result['lifecycle']})"
    return text + "."
