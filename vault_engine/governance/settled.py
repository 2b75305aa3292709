"""When ``maintain`` may skip planning: the vault is as a run left it that found nothing more to do.

A plan is a pure function of the files, the journal's rollbacks, the
settings, the vectors (which follow from the files and the model setting)
and the clock.  After a run that planned nothing, or whose applied plan,
planned again on the result, comes out empty, the vault is *settled*: its
fingerprint (every memory file's path, size and mtime, the journal files'
sizes, the settings and the engine version) is stored in
``.memvault/maintain.json`` with the first moment the clock alone would
make a step fire (a trash expiry, a state memory's retirement, a decay).
While the fingerprint holds and that moment has not come, planning again
would find nothing, so ``maintain`` returns at once.  ``--replan`` plans in
full regardless.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import fsio, store
from ..version import __version__
from .actions import View
from .classify import _aware, idle_days, is_protected, is_stub, nature, written_at
from .compression import candidate as compressible
from .compression import due as compress_due
from .forgetting import decays
from .rules import redundant_due, retype_due
from .stale import stale_due
from .stubs import candidate as stubbable
from .tiers import usage

if TYPE_CHECKING:
    from .ports import Governed

STATE_FILE = "maintain.json"
RULES_VERSION = "2"  # bump when a planner changes what it plans on the same input


def fingerprint(vault: Governed) -> str:
    """What a plan depends on besides the clock, as one digest."""
    digest = hashlib.sha256(f"{RULES_VERSION}\0{__version__}\0{vault.config!r}\n".encode())
    for rel, path, problem in store.iter_markdown(vault.root):
        if path is None:
            digest.update(f"{rel}\0{problem}\n".encode())
            continue
        try:
            info = os.stat(path)
        except OSError:
            digest.update(f"{rel}\0gone\n".encode())
            continue
        digest.update(f"{rel}\0{info.st_mtime_ns}\0{info.st_size}\n".encode())
    for path in vault.journal.files():
        try:
            digest.update(f"journal/{path.name}\0{path.stat().st_size}\n".encode())
        except OSError:
            continue
    return digest.hexdigest()


def next_due(view: View) -> datetime | None:
    """The first moment the clock alone makes a step plan something on this view (None: never)."""
    config = view.config
    moments: list[datetime] = []
    for memory in view.trashed.values():
        expires = _aware(memory.expires_at)
        if expires is not None:
            moments.append(expires)
    for memory in view.governed():
        if memory.tier == "hot" and not is_protected(memory, config) and nature(memory) == "state":
            created = _aware(memory.created) or _aware(memory.updated)
            if created is not None and ("retire", frozenset({memory.id})) not in view.vetoes:
                moments += _later(created, config.tiers.state_retire_days)
        if decays(memory) and memory.importance < config.decay.exempt_importance:
            if ("decay", frozenset({memory.id})) in view.vetoes:
                continue
            last = _aware(memory.last_applied) or written_at(memory)
            if last is None:
                continue
            if memory.importance <= config.decay.forget_below:
                moments.append(last)
                continue
            days = config.decay.half_life_days * math.log2(memory.importance / config.decay.forget_below)
            moments += _later(last, days)
    moments += [m for m in _rule_moments(view) if m > view.now]
    return min(moments) if moments else None


def _rule_moments(view: View) -> list[datetime]:
    """When the clock alone makes a hot rule old or idle enough for retype, redundant, compress or
    stub, a stub old enough to collect, or an in-progress note idle enough to judge (moments that
    find nothing to do then only cost a plan)."""
    config, now = view.config, view.now
    ratio = usage(view).ratio
    out: list[datetime | None] = []
    for memory in view.governed(stubs=True):
        out.append(stale_due(memory, now, config))
        if memory.tier != "hot":
            continue
        out.append(retype_due(memory, config))
        if compressible(memory, config):
            out.append(compress_due(memory, config))
        if ratio >= config.tiers.soft_ratio:
            out.append(redundant_due(memory, now, config))
        if ratio >= config.tiers.hard_ratio:
            if view.tasks and stubbable(memory, view):
                out.append(now + timedelta(days=config.tiers.stub_idle_days - idle_days(memory, now)))
            if is_stub(memory) and memory.created is not None:
                out += _later(_aware(memory.created) or now, config.tiers.stub_gc_min_age_days)
    return [m for m in out if m is not None]


def _later(moment: datetime, days: float) -> list[datetime]:
    """``moment`` plus ``days``, or nothing when that is past the calendar's end (a date near 9999-12-31)."""
    try:
        return [moment + timedelta(days=days)]
    except OverflowError:
        return []


def _read(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / store.STATE_DIR / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_settled(vault: Governed, now: datetime) -> bool:
    """Whether the vault is as a settled run left it and nothing has come due since."""
    settled = _read(vault.root).get("settled")
    if not isinstance(settled, dict) or settled.get("fingerprint") != fingerprint(vault):
        return False
    due = settled.get("due")
    if due is None:
        return True
    try:
        moment = datetime.fromisoformat(str(due))
    except ValueError:
        return False
    return now < (moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def last_maintained(root: Path) -> float | None:
    """When ``maintain`` last ran on the vault (epoch seconds)."""
    try:
        return float(_read(root)["last_run"])
    except (KeyError, TypeError, ValueError):
        return None


def mark_maintained(root: Path, when: float | None = None, *, settled: str | None = None,
                    due: datetime | None = None) -> None:
    """Record a run (and, with ``settled``, the fingerprint of the settled vault and its next due moment)."""
    import time

    record: dict[str, Any] = {"last_run": time.time() if when is None else when}
    if settled is not None:
        record["settled"] = {"fingerprint": settled, "due": due.isoformat() if due is not None else None}
    fsio.write_atomic(root / store.STATE_DIR / STATE_FILE, json.dumps(record, sort_keys=True) + "\n")
