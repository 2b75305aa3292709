"""Deterministic text helpers: titles, summaries, paragraphs, one-off detection, stopwords, text safe to print."""

from __future__ import annotations

from ..patterns import lazy_pattern

_SENTENCE_END = lazy_pattern(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_ONE_OFF = lazy_pattern(
    r"(?i)\b(not this time|just this once|only this time|this time only|for now only|"
    r"(?:just|only) for (?:now|today|this (?:task|session|run|once))|for (?:today|this (?:task|session|run)) only|"
    r"just today|today only|skip (?:it|this) (?:today|this time))\b"
)
# An instruction for today (or for now) alone: a sentence that opens with the occasion and goes on
# with an order ("Today, use the staging database"), or that gives an order and closes with it
# ("Skip the e2e tests for now").  A statement ("Today's date format is ISO 8601", "For now, the
# API is read-only") or a lasting rule ("Run the linter, starting today") is not one.
_ORDER = (r"(?:(?:please|just)\s+)*(?:use|skip|run|deploy|push|merge|commit|release|ship|build|test|ignore|leave|"
          r"avoid|disable|enable|turn|stop|keep|pause|hold|postpone|cancel|wait|work|answer|reply|write|add|"
          r"remove|delete|drop|set|switch|point|go|do|don['’]t|do\s+not)\b")
_SENTENCE_START = r"(?:^|(?<=[.!?;:])\s+|\n\s*)"
_OCCASION_FIRST = lazy_pattern(
    rf"(?im){_SENTENCE_START}(?P<phrase>(?:for\s+)?today\s*,|for\s+now\s*,)\s*{_ORDER}"
)
_OCCASION_LAST = lazy_pattern(
    rf"(?im){_SENTENCE_START}{_ORDER}[^.!?;\n]*?"
    r"(?<!\bfrom)(?<!\bsince)(?<!\buntil)(?<!\bafter)(?<!\bstarting)(?<!\bbeginning)(?<!\bincluding)(?<!\bas of)"
    r"\s+(?P<phrase>(?:for\s+)?today|for\s+now)\s*(?:[.!?;]|$)"
)


# Function words that match nearly every memory: dropped from full-text queries (not
# from the index) unless nothing else is left, so "a kitten on the rug"
# is not a match for every memory that says "a" or "the".
STOPWORDS = frozenset("""
a about after all also am an and any are as at be been before being but by can could did do does doing done
for from had has have having he her here hers him his how i if in into is it its itself just me my myself no
nor not of off on once only or our ours out over own s same she should so some such t than that the their
theirs them then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours
""".split())
# Words that tell a change, not what changed: "the port is *now* 5499" names nothing "the port is 5499" does not.
UPDATE_MARKERS = frozenset({"now", "nowadays", "currently", "instead", "anymore"})

# A note memvault writes in place of a tool's call or output in a captured session
# ("[tool Bash: npm test]", "[output of Read kept as m-..., 3318 characters]"): not prose.
TOOL_NOTE = lazy_pattern(r"\[(?:tool|output of) [^\]\n]*\]")
PARAGRAPH_BREAK = lazy_pattern(r"\n(?:[ \t]*\r?\n)+")  # a blank line (or several) between paragraphs
HEADING = lazy_pattern(r"^\s{0,3}#{1,6}\s+(.*?)[\s#]*$")  # a markdown ATX heading line; group 1: its text


def paragraphs(text: str) -> list[str]:
    """The paragraphs of ``text`` (blocks between blank lines), stripped, empty ones left out."""
    return [p for p in (piece.strip() for piece in PARAGRAPH_BREAK.split(text)) if p]


_SENTENCE_SPLIT = lazy_pattern(r"(?<=[.!?…])\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")


_LIST_MARK = lazy_pattern(r"\s*(?:[-*+]|\d+[.)])\s*")


def sentence_starts(text: str) -> list[int]:
    """Where each sentence of ``text`` after the first begins: the places :func:`sentences` splits
    at (after a sentence's end and its spaces, at a blank line, at a list item), in order; a list
    item's number ("2.") stays with its item."""
    out: list[int] = []
    for match in _SENTENCE_SPLIT.finditer(text):
        at = match.end()
        if 0 < at < len(text) and not _LIST_MARK.fullmatch(text[out[-1] if out else 0 : match.start()]):
            out.append(at)
    return out


def sentences(text: str, *, min_words: int = 3, limit: int = 16) -> list[str]:
    """The sentences of ``text`` (also split at blank lines and list items), in order, each
    once; a sentence shorter than ``min_words`` words joins the next.  At most ``limit``."""
    out: list[str] = []
    seen: set[str] = set()
    carry = ""
    for piece in _SENTENCE_SPLIT.split(text):
        flat = " ".join(f"{carry} {piece}".split())
        if not flat:
            continue
        if len(flat.split()) < min_words:
            carry = flat
            continue
        carry = ""
        key = flat.casefold()
        if key not in seen:
            seen.add(key)
            out.append(flat)
            if len(out) == limit:
                return out
    if carry and carry.casefold() not in seen:
        if out and len(carry.split()) < min_words:
            out[-1] = f"{out[-1]} {carry}"
        else:
            out.append(carry)
    return out[:limit]


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""


def clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (with an ellipsis)."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0] or flat[: limit - 1]
    return cut.rstrip(" ,;:.-") + "…"


_OPENING = "([{<\"'“‘«"


def whole_fragment(text: str, fragment: str) -> str:
    """``fragment``, a piece of ``text`` cut at its first and last word (a search snippet), with the
    punctuation that closes it and the brackets or quotes that open it: "(RFC 7807" becomes
    "(RFC 7807).".  A mark inside a word ("json-" of "json-based") is not taken."""
    at = text.find(fragment) if fragment else -1
    if at < 0:
        return fragment
    end = at + len(fragment)
    stop = end
    while stop < len(text) and not text[stop].isspace() and not (text[stop].isalnum() or text[stop] == "_"):
        stop += 1
    if stop < len(text) and not text[stop].isspace():
        stop = end  # the marks run into a word: they do not close the fragment
    start = at
    while start > 0 and text[start - 1] in _OPENING:
        start -= 1
    if start > 0 and not text[start - 1].isspace():
        start = at
    return text[start:stop]


def make_title(text: str, limit: int = 80) -> str:
    """A title from the first line (markdown heading marks removed)."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            title = clip(first_sentence(line).rstrip("."), limit)
            if not title:  # the line opens with a full stop (". What are ...") or is nothing else
                rest = line.lstrip(".…!?;:, \t")
                title = clip(first_sentence(rest).rstrip("."), limit) if rest else ""
            return title or clip(line, limit)
    return "Untitled memory"


def make_summary(text: str, limit: int = 240) -> str:
    """An extractive summary: the leading sentences that fit in ``limit`` characters (the first
    one clipped when it alone is longer).

    A short memory is its own best summary: the summary lane embeds what the memory says, not
    a fragment of it (a chat turn's first sentence is often a greeting).
    """
    body = " ".join(line.lstrip("#").strip() for line in text.splitlines())
    flat = " ".join(body.split())
    if len(flat) <= limit:
        return flat
    lead = first_sentence(flat)
    rest = flat[len(lead):]
    out = lead
    while rest.strip():
        following = first_sentence(rest.strip())
        if len(out) + 1 + len(following) > limit:
            break
        out = f"{out} {following}"
        rest = rest.strip()[len(following):]
    return clip(out, limit)


def is_one_off(text: str) -> str | None:
    """The phrase that marks ``text`` as a one-off instruction ("not this time", "just for today",
    "Today, use ...", "... for now"), or None."""
    match = _ONE_OFF.search(text)
    if match:
        return match.group(0)
    for pattern in (_OCCASION_FIRST, _OCCASION_LAST):
        match = pattern.search(text)
        if match:
            return match.group("phrase").rstrip(" ,")
    return None


# What a terminal acts on instead of showing: the C0 controls but tab and line feed (ESC opens colour,
# cursor and window-title sequences, BEL ends them), DEL, the C1 controls (U+009B is a one-character
# ESC [), and a carriage return that does not end a line (it would write over the line's start).
_TERMINAL_CONTROLS = lazy_pattern("\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_JSON_RAW_CONTROLS = lazy_pattern("[\x7f-\x9f]")  # json.dumps escapes C0 itself, never DEL or C1


def link_text(link: str) -> str:
    """What a link names: the note of a wikilink (``[[stem|label]]``, ``[[title#part]]`` give ``stem``
    and ``title``), or the text as written (an id, a stem, a title), without surrounding spaces."""
    text = link.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
    return text


def printable(text: str) -> str:
    """``text`` safe to print to a terminal: each control character but tab and newline as ``\\xNN``
    (an escape sequence in a title shows as ``\\x1b]0;...``, never runs)."""
    return _TERMINAL_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def printable_json(text: str) -> str:
    """JSON text from ``json.dumps(..., ensure_ascii=False)`` with DEL and the C1 controls written as
    ``\\u00NN`` escapes: the same JSON value, with no control character left for a terminal to act on."""
    return _JSON_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
