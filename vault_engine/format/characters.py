"""The characters a memory may hold: what is refused, what is normalised, and what captured text becomes.

A memory file is UTF-8 text an editor opens; some code points cannot be in it
and still read back as the same memory, or are not text at all:

- NUL and the other C0 control characters (U+0000-U+001F) except tab and line
  feed: a NUL byte makes the file binary to every reader, and the others move
  the cursor or recolour a terminal;
- lone surrogates (U+D800-U+DFFF, which JSON's ``\\ud800`` escape can carry):
  half of a UTF-16 pair, which UTF-8 cannot encode;
- the 66 noncharacters (U+FDD0-U+FDEF and the last two code points of every
  plane, U+FFFE and U+FFFF among them).

Text a caller writes (``add``, ``correct``, the HTTP API, the MCP tools) is
checked with :func:`check`: such a character is refused with the field and its
position, and the caller fixes it.  Records brought in with ``import`` (a chat
export, another tool's data) are kept whole: :func:`escape` writes each such
character as ``⟨U+000B⟩`` (its code point between U+27E8 and U+27E9), a form
that reads back as written and that :func:`unescape` turns back into the
original text exactly.  Text captured from elsewhere (a transcript, a document,
a tool's output) is not the caller's to fix either; :func:`scrub` stores it
readable, one character for one: a control character as its visible picture
(ESC as U+241B ``␛``), the others as U+FFFD ``�``.

Both drop U+FEFF, which is invisible wherever it is: a byte-order mark at the
start of piped text, or a zero-width no-break space mid-text (its job is
U+2060's now).  Line ends are kept as given: CRLF and a lone CR read back as
written (the body is kept byte for byte), and count as line ends in positions.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidInput
from ..patterns import lazy_pattern

_C0_NAMES = (
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR", "SO", "SI",
    "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
)
_PLANE_ENDS = "".join(f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17))
# Everything no memory may hold (tab, LF and CR aside).
_INVALID_SET = "\x00-\x08\x0b-\x0c\x0e-\x1f\ud800-\udfff\ufdd0-\ufdef" + _PLANE_ENDS
INVALID = lazy_pattern(f"[{_INVALID_SET}]")
ESCAPE_OPEN, ESCAPE_CLOSE = "\u27e8", "\u27e9"  # ⟨ ⟩: mathematical angle brackets, seldom in text
# A stored escape: U+ and 4 to 6 upper-case hex digits between the brackets.
ESCAPED = lazy_pattern(ESCAPE_OPEN + r"U\+([0-9A-F]{4,6})" + ESCAPE_CLOSE)
# What escape() rewrites: a character no memory may hold, and a bracket that opens an escape's form.
_TO_ESCAPE = lazy_pattern(f"[{_INVALID_SET}]|{ESCAPE_OPEN}(?=U\\+[0-9A-F]{{4,6}}{ESCAPE_CLOSE})")
_LINE_END = lazy_pattern("\r\n?")
_BOM = "\ufeff"
REPLACEMENT = "\ufffd"


def describe(char: str) -> str:
    """A code point as a person reads it: ``U+0000 (NUL)``, ``U+D800 (a lone surrogate)``."""
    code = ord(char)
    if code < 0x20:
        what = f"{_C0_NAMES[code]}, a control character"
    elif 0xD800 <= code <= 0xDFFF:
        what = "a lone surrogate: half of a UTF-16 pair, not a character"
    else:
        what = "a noncharacter"
    return f"U+{code:04X} ({what})"


def normalise(text: str) -> str:
    """``text`` without U+FEFF."""
    return text.replace(_BOM, "") if _BOM in text else text


def check(text: str, field: str) -> str:
    """``text`` given for ``field``, normalised (see :func:`normalise`).

    Raises:
        InvalidInput: ``text`` holds a character no memory may hold; the message names
            ``field``, the character and where it is (character, line and column, from 1).
    """
    found = INVALID.search(text)
    if found is not None:
        start = found.start()
        before = _LINE_END.sub("\n", text[:start])  # lines as an editor counts them, whatever their ends
        line, column = before.count("\n") + 1, len(before) - before.rfind("\n")
        raise InvalidInput(f"{field}: {describe(found.group())} at character {start + 1} (line {line}, column "
                           f"{column}) cannot be stored in a memory; remove it")
    return normalise(text)


def check_data(value: Any, field: str) -> Any:
    """:func:`check` on every text in ``value`` (mapping keys, list items, at any depth), each named
    by its place (``extra.links[2]``)."""
    if isinstance(value, str):
        return check(value, field)
    if isinstance(value, list):
        return [check_data(item, f"{field}[{number}]") for number, item in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = check(key, f"a key of {field}") if isinstance(key, str) else key
            out[name] = check_data(item, f"{field}.{name}")
        return out
    return value


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else REPLACEMENT


def scrub(text: str) -> str:
    """Captured ``text``, normalised, with each character no memory may hold made visible:
    a control character as its picture (U+2400 + its code: NUL as ``␀``, ESC as ``␛``), a lone
    surrogate or noncharacter as U+FFFD."""
    return INVALID.sub(_shown, normalise(text))


def _escaped(char: str) -> str:
    return f"{ESCAPE_OPEN}U+{ord(char):04X}{ESCAPE_CLOSE}"


def escape(text: str) -> tuple[str, list[str]]:
    """``text`` normalised, each character no memory may hold written as ``⟨U+XXXX⟩`` (its code point, 4 to 6
    upper-case hex digits, between U+27E8 and U+27E9); and the code points escaped (``U+000B``), each once,
    in order of appearance.

    The form cannot be mistaken for text that was there: where the text itself holds one (``⟨U+0041⟩``
    written out), its ``⟨`` is escaped too (``⟨U+27E8⟩U+0041⟩``), so :func:`unescape` gives ``text`` back
    exactly (less U+FEFF, which :func:`normalise` drops).
    """
    text = normalise(text)
    if INVALID.search(text) is None and ESCAPE_OPEN not in text:
        return text, []
    found: dict[str, None] = {}

    def one(match: re.Match[str]) -> str:
        char = match.group()
        found.setdefault(f"U+{ord(char):04X}")
        return _escaped(char)

    return _TO_ESCAPE.sub(one, text), list(found)


def unescape(text: str) -> str:
    """The text :func:`escape` was given, from what it returned: each ``⟨U+XXXX⟩`` the character it stands for."""
    def one(match: re.Match[str]) -> str:
        code = int(match.group(1), 16)
        return chr(code) if code <= 0x10FFFF else match.group()

    return ESCAPED.sub(one, text)


def escape_data(value: Any, field: str, escaped: dict[str, list[str]]) -> Any:
    """:func:`escape` on every text in ``value`` (list items and mapping values, at any depth; a mapping's
    keys are checked, as names are); each place escaped goes into ``escaped`` (``extra.links[2]``: the
    characters), in order.

    Raises:
        InvalidInput: a key holds a character no memory may hold.
    """
    if isinstance(value, str):
        text, chars = escape(value)
        if chars:
            escaped[field] = chars
        return text
    if isinstance(value, list):
        return [escape_data(item, f"{field}[{number}]", escaped) for number, item in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = check(key, f"a key of {field}") if isinstance(key, str) else key
            out[name] = escape_data(item, f"{field}.{name}", escaped)
        return out
    return value
