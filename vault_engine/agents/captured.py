"""The messages a vault has stored from agents' transcripts, whatever session they came in.

An agent copies messages from one session into another: Claude Code's
``--fork-session`` and a resume that copies the history write the parent's lines
again, with their own ``uuid``, under the new session's id; Codex's forks copy
the parent's lines.  So what is stored is recorded for the whole vault, by the
message's own key (see :mod:`.messages`), not per session: a message captured
in one session is never stored again from another.

**Layout** (derived state under ``.memvault/agents/captured/``: never in git, and
deleting it only means the next capture of an old session checks it again):

- ``0.keys`` ... ``f.keys``: one 16-hex-digit digest of a key a line, sorted,
  sharded by the digest's first digit.  A key is a digest, so a line is 17
  bytes whatever the agent's key looks like, and two copies of a shard merge
  by a union of their lines (a sorted text file diffs and merges line by line);
  a capture rewrites only the shards it adds to.
- ``pending/<session>.keys``: the digests a capture running right now has taken
  and not recorded yet, so a fork captured at the same time leaves them to it.
  A pending file whose session's capture lock is free (the capture crashed) is
  not waited for: its messages are taken again.

Every change holds ``captured.lock`` for a few milliseconds (read, merge, write
atomically), never while a capture asks the model, so captures of different
sessions still run side by side; a crash leaves every shard whole (old or new),
and a torn or foreign line is ignored.  64 bits of digest make a false "already
stored" unlikely below billions of messages (about 1 in 10^7 at a million).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from .. import fsio, locks
from ..patterns import lazy_pattern
from .messages import Message

CAPTURED_DIR = ".memvault/agents/captured"
KEYS_LOCK_TIMEOUT = 30.0  # seconds: the lock is held only to read and write a few small files
_DIGEST = lazy_pattern(r"[0-9a-f]{16}")


def digest(key: str) -> str:
    """The 16 hex digits a message key is recorded as."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


class CapturedKeys:
    """The vault's record of stored messages (see the module); each method takes the lock itself."""

    def __init__(self, root: Path):
        self.folder = root / CAPTURED_DIR
        self._lock = locks.WriterLock(self.folder.parent / "captured.lock", KEYS_LOCK_TIMEOUT,
                                     what="recording captured messages")

    def take(self, session: str, messages: Sequence[Message], also_stored: Iterable[str] = (),
             lock_of: Callable[[str], Path] | None = None) -> list[Message]:
        """The messages of ``messages`` not stored yet, nor taken by another session's running capture,
        each once; noted as taken by ``session`` until :meth:`record` or :meth:`release`.

        ``also_stored``: keys known stored by other means (an older per-session record).
        ``lock_of``: the capture lock file of a session: a pending file whose session's lock is free
        is a crashed capture's and is not waited for.
        """
        known = {digest(k) for k in also_stored}
        with self._lock.hold():
            stored = self._stored()
            busy = self._taken_by_others(session, lock_of)
            new: list[Message] = []
            seen: set[str] = set()
            for message in messages:
                key = digest(message.key)
                if key in seen or key in stored or key in known or key in busy:
                    continue
                seen.add(key)
                new.append(message)
            self._write(self._pending(session), seen)
        return new

    def record(self, session: str, messages: Sequence[Message], also_stored: Iterable[str] = ()) -> None:
        """Record ``messages`` (and ``also_stored``) as stored; ``session``'s pending note goes."""
        added = {digest(m.key) for m in messages} | {digest(k) for k in also_stored}
        with self._lock.hold():
            shards: dict[str, set[str]] = {}
            for key in added:
                shards.setdefault(key[0], set()).add(key)
            for shard, keys in shards.items():
                path = self.folder / f"{shard}.keys"
                before = _read(path)
                if not keys <= before:
                    self._write(path, before | keys)
            self._pending(session).unlink(missing_ok=True)

    def release(self, session: str) -> None:
        """Drop ``session``'s pending note (its capture stored nothing): others may take its messages."""
        with self._lock.hold():
            self._pending(session).unlink(missing_ok=True)

    def count(self) -> int:
        """How many messages the vault has recorded as stored."""
        return len(self._stored())

    def _stored(self) -> set[str]:
        out: set[str] = set()
        for path in self.folder.glob("*.keys"):
            out |= _read(path)
        return out

    def _taken_by_others(self, session: str, lock_of: Callable[[str], Path] | None) -> set[str]:
        out: set[str] = set()
        for path in (self.folder / "pending").glob("*.keys"):
            name = path.name[: -len(".keys")]
            if name == session:
                continue
            if lock_of is not None and not locks.WriterLock(lock_of(name), 0).held():
                continue  # a capture that crashed: its messages are anyone's again
            out |= _read(path)
        return out

    def _pending(self, session: str) -> Path:
        return self.folder / "pending" / f"{session}.keys"

    @staticmethod
    def _write(path: Path, keys: set[str]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fsio.write_atomic(path, "".join(f"{k}\n" for k in sorted(keys)))


def _read(path: Path) -> set[str]:
    """The digests a shard lists; none when it is missing or unreadable (torn or foreign lines skipped)."""
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    return {line for line in text.split("\n") if _DIGEST.fullmatch(line)}
