"""A chat turn as chat exports write it: one ``{"role", "content", "ts"?}`` JSON object per line.

``memvault ingest`` reads a conversation from such turns (:mod:`vault_engine.ingest.transcripts`);
``memvault import`` stores each as one memory (:func:`as_memory_record`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from pathlib import PurePosixPath
from typing import Any

from ..errors import InvalidInput

ROLES = ("user", "assistant", "system", "tool")
ALIASES = {"human": "user", "ai": "assistant"}
LABELS = frozenset({*ROLES, *ALIASES})
MEMORY_FIELDS = frozenset({"body", "title", "summary"})  # a record with any of them is a memory


def parse_ts(value: str) -> date | datetime:
    """An ISO 8601 date or date-time (``Z`` allowed; a naive time is UTC). Raises ``ValueError``."""
    text = value.strip()
    if len(text) == 10:
        return date.fromisoformat(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check_text(content: str) -> None:
    """Raises InvalidInput for text that is not valid Unicode (a lone surrogate)."""
    try:
        content.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("content is not valid Unicode text (a lone surrogate)") from None


def checked(record: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """The turn's role (an alias resolved), content and time (stripped), checked.

    Raises:
        InvalidInput: an unknown role, content that is not text, or a ``ts`` that is not a date-time.
    """
    given = record.get("role")
    role = ALIASES.get(given.strip().lower(), given.strip().lower()) if isinstance(given, str) else ""
    if role not in ROLES:
        raise InvalidInput(f"key 'role' must be one of {', '.join(ROLES)}, got {given!r}")
    if "content" not in record:
        raise InvalidInput("key 'content' is missing")
    content = record["content"]
    if not isinstance(content, str):
        raise InvalidInput(f"key 'content' must be text, got {type(content).__name__}")
    check_text(content)
    ts = record.get("ts")
    if ts is None:
        return role, content, None
    if not isinstance(ts, str):
        raise InvalidInput(f"key 'ts' must be a date-time like 2026-05-01T09:14:00Z, got {ts!r}")
    try:
        parse_ts(ts)
    except ValueError:
        raise InvalidInput(f"key 'ts' must be a date-time like 2026-05-01T09:14:00Z, got {ts!r}") from None
    return role, content, ts.strip() or None


def is_chat_turn(record: Mapping[str, Any]) -> bool:
    """Whether an import record is a chat turn (``role`` and ``content``) rather than a memory."""
    return "role" in record and "content" in record and not MEMORY_FIELDS & record.keys()


def thread_name(source: str, first_line: str) -> str:
    """The conversation a file's turns belong to: the file's name and a digest of its first turn
    ("chats/2026-05 trip.jsonl" -> "2026-05-trip-3f9a2c"; standard input: "stdin-..."), so two
    exports both called chat.jsonl are two conversations, and one export imported again from
    anywhere is the same one."""
    stem = "stdin" if source == "<stdin>" else PurePosixPath(source.replace("\\", "/")).stem
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.")[:64] or "chat"
    return f"{name}-{hashlib.blake2b(first_line.strip().encode('utf-8', 'surrogatepass'), digest_size=3).hexdigest()}"


def as_memory_record(record: Mapping[str, Any], thread: str, position: int) -> dict[str, Any] | None:
    """A chat turn as the memory record ``memvault import`` stores: its content as the body, its
    role as a tag (so "when did I ..." finds what the user said), its time as ``occurred_at``, and
    its place in the conversation as its source (``conversation:THREAD#POSITION``, so it is searched
    beside its neighbours) unless the record names one.  Other keys are kept.  None for a turn with
    no text (an assistant turn that only called a tool).

    Raises:
        InvalidInput: as :func:`checked`.
    """
    role, content, ts = checked(record)
    if not content.strip():
        return None
    out = {key: value for key, value in record.items() if key not in ("role", "content", "ts")}
    tags = out.get("tags", [])
    out["tags"] = [*tags, role] if isinstance(tags, list) and role not in tags else tags
    out["body"] = content
    out.setdefault("source", f"conversation:{thread}#{position}")
    if ts is not None:
        out.setdefault("occurred_at", ts)
    return out
