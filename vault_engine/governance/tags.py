"""Tag variants: case, plurals and short word endings become one tag, the shortest form."""

from __future__ import annotations

from collections.abc import Iterable

from .actions import Action, Change, View


def _tag_key(tag: str) -> str:
    key = tag.strip().lower().replace("_", "-").replace(" ", "-")
    if len(key) > 4 and key.endswith("ies"):
        return key[:-3] + "y"
    if len(key) > 4 and key.endswith(("sses", "xes", "ches", "shes")):
        return key[:-2]  # classes, boxes, branches, pushes
    if len(key) > 4 and key.endswith("ses"):
        return key[:-1]  # releases, databases, cases: the word itself ends in -se
    if len(key) > 3 and key.endswith("s") and not key.endswith("ss"):
        return key[:-1]
    return key


def _singulars(tag: str) -> tuple[str, ...]:
    """The forms ``tag`` could be the plural of, beside the one :func:`_tag_key` picks: "caches" is
    "cache" as well as "cach", "statuses" "status" as well as "statuse"."""
    key = tag.strip().lower().replace("_", "-").replace(" ", "-")
    out = []
    if len(key) > 4 and key.endswith("es"):
        out += [key[:-1], key[:-2]]
    return tuple(form for form in out if form != _tag_key(tag))


# Word endings that make a variant of the same tag (plurals are folded by ``_tag_key`` first).
_SUFFIXES = frozenset({"s", "es", "d", "ed", "er", "ing", "ment", "ion"})


def tag_canon(tags: Iterable[str]) -> dict[str, str]:
    """Each tag variant (case, plural, a short suffix) mapped to the one form the vault keeps.

    Variants group by their lowercased singular; a key that extends another by
    a word ending ("deploy" / "deployment", "test" / "testing", see
    ``_SUFFIXES``) joins it when the shorter has at least four letters, so
    "post" / "postgres" and "data" / "database" stay apart.  The kept form is
    the shortest, lowercase first, then the most used.
    """
    counts: dict[str, int] = {}
    for tag in tags:
        counts[tag] = counts.get(tag, 0) + 1
    groups: dict[str, list[str]] = {}
    for tag in counts:
        groups.setdefault(_tag_key(tag), []).append(tag)
    # A plural whose other reading is a tag of the vault joins it ("caches" and "cache", "statuses" and
    # "status"): only a tag in use decides, so "buses" alone is still grouped by its first reading.
    spelled = {t.strip().lower().replace("_", "-").replace(" ", "-"): _tag_key(t) for t in counts}
    for tag in list(counts):
        own = _tag_key(tag)
        other = next((spelled[form] for form in _singulars(tag) if spelled.get(form, own) != own), None)
        if other is not None and own in groups and other in groups:
            keep, gone = sorted((own, other), key=lambda k: (len(k), k))
            groups[keep].extend(groups.pop(gone))
            spelled = {form: keep if key == gone else key for form, key in spelled.items()}
    keys = sorted(groups, key=lambda k: (len(k), k))
    parent = {k: k for k in keys}
    # Each key looks only at the few keys it could extend (itself less one ending), so a
    # header of 20,000 distinct tags costs 20,000 steps, not 20,000 squared.
    for long in keys:
        shorter = [long[: -len(s)] for s in _SUFFIXES if len(long) - len(s) >= 4 and long.endswith(s)]
        roots = [k for k in shorter if k in parent and parent[k] == k]
        if roots:
            parent[long] = min(roots, key=lambda k: (len(k), k))
    members: dict[str, list[str]] = {}
    for key, variants in groups.items():
        members.setdefault(parent[key], []).extend(variants)
    out: dict[str, str] = {}
    for variants in members.values():
        keep = min(variants, key=lambda t: (len(t), t != t.lower(), -counts[t], t))
        for variant in variants:
            out[variant] = keep
    return out


def plan_tags(view: View) -> list[Action]:
    """Tag variants rewritten to one form across the vault."""
    governed = sorted(view.governed(), key=lambda m: m.id)
    canon = tag_canon(t for m in governed for t in m.tags)
    out = []
    for memory in governed:
        new = tuple(dict.fromkeys(canon.get(t, t) for t in memory.tags))
        change = Change.of(memory, tags=new)
        if change is not None:
            renamed = sorted({f"{t} -> {canon[t]}" for t in memory.tags if canon.get(t, t) != t})
            reason = "tag variants: " + ", ".join(renamed) if renamed else "repeated tag removed"
            out.append(Action("tags", memory.id, reason, changes=(change,)))
    return out
