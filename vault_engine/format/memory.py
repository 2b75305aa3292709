"""The memory value: frontmatter schema, parsing and deterministic rendering.

A memory file is ``---``, a YAML mapping, ``---``, then the body, kept byte
for byte.  Parsing validates every known key (required keys, enums, types)
and keeps unknown keys in their original order.  Rendering writes known keys
in one fixed order followed by the unknown ones; a file whose parsed value did
not change renders to its original text exactly (comments and quoting of
hand-written files included), so the engine never churns a file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, cast

import yaml

from ..errors import EncodingError, FrontmatterError, ValidationError
from . import yamlfmt, yamlsubset
from .ids import is_valid_id

try:  # the C loader is ~10x faster; fall back for builds without libyaml
    _Base: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Base = yaml.SafeLoader


class _Loader(_Base):  # type: ignore[misc]
    """The safe loader, reporting an impossible date (2026-13-01) with its line."""


def _timestamp(loader: Any, node: Any) -> Any:
    try:
        return loader.construct_yaml_timestamp(node)
    except ValueError as exc:
        raise yaml.constructor.ConstructorError(
            None, None, f"invalid date {node.value!r} ({exc})", node.start_mark
        ) from None


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)


def _unique_keys(loader: Any, node: Any, deep: bool = False) -> Any:
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
    return _Base.construct_mapping(loader, node, deep)


_Loader.construct_mapping = _unique_keys

TYPES = ("core-profile", "collaboration-policy", "fact", "procedure", "episode", "document", "note")
CLASSES = ("user-fact", "user-preference", "collaboration-habit", "project-convention")
SCOPES = ("global", "project")
AUTHORITIES = ("explicit", "inferred")
TRUSTS = ("system", "learned", "external")
LIFECYCLES = ("trial", "proven", "superseded")
RECALLS = ("passive", "active", "both")
TIERS = ("hot", "cold")
OUTCOMES = ("used-successfully", "ignored", "overridden", "corrected", "contributed-to-failure")

ENUMS: dict[str, tuple[str, ...]] = {
    "type": TYPES,
    "class": CLASSES,
    "scope": SCOPES,
    "authority": AUTHORITIES,
    "trust": TRUSTS,
    "lifecycle": LIFECYCLES,
    "recall": RECALLS,
    "tier": TIERS,
}

# The one order in which the engine writes keys.
KEY_ORDER = (
    "id", "title", "type", "class", "scope", "project",
    "paths", "tasks", "operations", "phases",
    "authority", "trust", "lifecycle", "recall", "tier", "importance",
    "summary", "trigger", "tags", "links", "supersedes", "superseded_by",
    "source", "evidence", "proof_count", "applied", "last_applied", "occurred_at",
    "created", "updated", "trashed_at", "expires_at", "trashed_from",
)
# Written even when they hold their default, so a file shows its state at a glance.
ALWAYS_WRITTEN = frozenset({
    "id", "title", "type", "scope", "authority", "trust", "lifecycle", "recall", "tier",
    "importance", "summary", "trigger", "tags",
})
LIST_KEYS = ("paths", "tasks", "operations", "phases", "tags", "links")
DATETIME_KEYS = ("last_applied", "created", "updated", "trashed_at", "expires_at")
MAX_HEADER_CHARS = 256 * 1024

_FENCE = re.compile(r"\A---[ \t]*(\r?\n)")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.M)
# Git's conflict markers, at the start of a line as git writes them.
_CONFLICT = re.compile(r"^(?:<{7}|\|{7}|>{7})(?:[ \t].*)?\r?$|^={7}[ \t]*\r?$", re.M)
_SURROGATE = re.compile("[\ud800-\udfff]")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_CODE_BLOCK = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,}).*?(?:^[ \t]{0,3}\1[ \t]*$|\Z)", re.M | re.S)
# Unknown keys are kept and written back; their values must be plain data of sane size.
_MAX_EXTRA_DEPTH = 32
_MAX_EXTRA_NODES = 10_000
# Counts beyond this are not counts: the indexes (SQLite) and JSON readers (the plugin) keep up to here exactly.
MAX_COUNT = 2**53 - 1


def _empty_applied() -> dict[str, int]:
    return {k: 0 for k in OUTCOMES}


@dataclass(frozen=True, slots=True, eq=True)
class Memory:
    """One memory: its frontmatter fields and its body."""

    id: str
    title: str
    type: str
    body: str = ""
    klass: str | None = None
    scope: str = "global"
    project: str | None = None
    paths: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    authority: str = "inferred"
    trust: str = "learned"
    lifecycle: str = "trial"
    recall: str = "active"
    tier: str = "cold"
    importance: float = 0.5
    summary: str = ""
    trigger: str = ""
    tags: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    supersedes: str | None = None
    superseded_by: str | None = None
    source: str = "user"
    evidence: tuple[dict[str, Any], ...] = ()
    proof_count: int = 1
    applied: dict[str, int] = field(default_factory=_empty_applied)
    last_applied: datetime | None = None
    occurred_at: date | datetime | None = None
    created: datetime | None = None
    updated: datetime | None = None
    trashed_at: datetime | None = None
    expires_at: datetime | None = None
    trashed_from: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    plain: bool = False  # a markdown file without memvault frontmatter

    def __hash__(self) -> int:
        return hash(self.id)

    def replace(self, **changes: Any) -> Memory:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    @property
    def is_trashed(self) -> bool:
        return self.trashed_at is not None

    def fields(self) -> dict[str, Any]:
        """Frontmatter keys in write order (defaults omitted unless always written)."""
        defaults = _DEFAULTS
        out: dict[str, Any] = {}
        for key in KEY_ORDER:
            value = getattr(self, "klass" if key == "class" else key)
            if key == "project" and self.scope == "project":
                out[key] = value
                continue
            if isinstance(value, tuple):
                value = list(value)
            if key == "applied":  # outcome order, so equal counts always give equal bytes
                value = {**{k: value[k] for k in OUTCOMES if k in value}, **value}
            if key not in ALWAYS_WRITTEN and (value is None or value == defaults.get(key)):
                continue
            out[key] = value
        out.update(self.extra)
        return out

    def to_json(self) -> dict[str, Any]:
        """Every known field (defaults included) as JSON-ready values, plus unknown keys."""
        out: dict[str, Any] = {}
        for key in KEY_ORDER:
            out[key] = _jsonable(getattr(self, "klass" if key == "class" else key))
        out["extra"] = _jsonable(self.extra)
        return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return yamlfmt.format_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


_DEFAULTS: dict[str, Any] = {
    ("class" if f.name == "klass" else f.name): (
        f.default if f.default is not dataclasses.MISSING else cast(Callable[[], Any], f.default_factory)()
    )
    for f in dataclasses.fields(Memory)
    if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
}
_DEFAULTS = {k: (list(v) if isinstance(v, tuple) else v) for k, v in _DEFAULTS.items()}


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """A memory together with the exact text it was parsed from."""

    memory: Memory
    text: str
    newline: str = "\n"
    bom: bool = False


# ---------------------------------------------------------------- validation


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
        counts = _empty_applied()
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
        type=check.enum("type", None) or check.text("type", required=True),
        body=body,
        klass=check.enum("class", None),
        scope=scope or "global",
        project=project,
        paths=check.text_list("paths"),
        tasks=check.text_list("tasks"),
        operations=check.text_list("operations"),
        phases=check.text_list("phases"),
        authority=check.enum("authority", "inferred") or "inferred",
        trust=check.enum("trust", "learned") or "learned",
        lifecycle=check.enum("lifecycle", "trial") or "trial",
        recall=check.enum("recall", "active") or "active",
        tier=check.enum("tier", "cold") or "cold",
        importance=check.number("importance", 0.5, 0.0, 1.0),
        summary=check.text("summary", default=""),
        trigger=check.text("trigger", default=""),
        tags=check.text_list("tags"),
        links=check.text_list("links"),
        supersedes=check.text("supersedes"),
        superseded_by=check.text("superseded_by"),
        source=check.text("source", default="user"),
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


def _plain_note(text: str, path: str, prose: str | None = None) -> Memory:
    """A note without memvault frontmatter; its title is the first heading of ``prose`` (the body)."""
    heading = _HEADING.search(_CODE_BLOCK.sub("", text if prose is None else prose))
    stem = path.rsplit("/", 1)[-1]
    stem = stem[:-3] if stem.lower().endswith(".md") else stem
    title = heading.group(1).strip() if heading else stem
    return Memory(
        id="note-" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:20],
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
    try:
        raw = yaml.load(header, Loader=_Loader) if header.strip() else {}
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
        return ParsedFile(_plain_note(content, path, body), text, newline, bom)
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


# The detailed summary the engine caches at the end of a body (see vault_engine/detail.py):
# "## Detail", a marker naming the digest of the text before it, then the summary.
DETAIL_HEADING = "## Detail"
_DETAIL = re.compile(
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


def with_detail(raw: str, detail: str) -> str:
    """``raw``, byte for byte, followed by a detail section for it."""
    separator = "" if not raw else ("\n" if raw.endswith("\n") else "\n\n")
    digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    marker = f"<!-- memvault:detail sha256:{digest} chars:{len(raw)} -->"
    return f"{raw}{separator}{DETAIL_HEADING}\n\n{marker}\n{detail.strip()}\n"


def memory_text(memory: Memory) -> str:
    """The text a memory states: its body (a cached detail section aside), else its summary, else its title."""
    return split_detail(memory.body)[0].strip() or memory.summary or memory.title
