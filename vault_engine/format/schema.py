"""The frontmatter schema: raw YAML values checked key by key into a :class:`Memory`.

Every failure is a :class:`ValidationError` naming the key and its line in the
file, with the allowed values where there is a vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any, cast

from ..errors import ValidationError
from ..patterns import lazy_pattern
from .ids import is_valid_id
from .kinds import (
    ENUMS,
    OUTCOMES,
    Authority,
    Lifecycle,
    MemoryClass,
    MemoryType,
    Recall,
    Scope,
    Tier,
    Trust,
)
from .value import KEY_ORDER, MAX_COUNT, Memory, empty_applied

_SURROGATE = lazy_pattern("[\ud800-\udfff]")
# Unknown keys are kept and written back; their values must be plain data of sane size.
_MAX_EXTRA_DEPTH = 32
_MAX_EXTRA_NODES = 10_000


class _Checker:
    """Validates raw frontmatter values, reporting the key's line."""

    def __init__(self, raw: Mapping[str, Any], header: str, path: str | None):
        self.raw = raw
        self.header = header
        self.path = path

    def line_of(self, key: str) -> int | None:
        # Lines as an editor counts them: str.splitlines() also splits at U+2028, \x0c, ...
        for number, line in enumerate(self.header.split("\n"), start=2):
            if re.match(rf"^['\"]?{re.escape(key)}['\"]?\s*:", line):
                return number
        return None

    def fail(self, key: str | None, message: str) -> ValidationError:
        line = self.line_of(key) if key else None
        if line is None and (self.header or key is None):
            line = 1  # a missing key has no line of its own: point at the start of the frontmatter
        return ValidationError(message, path=self.path, line=line)

    def text(self, key: str, required: bool = False, default: Any = None) -> Any:
        value = self.raw.get(key)
        if value is None:
            if required:
                raise self.fail(key, f"missing required key '{key}'")
            return default
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(key, f"key '{key}' must be text, got {_describe(value)}")
        value = str(value)
        if required and not value.strip():
            raise self.fail(key, f"key '{key}' must not be empty")
        return value

    def enum(self, key: str, default: str | None) -> str | None:
        value = self.text(key, default=default)
        if value is None:
            return None
        allowed = ENUMS[key]
        if value not in allowed:
            raise self.fail(
                key, f"key '{key}' has unknown value '{value}'; expected one of {', '.join(allowed)}"
            )
        return str(value)

    def text_list(self, key: str) -> tuple[str, ...]:
        value = self.raw.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(
            isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value
        ):
            raise self.fail(key, f"key '{key}' must be a list of text values, got {_describe(value)}")
        return tuple(str(v) for v in value)

    def number(self, key: str, default: float, low: float, high: float) -> float:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise self.fail(key, f"key '{key}' must be a number between {low:g} and {high:g}, got {value!r}")
        return float(value)

    def count(self, key: str, default: int) -> int:
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(key, f"key '{key}' must be a whole number >= 0, got {value!r}")
        if value > MAX_COUNT:
            raise self.fail(key, f"key '{key}' must be at most {MAX_COUNT}, got {value}")
        return value

    def moment(self, key: str, allow_date: bool = False) -> Any:
        value = self._moment(key, allow_date)
        if isinstance(value, datetime):
            try:  # every moment is compared and written in UTC: one past the calendar's ends is no moment
                value.astimezone(UTC)
            except OverflowError:
                raise self.fail(key, f"key '{key}' is out of range once in UTC, got {value.isoformat()}") from None
        return value

    def _moment(self, key: str, allow_date: bool) -> Any:
        value = self.raw.get(key)
        if value is None:
            return None
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC)
        if isinstance(value, date):
            return value if allow_date else datetime(value.year, value.month, value.day, tzinfo=UTC)
        if isinstance(value, str):
            try:
                if allow_date and len(value) == 10:
                    return date.fromisoformat(value)
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
                return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
            except ValueError:
                pass
        raise self.fail(key, f"key '{key}' must be a date-time like 2026-11-20T09:14:00Z, got {value!r}")

    def evidence(self) -> tuple[dict[str, Any], ...]:
        value = self.raw.get("evidence")
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.fail("evidence", "key 'evidence' must be a list of mappings like {event: e-..., quote: ...}")
        self.writable("evidence", value)
        return tuple(dict(v) for v in value)

    def writable(self, key: str, value: Any) -> None:
        """Refuse values the engine could not write back as read (sets, binary, cycles, huge aliases)."""
        stack: list[tuple[Any, int]] = [(value, 0)]
        nodes = 0
        while stack:
            item, depth = stack.pop()
            nodes += 1
            if nodes > _MAX_EXTRA_NODES or depth > _MAX_EXTRA_DEPTH:
                raise self.fail(key, f"key '{key}' holds a value nested too deeply or too large to keep")
            if isinstance(item, list):
                stack.extend((v, depth + 1) for v in item)
            elif isinstance(item, dict):
                stack.extend((k, depth + 1) for k in item)
                stack.extend((v, depth + 1) for v in item.values())
            elif not (item is None or isinstance(item, (str, int, float, date))):
                raise self.fail(
                    key, f"key '{key}' holds {type(item).__name__} data; use text, numbers, dates, lists or mappings"
                )

    def applied(self) -> dict[str, int]:
        value = self.raw.get("applied")
        counts = empty_applied()
        if value is None:
            return counts
        if not isinstance(value, dict):
            raise self.fail("applied", f"key 'applied' must be a mapping of outcome counts, got {_describe(value)}")
        for outcome, number in value.items():
            if outcome not in counts:
                raise self.fail(
                    "applied", f"key 'applied' has unknown outcome '{outcome}'; expected {', '.join(OUTCOMES)}"
                )
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise self.fail("applied", f"key 'applied' count for '{outcome}' must be a whole number >= 0")
            if number > MAX_COUNT:
                raise self.fail("applied", f"key 'applied' count for '{outcome}' must be at most {MAX_COUNT}")
            counts[outcome] = number
        return counts


