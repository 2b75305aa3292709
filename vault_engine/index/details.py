"""The detail cache (``.memvault/details/``): each memory's detailed summary, kept out of its file.

One small JSON file per memory, ``<id>.json``, holding the summary, the model
that wrote it and the sha256 of the text it was made from.  Like the indexes
it is derived state: a lookup answers only while that digest still matches
the memory's text (an edited memory gets a new summary), and a missing,
unreadable or malformed file is a miss, never an error.  Files are replaced
atomically; sync drops the entries of memories the vault no longer holds, so
a purged memory leaves no summary behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Container, Iterable
from pathlib import Path

from .. import fsio, store
from ..errors import VaultError
from ..format.ids import is_valid_id

log = logging.getLogger(__name__)

DETAILS_DIR = "details"
_SUFFIX = ".json"


def source_digest(text: str) -> str:
    """The key a summary is kept under: the sha256 of the text it summarises."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _folder(root: Path) -> Path:
    return root / store.STATE_DIR / DETAILS_DIR


def _path(root: Path, memory_id: str) -> Path | None:
    # Ids are checked by the schema, but a cache path is never built from an unchecked one.
    return _folder(root) / f"{memory_id}{_SUFFIX}" if is_valid_id(memory_id) else None


def cached(root: Path, memory_id: str, source: str) -> str | None:
    """The summary kept for ``memory_id`` when it was made from ``source``, else None."""
    path = _path(root, memory_id)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("sha256") != source_digest(source):
        return None
    text = data.get("text")
    return text if isinstance(text, str) and text.strip() else None


def save(root: Path, memory_id: str, source: str, text: str, by: str) -> bool:
    """Keep ``text`` as the summary of ``memory_id`` made from ``source``; False when it could not be kept."""
    path = _path(root, memory_id)
    if path is None:
        return False
    record = {"id": memory_id, "sha256": source_digest(source), "by": by, "text": text}
    try:
        fsio.write_atomic(path, json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    except VaultError as exc:  # a full disk or a read-only folder: the answer stands, the next read makes it again
        log.debug("detail of %s not cached: %s", memory_id, exc.one_line())
        return False
    return True


def drop(root: Path, memory_ids: Iterable[str]) -> None:
    """Forget the summaries of ``memory_ids`` (missing ones are fine)."""
    for memory_id in memory_ids:
        path = _path(root, memory_id)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)


def prune(root: Path, keep: Container[str]) -> None:
    """Forget every summary but those of the memory ids in ``keep``."""
    try:
        names = [item.name for item in _folder(root).iterdir()]
    except OSError:
        return
    drop(root, [name[: -len(_SUFFIX)] for name in names
                if name.endswith(_SUFFIX) and not name.startswith(".") and name[: -len(_SUFFIX)] not in keep])
