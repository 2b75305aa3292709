"""A memory file: reading it (decode, split, YAML, schema) and its deterministic rendering.

A memory file is ``---``, a YAML mapping, ``---``, then the body, kept byte
for byte.  Parsing validates every known key (required keys, enums, types)
and keeps unknown keys in their original order.  Rendering writes known keys
in one fixed order followed by the unknown ones; a file whose parsed value did
not change renders to its original text exactly (comments and quoting of
hand-written files included), so the engine never churns a file.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ..errors import EncodingError, FrontmatterError, MemoryFileError, UnreadableWrite
from ..patterns import lazy_pattern
from . import yamlfmt, yamlsubset
from .kinds import AUTHORITIES, CLASSES, ENUMS, LIFECYCLES, OUTCOMES, RECALLS, SCOPES, TIERS, TRUSTS, TYPES
from .schema import from_fields
from .value import ALWAYS_WRITTEN, DATETIME_KEYS, KEY_ORDER, LIST_KEYS, MAX_COUNT, MAX_HEADER_CHARS, Memory, ParsedFile

# Importers read the vocabularies, the value and the schema from here too: this module is the file format's face.
__all__ = [
    "ALWAYS_WRITTEN", "AUTHORITIES", "CLASSES", "DATETIME_KEYS", "ENUMS", "KEY_ORDER", "LIFECYCLES",
    "LIST_KEYS", "MAX_COUNT", "MAX_HEADER_CHARS", "OUTCOMES", "RECALLS", "SCOPES", "TIERS", "TRUSTS", "TYPES",
    "Memory", "ParsedFile", "content_digest", "decode", "from_fields", "load_header", "memory_text",
    "normalize_text", "parse", "read_back", "render", "render_header", "same_memory", "split", "split_detail",
    "text_digest",
]

@lru_cache(maxsize=1)
def _loader() -> Any:
    """PyYAML's safe loader, strict about dates and repeated keys (imported only for a header
    :mod:`.yamlsubset` cannot read: most commands never need it)."""
    import yaml

    try:  # the C loader is ~10x faster; fall back for builds without libyaml
        base: Any = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover
        base = yaml.SafeLoader

    class Loader(base):  # type: ignore[misc]
        """The safe loader, reporting an impossible date (2026-13-01) with its line."""

    def timestamp(loader: Any, node: Any) -> Any:
        try:
            return loader.construct_yaml_timestamp(node)
        except ValueError as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"invalid date {node.value!r} ({exc})", node.start_mark
            ) from None

    def unique_keys(loader: Any, node: Any, deep: bool = False) -> Any:
        """A mapping whose keys are unique (YAML requires it; PyYAML would keep the last silently,
        so ``id`` written twice by a half-resolved merge would pick one copy without a word)."""
        seen: dict[tuple[str, str], int] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key_node.value!r} appears twice (first on line {seen[key] + 2})",
                        key_node.start_mark)
                seen[key] = key_node.start_mark.line
        return base.construct_mapping(loader, node, deep)

    Loader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
    Loader.construct_mapping = unique_keys
    return Loader


_FENCE = lazy_pattern(r"\A---[ \t]*(\r?\n)")
_CLOSE = lazy_pattern(r"^---[ \t]*(?:\r?\n|\Z)", re.M)
# Git's conflict markers, at the start of a line as git writes them.
_CONFLICT = lazy_pattern(r"^(?:<{7}|\|{7}|>{7})(?:[ \t].*)?\r?$|^={7}[ \t]*\r?$", re.M)
_SURROGATE = lazy_pattern("[\ud800-\udfff]")
_HEADING = lazy_pattern(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_CODE_BLOCK = lazy_pattern(r"^[ \t]{0,3}(`{3,}|~{3,}).*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S)


# ---------------------------------------------------------------- parse / render


def decode(data: bytes, path: str | None = None) -> str:
    """Decode file bytes as UTF-8 (a BOM is kept in the text).

    Raises:
        EncodingError: the bytes are not UTF-8, or hold NUL bytes (binary data, or
            UTF-16 text without a byte-order mark, which is valid UTF-8 byte by byte).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise EncodingError("file starts with a UTF-16 (or UTF-32) byte-order mark; save it as UTF-8",
                            path=path, line=1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise EncodingError(f"file is not valid UTF-8 (byte {exc.start})", path=path, line=line) from None
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise EncodingError(f"file holds a NUL byte (byte {data.index(0)}): binary data or UTF-16 text, not UTF-8",
                            path=path, line=line)
    return text


def split(text: str, path: str | None = None) -> tuple[str | None, str, str]:
    """Split text into (header or None, body, newline).  The BOM must be removed first."""
    opening = _FENCE.match(text)
    if not opening:
        if re.match(r"---[ \t]*\r(?!\n)", text):
            # Read as a note, the memory would vanish from the index without a word.
            raise FrontmatterError("frontmatter lines end in a lone CR (classic Mac line endings); "
                                   "save the file with LF or CRLF line endings", path=path, line=1)
        return None, text, "\r\n" if "\r\n" in text[:2000] else "\n"
    newline = opening.group(1)
    start = opening.end()
    if text.startswith("---", start) and _CLOSE.match(text, start):
        close = _CLOSE.match(text, start)
        assert close is not None
        return "", text[close.end():], newline
    close = _CLOSE.search(text, start)
    if close is None:
        raise FrontmatterError("frontmatter opened with '---' is never closed", path=path, line=1)
    header = text[start: close.start()]
    if header.endswith("\n"):
        header = header[:-2] if header.endswith("\r\n") else header[:-1]
    return header, text[close.end():], newline


def _plain_note(text: str, path: str, prose: str | None = None,
                properties: dict[str, Any] | None = None, header: str = "") -> Memory:
    """A note without memvault frontmatter; its title is its ``title`` property, else the first
    heading of ``prose`` (the body), else its file name.

    A note with frontmatter of its own (Obsidian's properties) but no ``id`` is read as those
    properties say, when memvault can read them as a memory's keys: its title, tags and text (the
    body, not the YAML), the other keys kept.  So forgetting or correcting it (which gives it
    memvault's keys) writes one frontmatter holding its own keys too.  When a key memvault knows
    holds what a memory cannot (``type: book``), the note is read as text, frontmatter included,
    and its file keeps it all."""
    heading = _HEADING.search(_CODE_BLOCK.sub("", text if prose is None else prose))
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    title = heading.group(1).strip() if heading else stem
    named = (properties or {}).get("title")
    if isinstance(named, str) and named.strip() and "\n" not in named:
        title = named.strip()
    note_id = "note-" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:20]
    if properties is not None and prose is not None:
        fields = {"type": "note", **properties, "id": note_id, "title": title or stem}
        try:
            return from_fields(fields, prose, path=path, header=header).replace(plain=True)
        except MemoryFileError:
            pass  # read as text below
    return Memory(
        id=note_id,
        title=title or stem,
        type="note",
        body=text,
        trust="learned",
        plain=True,
    )