def _has_surrogate(value: Any) -> bool:
    """Whether a loaded value holds a lone surrogate anywhere (each shared node looked at once)."""
    stack, seen = [value], set()
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, (list, dict)) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.items() if isinstance(item, dict) else item)
        elif isinstance(item, tuple):
            stack.extend(item)
    return False


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{value!r}"


def from_fields(raw: Mapping[str, Any], body: str = "", *, path: str | None = None, header: str = "") -> Memory:
    """Build a validated :class:`Memory` from frontmatter values.

    Raises:
        ValidationError: a required key is missing or a value is invalid.
    """
    check = _Checker(raw, header, path)
    # A "\ud800" escape loads as a lone surrogate, which no file, index or terminal can hold:
    # refused here, before any message quotes the value (from a file only an escape can make one).
    if not header or "\\u" in header or "\\U" in header:
        for key, value in raw.items():
            if _has_surrogate(key) or _has_surrogate(value):
                shown = str(key).encode("utf-8", "backslashreplace").decode("utf-8")
                raise check.fail(str(key), f"key '{shown}' holds a lone surrogate (an escape like \\ud800 that "
                                           "is not a character)")
        if _SURROGATE.search(body):
            raise ValidationError("the body holds a lone surrogate, which is not a character", path=path)
    memory_id = check.text("id", required=True)
    if not is_valid_id(memory_id):
        raise check.fail("id", f"key 'id' must be lowercase letters, digits, '.', '_' or '-', got {memory_id!r}")
    scope = check.enum("scope", "global")
    project = check.text("project")
    if scope == "project" and not project:
        raise check.fail("scope", "key 'project' is required when scope is project")
    known = set(KEY_ORDER)
    extra = {str(k): v for k, v in raw.items() if k not in known}
    for key, value in extra.items():
        check.writable(key, value)
    return Memory(
        id=memory_id,
        title=check.text("title", required=True),
        type=cast(MemoryType, check.enum("type", None) or check.text("type", required=True)),
        body=body,
        klass=cast("MemoryClass | None", check.enum("class", None)),
        scope=cast(Scope, scope or "global"),
        project=project,
        paths=check.text_list("paths"),
        tasks=check.text_list("tasks"),
        operations=check.text_list("operations"),
        phases=check.text_list("phases"),
        authority=cast(Authority, check.enum("authority", "inferred") or "inferred"),
        trust=cast(Trust, check.enum("trust", "learned") or "learned"),
        lifecycle=cast(Lifecycle, check.enum("lifecycle", "trial") or "trial"),
        recall=cast(Recall, check.enum("recall", "active") or "active"),
        tier=cast(Tier, check.enum("tier", "cold") or "cold"),
        importance=check.number("importance", 0.5, 0.0, 1.0),
        summary=check.text("summary", default=""),
        trigger=check.text("trigger", default=""),
        tags=check.text_list("tags"),
        links=check.text_list("links"),
        supersedes=check.text("supersedes"),
        superseded_by=check.text("superseded_by"),
        source=check.text("source", default="user"),
        sender=check.text("sender"),
        evidence=check.evidence(),
        proof_count=check.count("proof_count", 1),
        applied=check.applied(),
        last_applied=check.moment("last_applied"),
        occurred_at=check.moment("occurred_at", allow_date=True),
        created=check.moment("created"),
        updated=check.moment("updated"),
        trashed_at=check.moment("trashed_at"),
        expires_at=check.moment("expires_at"),
        trashed_from=check.text("trashed_from"),
        extra=extra,
    )
