"""Reading the vault: one memory by id, memories by filter, and where links point."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .. import store
from ..errors import InvalidInput, VaultError
from ..format.ids import is_valid_id
from ..format.memory import ENUMS, Memory
from ..format.text import link_text
from ..store import Entry, Scan
from .ports import Open as Vault


def entry(vault: Vault, memory_id: str, scan: Scan | None = None) -> Entry:
    """The memory with ``memory_id``.

    Raises:
        MemoryNotFound: no file has that id.
        MemoryFileError: the file holding that id is invalid (its own error, with path and line).
    """
    if not is_valid_id(memory_id) and not memory_id.startswith("note-"):
        raise InvalidInput(f"not a memory id: {memory_id!r}")
    scan = scan or vault.scan()
    if memory_id not in scan.entries:
        for problem in scan.problems:
            if problem.path is not None and _mentions_id(vault, problem.path, memory_id):
                raise problem
    return scan.get(memory_id)


def find(vault: Vault, memory_id: str) -> Entry:
    """:func:`entry` for readers, without reading the whole vault: the file the catalog
    names for ``memory_id`` when it still holds that id; when it does not (renamed, moved or
    deleted by hand), the catalog brought in line with the files first, then asked again; else
    :func:`entry` (a scan)."""
    from .indexes import bring_current

    for attempt in (1, 2):
        rel = catalog_paths(vault, [memory_id]).get(memory_id)
        if rel is not None:
            try:
                entry = store.read_entry(vault.root, rel)
            except (VaultError, OSError):
                entry = None
            if entry is not None and entry.memory.id == memory_id:
                return entry
        if attempt == 2 or bring_current(vault) is not None:
            break  # the indexes could not be updated: the files decide
    return vault.entry(memory_id)


def catalog_paths(vault: Vault, memory_ids: Iterable[str]) -> dict[str, str]:
    """id -> path as last indexed (empty when the indexes are missing or unreadable)."""
    from ..index.catalog import Catalog

    path = vault.root / store.STATE_DIR / "catalog.sqlite"
    if not path.exists():
        return {}
    try:
        catalog = Catalog(path)
        try:
            return {i: row.path for i, row in catalog.get(memory_ids).items()}
        finally:
            catalog.close()
    except (VaultError, OSError):
        return {}


def links_of(vault: Vault, memory: Memory) -> list[dict[str, str | None]]:
    """:func:`resolve_links` from the catalog (no scan); each resolved id is checked on disk,
    so a stale catalog costs a scan, never a wrong answer."""
    from ..index.catalog import Catalog

    path = vault.root / store.STATE_DIR / "catalog.sqlite"
    if memory.links and path.exists():
        try:
            catalog = Catalog(path)
            try:
                targets = catalog.resolve(memory.links)
            finally:
                catalog.close()
        except (VaultError, OSError):
            targets = None
        if targets is not None and len(targets) == len(set(memory.links)):
            paths = catalog_paths(vault, set(targets.values()))
            if all(_holds(vault, paths.get(i), i) for i in set(targets.values())):
                return [{"link": link, "id": targets[link]} for link in memory.links]
    return vault.resolve_links(memory, vault.scan()) if memory.links else []


def _holds(vault: Vault, rel: str | None, memory_id: str) -> bool:
    return rel is not None and _mentions_id(vault, rel, memory_id)


def _mentions_id(vault: Vault, rel: str, memory_id: str) -> bool:
    """Whether the (invalid) file at ``rel`` names ``memory_id`` in its header."""
    try:
        with store.inside(vault.root, rel).open("rb") as handle:
            head = handle.read(64 * 1024)
    except (OSError, VaultError):
        return False
    pattern = rb"(?m)^id:[ \t]*['\"]?" + re.escape(memory_id.encode()) + rb"['\"]?[ \t]*(#|$)"
    return re.search(pattern, head) is not None


def matching(
    vault: Vault,
    *,
    type: str | None = None,
    scope: str | None = None,
    project: str | None = None,
    lifecycle: str | None = None,
    tier: str | None = None,
    trust: str | Iterable[str] | None = None,
    include_trash: bool = False,
) -> tuple[list[Entry], list[VaultError]]:
    """Memories matching every given filter, ordered by path; ``trust`` is one level or several
    (``any``, as for search: every level)."""
    filters = (("type", type), ("scope", scope), ("lifecycle", lifecycle), ("tier", tier))
    for key, value in filters:
        if value is not None and value not in ENUMS[key]:
            raise InvalidInput(f"unknown {key} {value!r}; expected one of {', '.join(ENUMS[key])}")
    trusts = _trust_levels(trust)
    result = vault.scan()
    out = []
    for entry in result.entries.values():
        m = entry.memory
        if entry.in_trash and not include_trash:
            continue
        if (
            (type and m.type != type)
            or (scope and m.scope != scope)
            or (project and m.project != project)
            or (lifecycle and m.lifecycle != lifecycle)
            or (tier and m.tier != tier)
            or (trusts is not None and m.trust not in trusts)
        ):
            continue
        out.append(entry)
    out.sort(key=lambda e: e.path)
    return out, result.problems


def _trust_levels(trust: str | Iterable[str] | None) -> frozenset[str] | None:
    """The trust levels a filter admits; None: every level (nothing asked, or ``any``)."""
    asked = (trust,) if isinstance(trust, str) else tuple(trust or ())
    unknown = [t for t in asked if t not in ENUMS["trust"] and t != "any"]
    if unknown:
        raise InvalidInput(f"unknown trust {unknown[0]!r}; expected one of {', '.join(ENUMS['trust'])} or any")
    return None if not asked or "any" in asked else frozenset(asked)


def resolve_links(vault: Vault, memory: Memory, scan: Scan) -> list[dict[str, str | None]]:
    """Each link of ``memory`` with the id it points to (None when dangling)."""
    by_key: dict[str, str] = {}
    for entry in scan.active():
        stem = entry.path.rsplit("/", 1)[-1][:-3]
        by_key.setdefault(stem.lower(), entry.memory.id)
        suffix = f"-{entry.memory.id[-store.ID_SUFFIX:]}"
        if stem.endswith(suffix):  # a file named with its id's end answers to its slug too
            by_key.setdefault(stem[: -len(suffix)].lower(), entry.memory.id)
        by_key.setdefault(entry.memory.title.lower(), entry.memory.id)
    out = []
    for link in memory.links:
        target = link_text(link)
        resolved = target if target in scan.entries else by_key.get(target.lower())
        out.append({"link": link, "id": resolved})
    return out