def load_header(header: str, path: str | None = None) -> dict[str, Any]:
    """Parse a YAML header into a mapping (errors carry the file line)."""
    if len(header) > MAX_HEADER_CHARS:
        raise FrontmatterError(f"frontmatter is larger than {MAX_HEADER_CHARS} characters", path=path, line=1)
    fast = yamlsubset.load(header) if header.strip() else {}
    if fast is not None:
        return fast
    import yaml

    try:
        raw = yaml.load(header, Loader=_loader()) if header.strip() else {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 2 if mark is not None else 1
        problem = exc.problem or exc.context or "invalid YAML"
        raise FrontmatterError(f"invalid YAML in frontmatter: {problem}", path=path, line=line) from None
    except yaml.reader.ReaderError as exc:
        # A control character YAML does not allow raw; the error has no mark, so find the character.
        code = exc.character if isinstance(exc.character, int) else 0xFFFD
        where = header.find(chr(code))
        line = header.count("\n", 0, where) + 2 if where >= 0 else 1
        message = f"invalid YAML in frontmatter: character U+{code:04X} is not allowed"
        raise FrontmatterError(message, path=path, line=line) from None
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as exc:
        raise FrontmatterError(f"invalid YAML in frontmatter: {type(exc).__name__}", path=path, line=1) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise FrontmatterError("frontmatter must be a YAML mapping of keys to values", path=path, line=2)
    return raw


def parse(text: str, path: str = "<memory>") -> ParsedFile:
    """Parse a memory file's text.

    A file without frontmatter, or whose frontmatter has no ``id`` key, is a
    plain note.  Raises :class:`FrontmatterError` or :class:`ValidationError`.
    """
    bom = text.startswith("\ufeff")
    content = text[1:] if bom else text
    header, body, newline = split(content, path)
    if header is not None:
        conflict = _CONFLICT.search(header)
        line = header.count("\n", 0, conflict.start()) + 2 if conflict is not None else 1
    else:  # a note that starts with a marker may have lost its frontmatter in the conflict
        conflict = _CONFLICT.match(content.split("\n", 1)[0]) if content.startswith("<<<<<<<") else None
        line = 1
    if conflict is not None:
        raise FrontmatterError("unresolved git merge conflict (a conflict marker line); resolve it and save",
                               path=path, line=line)
    if header is None:
        return ParsedFile(_plain_note(content, path), text, newline, bom)
    raw = load_header(header, path)
    if "id" not in raw:
        return ParsedFile(_plain_note(content, path, body, raw, header), text, newline, bom)
    return ParsedFile(from_fields(raw, body, path=path, header=header), text, newline, bom)


def render_header(memory: Memory, newline: str = "\n") -> str:
    """The frontmatter lines of ``memory`` (without fences)."""
    return newline.join(yamlfmt.entry(k, v, newline) for k, v in memory.fields().items())


def render(memory: Memory, original: ParsedFile | None = None) -> str:
    """The file text of ``memory``; the original text when nothing changed."""
    if original is not None and original.memory == memory:
        return original.text
    newline = original.newline if original is not None else "\n"
    text = f"---{newline}{render_header(memory, newline)}{newline}---{newline}{memory.body}"
    return ("\ufeff" + text) if original is not None and original.bom else text


def same_memory(a: Memory, b: Memory) -> bool:
    """Whether two values are one memory as a file holds it (a list where a tuple was, a naive
    date-time where one in UTC was, a plain note given frontmatter: the same)."""
    return a == b or (a.body == b.body and a.to_json() == b.to_json())


def read_back(rel: str, memory: Memory) -> Callable[[bytes], None]:
    """The check a write of ``memory`` at ``rel`` makes on the bytes it wrote, before they replace
    the file: they must parse back to ``memory``.  The check raises :class:`UnreadableWrite` when not."""

    def verify(data: bytes) -> None:
        try:
            parsed = parse(decode(data, rel), rel).memory
        except MemoryFileError as exc:
            raise UnreadableWrite(f"not written: the file would not read back ({exc.message})", path=rel) from None
        if not same_memory(parsed, memory):
            meant = memory.to_json()
            differ = sorted(k for k, v in parsed.to_json().items() if meant.get(k) != v)
            raise UnreadableWrite(f"not written: the file would read back with another {', '.join(differ or ['body'])}",
                                  path=rel)

    return verify


# ---------------------------------------------------------------- helpers


def content_digest(data: bytes) -> str:
    """sha256 of a file's bytes: the identity of a file version."""
    return hashlib.sha256(data).hexdigest()


def normalize_text(text: str) -> str:
    """Text as compared for "the same text remembered twice"."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_digest(text: str) -> str:
    """sha256 of the normalised text."""
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


_WORDS = lazy_pattern(r"\w+")


def words_digest(text: str) -> str:
    """sha256 of the normalised text's words alone: the same sentence with other punctuation
    ("... on Mondays." and "... on Mondays") has the same words digest.  What a permanent
    forget blocks from being learned again, and what ``add`` folds into a memory saying the same.
    A text without a word ("🚀") is its own digest: two of them are not one by having no words."""
    normal = normalize_text(text)
    return hashlib.sha256((" ".join(_WORDS.findall(normal)) or normal).encode("utf-8")).hexdigest()


# The detailed summary older releases cached at the end of a body (it now lives in the detail
# cache, vault_engine/index/details.py): "## Detail", a marker naming the digest of the text
# before it, then the summary.  Still read while current; never written.
_DETAIL = lazy_pattern(
    r"(?:\A|(?<=\n))## Detail\n\n<!-- memvault:detail sha256:([0-9a-f]{64}) chars:([0-9]{1,12}) -->\n(.*)\Z", re.S)


def split_detail(body: str) -> tuple[str, str | None, bool]:
    """(the body without the cached detail section, the detail text, whether the detail is current).

    The section's marker names the length and digest of the text before it, so
    that text comes back byte for byte; after an edit the marker no longer fits
    and the detail is stale (the text before the heading, blank lines aside, is
    returned as the body).
    """
    match = _DETAIL.search(body)
    if match is None:
        return body, None, False
    detail, size = match.group(3).strip(), int(match.group(2))
    raw = body[:size]
    fresh = (
        size <= match.start()
        and body[size : match.start()] in ("", "\n", "\n\n")
        and hashlib.sha256(raw.encode("utf-8")).hexdigest() == match.group(1)
    )
    if not fresh:
        raw = body[: match.start()].rstrip("\n") + "\n" if body[: match.start()].strip() else ""
    return raw, detail, fresh


def memory_text(memory: Memory) -> str:
    """The text a memory states: its body (a cached detail section aside), else its summary, else its title."""
    return split_detail(memory.body)[0].strip() or memory.summary or memory.title
