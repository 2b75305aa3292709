"""Deterministic YAML emission for frontmatter values.

PyYAML's dumper reorders, re-quotes and re-wraps values; memvault needs the
same value to always produce the same bytes, and the output must load back to
exactly the value written.  This module emits a small, fixed subset of YAML:
plain scalars where they are unambiguous, JSON-style double quotes otherwise,
flow lists and mappings, and block lists when a flow list would be too long.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, date, datetime
from typing import Any

from ..patterns import lazy_pattern

MAX_FLOW_WIDTH = 100
# YAML scanners give up on an implicit ``key:`` longer than 1024 characters;
# longer keys are written explicitly (``? key`` then ``: value``).
MAX_IMPLICIT_KEY = 1000

_BOOL_NULL = {
    "y", "n", "yes", "no", "true", "false", "on", "off", "null", "~", "=", "<<",
}
_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`. ")
_FLOW_FORBIDDEN = set(",?[]{}")  # '?' ends a plain scalar inside [..] and {..}
_NUMBERISH = lazy_pattern(r"^[-+]?[0-9][0-9 _:.,eExXoObBa-fA-FTZtz+-]*$|^[-+]?\.")


def _printable(ch: str) -> bool:
    cp = ord(ch)
    return (
        cp in (0x09,)
        or 0x20 <= cp <= 0x7E
        # U+2028 and U+2029 are line breaks to YAML: written raw they end a
        # plain scalar and are folded inside quotes, so they are escaped.
        or (0xA0 <= cp <= 0xD7FF and cp not in (0x2028, 0x2029))
        or (0xE000 <= cp <= 0xFFFD and cp != 0xFEFF)
        or 0x10000 <= cp <= 0x10FFFF
    )


def _is_plain(text: str, flow: bool) -> bool:
    if not text or text != text.strip() or text[0] in _INDICATORS:
        return False
    if text.lower() in _BOOL_NULL or _NUMBERISH.match(text):
        return False
    if ": " in text or " #" in text or text.endswith(":") or "\t" in text:
        return False
    if flow and (_FLOW_FORBIDDEN & set(text)):
        return False
    return all(_printable(ch) and ch not in "\t" for ch in text)


def quote(text: str) -> str:
    """A YAML double-quoted scalar that loads back to ``text`` exactly."""
    out = []
    for ch in json.dumps(text, ensure_ascii=False)[1:-1]:
        if ch == "\t" or _printable(ch) or ch in "\\\"":
            out.append(ch)
        else:
            cp = ord(ch)
            out.append(f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}")
    return '"' + "".join(out) + '"'


def scalar(value: Any, flow: bool = False) -> str:
    """Emit one scalar value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent if exponent[0] in '+-' else '+' + exponent}"
        return text
    if isinstance(value, datetime):
        if value.tzinfo is None:  # stays naive, so it loads back as the same value
            return format_datetime(value)[:-1]
        return format_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        return value if _is_plain(value, flow) else quote(value)
    raise TypeError(f"cannot emit {type(value).__name__} as a YAML scalar")


def format_datetime(value: datetime) -> str:
    """UTC, second resolution, ``Z`` suffix (naive values are taken as UTC).

    A moment that has no UTC form in the calendar (9999-12-31T23:59-10:00) keeps its own offset.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    try:
        value = value.astimezone(UTC)
    except OverflowError:
        return value.isoformat()
    # Not strftime: "%Y" drops the zero padding of years before 1000.
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + "Z"


def _key(key: Any, in_flow: bool) -> str:
    """A mapping key: ``key`` itself, or ``? key`` when too long for an implicit key."""
    text = scalar(key, in_flow)
    return f"? {text} " if len(text) > MAX_IMPLICIT_KEY else text


def flow(value: Any) -> str:
    """Emit any supported value in flow style (one line)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k, True)}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value, True)


def entry(key: str, value: Any, newline: str = "\n") -> str:
    """Emit ``key: value``; lists too long for one line become block lists."""
    head = f"{scalar(key)}:"
    if len(head) > MAX_IMPLICIT_KEY:
        head = f"? {head[:-1]}{newline}:"
    if isinstance(value, (list, tuple)):
        line = f"{head} {flow(value)}"
        if len(line) <= MAX_FLOW_WIDTH or not value:
            return line
        return head + "".join(f"{newline}  - {flow(v)}" for v in value)
    if isinstance(value, dict):
        return f"{head} {flow(value)}"
    return f"{head} {scalar(value)}"
