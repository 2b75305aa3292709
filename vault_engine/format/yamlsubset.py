"""A fast reader for the YAML subset memvault itself writes.

PyYAML builds every value through Python-level constructors, which makes
loading 10,000 headers take seconds.  Headers written by the engine use a
small, regular subset (see :mod:`vault_engine.format.yamlfmt`): one ``key: value``
per line, plain or JSON-style double-quoted scalars, flow lists and flow
mappings, block lists of flow values.  :func:`load` reads exactly that
subset and returns ``None`` for anything else (comments, single quotes,
anchors, multi-line scalars, unusual plain scalars), so the caller falls back
to the full YAML loader and the result is always what YAML would give.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

from ..patterns import lazy_pattern

_KEY = lazy_pattern(r"([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$")
_INT = lazy_pattern(r"-?(?:0|[1-9][0-9]*)$")
_FLOAT = lazy_pattern(r"-?(?:0|[1-9][0-9]*)\.[0-9]+(?:e[-+][0-9]+)?$")
_DATETIME = lazy_pattern(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?Z$")
_DATE = lazy_pattern(r"(\d{4})-(\d\d)-(\d\d)$")
# Characters YAML does not allow raw, or reads as line breaks: any of them means "use YAML".
_UNUSUAL = lazy_pattern("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None}
_SPECIAL = {"y", "n", "yes", "no", "true", "false", "on", "off", "null", "~"}
# YAML (libyaml) refuses an escaped surrogate, paired or not, where JSON would accept it.
_SURROGATE_ESCAPE = lazy_pattern(r"\\u[dD][89a-fA-F]")
# The engine never writes deeper flow values (unknown keys hold at most 32 levels); deeper text goes to YAML.
_MAX_DEPTH = 64


class _NotSubset(Exception):
    pass


def _plain(token: str, flow: bool) -> Any:
    first = token[0]
    if first.isalpha() or first in "_/(":
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if (
            token.lower() in _SPECIAL
            or token[-1] in " :"
            or ": " in token
            or " #" in token
            or "\t" in token
            or (flow and any(c in token for c in ":[]{}?"))
        ):
            raise _NotSubset
        return token
    if _INT.match(token):
        return int(token)
    if _FLOAT.match(token):
        return float(token)
    match = _DATETIME.match(token)
    if match:
        y, mo, d, h, mi, s, frac = match.groups()
        micro = int((frac or "0").ljust(6, "0"))
        return datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micro, tzinfo=UTC)
    match = _DATE.match(token)
    if match:
        return date(int(match[1]), int(match[2]), int(match[3]))
    raise _NotSubset


def _quoted(text: str, start: int) -> tuple[str, int]:
    """Parse a double-quoted scalar at ``start``; returns (value, index after it)."""
    i = start + 1
    while True:
        end = text.find('"', i)
        if end < 0:
            raise _NotSubset
        backslashes = 0
        j = end - 1
        while j > start and text[j] == "\\":
            backslashes += 1
            j -= 1
        if backslashes % 2 == 0:
            break
        i = end + 1
    raw = text[start : end + 1]
    if "\\x" in raw or "\\U" in raw or "\\N" in raw or "\\_" in raw or "\\L" in raw or "\\P" in raw:
        raise _NotSubset
    if "\\u" in raw and _SURROGATE_ESCAPE.search(raw):
        raise _NotSubset
    try:
        value = json.loads(raw)
    except ValueError:
        raise _NotSubset from None
    if not isinstance(value, str):
        raise _NotSubset
    return value, end + 1


def _flow(text: str, i: int, depth: int = 0) -> tuple[Any, int]:
    """Parse one flow value at ``i``; returns (value, index after it)."""
    if depth > _MAX_DEPTH:
        raise _NotSubset
    ch = text[i] if i < len(text) else ""
    if ch == "[":
        items: list[Any] = []
        i += 1
        if text.startswith("]", i):
            return items, i + 1
        while True:
            value, i = _flow(text, i, depth + 1)
            items.append(value)
            if text.startswith(", ", i):
                i += 2
            elif text.startswith("]", i):
                return items, i + 1
            else:
                raise _NotSubset
    if ch == "{":
        mapping: dict[str, Any] = {}
        i += 1
        if text.startswith("}", i):
            return mapping, i + 1
        while True:
            key, i = _flow(text, i, depth + 1)
            if not isinstance(key, str) or not text.startswith(": ", i) or key in mapping:
                raise _NotSubset
            value, i = _flow(text, i + 2, depth + 1)
            mapping[key] = value
            if text.startswith(", ", i):
                i += 2
            elif text.startswith("}", i):
                return mapping, i + 1
            else:
                raise _NotSubset
    if ch == '"':
        return _quoted(text, i)
    end = i
    while end < len(text) and text[end] not in ",]}":
        if text[end] == ":" and text.startswith(": ", end):
            break
        end += 1
    token = text[i:end]
    if not token:
        raise _NotSubset
    return _plain(token, True), end


def _value(text: str) -> Any:
    if text.startswith(("[", "{", '"')):
        value, end = _flow(text, 0)
        if end != len(text):
            raise _NotSubset
        return value
    return _plain(text, False)


def load(header: str) -> dict[str, Any] | None:
    """The mapping in ``header``, or None when it is not in the engine's subset."""
    if _UNUSUAL.search(header) or "\r" in header.replace("\r\n", ""):
        return None
    out: dict[str, Any] = {}
    lines = header.split("\n")
    i = 0
    try:
        while i < len(lines):
            line = lines[i].removesuffix("\r")
            match = _KEY.match(line)
            if match is None:
                return None
            key, rest = match.group(1), match.group(2)
            if key in out or key.lower() in _SPECIAL:
                return None
            if rest is None or rest == "":
                items = []
                while i + 1 < len(lines) and lines[i + 1].startswith("  - "):
                    i += 1
                    items.append(_value(lines[i].removesuffix("\r")[4:]))
                if not items:
                    return None
                out[key] = items
            else:
                out[key] = _value(rest)
            i += 1
    except (_NotSubset, IndexError, ValueError):
        return None
    return out
