"""An agent's session as memvault follows it: what it was given, what of it is stored.

One small JSON file per session under ``.memvault/agents/`` (derived state: never
in git, safe to delete; deleting it only means the next prompt may repeat a
memory, and the next capture is checked against the stored episodes instead):

- ``delivered``: the ids of the memories given to the agent so far (at session
  start and with each prompt), so a prompt is never given the same memory twice;
- ``captured``: read only, from files an older memvault wrote: the keys of the
  session's messages it stored.  Capture moves them to the vault-wide record
  (:mod:`.captured`), which a message copied into another session (a fork)
  is checked against too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..format.redact import holds_secret, redact_data
from ..fsio import write_atomic
from ..patterns import lazy_pattern

AGENTS_DIR = ".memvault/agents"
_PLAIN = lazy_pattern(r"[A-Za-z0-9_-]{1,40}")


def session_name(agent: str, session_id: str) -> str:
    """The ingest session name of an agent's session: ``<agent>-<id>`` (an id that is not plain, or that
    looks like a secret, is hashed: a secret never names a file)."""
    plain = _PLAIN.fullmatch(session_id) and not holds_secret(session_id)
    return f"{agent}-{session_id if plain else hashlib.sha256(session_id.encode()).hexdigest()[:24]}"


@dataclass(slots=True)
class AgentSession:
    """The state of one agent session (see the module)."""

    name: str
    project: str | None = None
    delivered: list[str] = field(default_factory=list)
    captured: set[str] = field(default_factory=set)  # an older memvault's record (see the module)
    answered_by: str | None = None  # the last hook's answer came from the vault's "server" or this "process"

    @staticmethod
    def path(root: Path, name: str) -> Path:
        return root / AGENTS_DIR / f"{name}.json"

    @classmethod
    def load(cls, root: Path, name: str) -> AgentSession:
        """The session's state; a fresh one when there is none or it cannot be read."""
        try:
            data = json.loads(cls.path(root, name).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return cls(name)
        if not isinstance(data, dict):
            return cls(name)
        delivered = data.get("delivered")
        captured = data.get("captured")
        project, by = data.get("project"), data.get("answered_by")
        return cls(name, project if isinstance(project, str) else None,
                   [d for d in delivered if isinstance(d, str)] if isinstance(delivered, list) else [],
                   {c for c in captured if isinstance(c, str)} if isinstance(captured, list) else set(),
                   by if isinstance(by, str) else None)

    def deliver(self, ids: list[str]) -> None:
        """Note ``ids`` as given to the agent."""
        self.delivered += [i for i in ids if i not in self.delivered]

    def save(self, root: Path) -> None:
        """Write the state atomically (a crash leaves the old state or the new one)."""
        target = self.path(root, self.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = {"session": self.name, "project": self.project, "delivered": self.delivered,
                **({"captured": sorted(self.captured)} if self.captured else {}),  # not yet moved to the record
                "answered_by": self.answered_by}
        write_atomic(target, json.dumps(redact_data(data), ensure_ascii=False, indent=1) + "\n")
