"""Memories people already keep for their agents, read as entries: the parsers of ``memvault import --from``.

Four kinds of file (:data:`KINDS`), each read into :class:`Entry` values, one per
memory, with an anchor that names the entry within its file:

- ``agents-md`` and ``claude-md``: hand-written ``AGENTS.md`` / ``CLAUDE.md``.  Each
  top-level bullet is an entry (its nested bullets and code belong to it), each
  numbered list is one entry (the steps of one procedure), each paragraph is an
  entry; headings only name them.  memvault's own exported block
  (:mod:`~vault_engine.context.export`) is left out: it is the vault's memories.
- ``claude-code-memory``: Claude Code's auto memory, ``~/.claude/projects/<project>/memory/``:
  one memory per topic file (YAML frontmatter ``name``, ``description``,
  ``type`` or ``metadata.type``: user, feedback, project or reference; the body
  is the memory), and ``MEMORY.md``, the index loaded every session: its lines
  that link a topic file are the index, the rest is read as a hand-written file.
- ``codex-memories``: Codex's memories, ``~/.codex/memories/``: ``memory_summary.md``
  (the user profile, general tips) and ``MEMORY.md`` (the handbook of task groups).
  What only routes to other files is left out (``What's in Memory``, ``keywords``,
  ``rollout_summary_files``, a block's YAML header), and so are the raw inputs
  Codex consolidates them from (``raw_memories.md``, ``rollout_summaries/``).

An anchor is the section's slug and the entry's place in it (``testing-2``), or a
topic file's name, so importing the file again finds the same memory.  Every
entry's ``kind`` (rule, preference, fact, procedure, profile) is inferred from its
words and its section (see :func:`infer_kind`); a Claude Code topic file says its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..context.export import BEGIN, unsplice
from ..errors import InvalidInput, VaultError
from ..format.memory import load_header
from ..patterns import lazy_pattern

KINDS = ("claude-code-memory", "codex-memories", "agents-md", "claude-md")
MAX_FILE_BYTES = 4 * 1024 * 1024  # a memory file larger than this is not what --from says

_HEADING = lazy_pattern(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = lazy_pattern(r"^[-*+]\s+(?!\s*$)")
_NUMBERED = lazy_pattern(r"^\d{1,3}[.)]\s+")
_FENCE = lazy_pattern(r"^\s{0,3}(`{3,}|~{3,})")
_RULE_LINE = lazy_pattern(r"^\s{0,3}(?:-{3,}|\*{3,}|_{3,})\s*$")
_COMMENT = lazy_pattern(r"^\s*<!--.*-->\s*$")
_SLUG_CHARS = lazy_pattern(r"[^A-Za-z0-9]")  # what Claude Code writes as '-' in a project folder's name
_INDEX_LINK = lazy_pattern(r"^\s*[-*+]\s+\[[^\]]*\]\((?P<target>[^)#\s]+\.md)\)")

# What an entry's words say it is (see infer_kind).
_PROCEDURE_HEADING = lazy_pattern(r"(?i)\b(how to|set ?up|install|build|release|deploy|workflow|steps|procedure|"
                                r"commands?|running)\b")
_PREFERENCE = lazy_pattern(r"(?i)\b(?:i|we)\s+(?:really\s+)?(?:prefer|like|want|love|hate|dislike|enjoy)\b|"
                         r"\bprefer(?:s|red)?\b|\bpreferences?\b")
_PROFILE_HEADING = lazy_pattern(r"(?i)\b(about me|user profile|profile|who i am|about the user)\b")
_RULE_WORDS = lazy_pattern(r"(?i)\b(must|never|always|should|do not|don't|avoid|required?|only use)\b")
_IMPERATIVE = frozenset(
    "always never don't dont do use avoid prefer run keep make write follow ensure put name add remove check "
    "call commit push test format lint read ask wrap return raise log import export".split())


@dataclass(frozen=True, slots=True)
class Entry:
    """One memory read from a file: its words, what kind of memory it is, and where it is."""

    anchor: str  # names the entry within its file (a section slug and place, or a topic file's name)
    text: str
    kind: str  # rule | preference | fact | procedure | profile
    title: str | None = None
    section: str = ""  # the headings above it, "Testing > Fixtures"
    summary: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """A file read for import: where it is, whose it is (``user_level``), and its entries."""

    path: Path
    entries: tuple[Entry, ...]
    user_level: bool = False  # the person's own (every project), not one project's
    folder: Path | None = None  # the project folder the file speaks for, when it is one project's


@dataclass(slots=True)
class _Block:
    kind: str  # bullet | numbered | paragraph
    lines: list[str]
    headings: tuple[str, ...]
    fence: str | None = None  # an open code fence inside the block
    closed_by_blank: bool = False


def infer_kind(text: str, section: str, *, user_level: bool = False, numbered: bool = False) -> str:
    """What kind of memory ``text`` under ``section`` is: a numbered list or code under a set-up heading is
    a procedure; a profile section's text is about the person; liking and preferring is a preference;
    an order ("Use pytest", "Never push to main") or a must is a rule; anything else is a fact."""
    first = text.strip().split(maxsplit=1)[0].strip("*_`,.:!").casefold() if text.strip() else ""
    if numbered or ("```" in text and _PROCEDURE_HEADING.search(section)):
        return "procedure"
    if _PROFILE_HEADING.search(section):
        return "profile"
    if _PREFERENCE.search(text) or (user_level and _PREFERENCE.search(section)):
        return "preference"
    if first in _IMPERATIVE or _RULE_WORDS.search(text):
        return "rule"
    return "procedure" if _PROCEDURE_HEADING.search(section) and "`" in text else "fact"


def slug(text: str) -> str:
    """A heading as a markdown anchor: lower case, words joined by ``-`` (``Testing & CI`` -> ``testing-ci``)."""
    words = re.findall(r"[\w]+", text.casefold())
    return "-".join(words)[:60] or "section"


# ---------------------------------------------------------------- markdown


def _blocks(lines: list[str]) -> Iterator[_Block]:
    """The bullets, numbered lists and paragraphs of ``lines``, each with the headings above it."""
    headings: list[tuple[int, str]] = []
    current: _Block | None = None
    for line in lines:
        if current is not None and current.fence is not None:  # inside a code block: it belongs to the entry
            current.lines.append(line)
            marker = _FENCE.match(line)
            if marker and marker.group(1)[0] == current.fence[0] and len(marker.group(1)) >= len(current.fence):
                current.fence = None
            continue
        here = tuple(h for _, h in headings)
        heading = _HEADING.match(line)
        if heading:
            if current is not None:
                yield current
            current = None
            level = len(heading.group(1))
            headings = [(lvl, h) for lvl, h in headings if lvl < level] + [(level, heading.group(2).strip())]
            continue
        if not line.strip():
            if current is not None:
                current.closed_by_blank = True
                if current.kind == "paragraph":
                    yield current
                    current = None
            continue
        if _RULE_LINE.match(line) or _COMMENT.match(line):
            continue
        fence = _FENCE.match(line)
        indented = line[:1] in (" ", "\t")
        if current is not None and current.kind != "paragraph" and (indented or fence):
            current.lines.append(line)  # a nested bullet, a continuation, the item's code
        elif _NUMBERED.match(line):
            if current is not None and current.kind == "numbered":
                current.lines.append(line)
            else:
                if current is not None:
                    yield current
                current = _Block("numbered", [line], here)
        elif _BULLET.match(line):
            if current is not None:
                yield current
            current = _Block("bullet", [line], here)
        elif current is not None and not current.closed_by_blank:
            current.lines.append(line)  # a paragraph's next line, or a bullet's lazy continuation
        else:
            if current is not None:
                yield current
            current = _Block("paragraph", [line], here)
        if fence and current is not None:
            current.fence = fence.group(1)
        if current is not None and current.kind == "numbered":
            current.closed_by_blank = False  # a numbered list goes on after a blank line
    if current is not None:
        yield current


def markdown_entries(text: str, *, user_level: bool = False, skip_sections: re.Pattern[str] | None = None,
                     kind_of_section: dict[str, str] | None = None) -> list[Entry]:
    """The entries of a hand-written markdown file (see the module): bullets, numbered lists, paragraphs.

    ``skip_sections``: headings whose text (and sub-sections') is left out.  ``kind_of_section``: a kind
    for the entries under a heading (its slug), instead of inferring one.
    """
    counts: dict[str, int] = {}
    out: list[Entry] = []
    for block in _blocks(text.split("\n")):
        if skip_sections is not None and any(skip_sections.search(h) for h in block.headings):
            continue
        body = "\n".join(block.lines).strip("\n")
        if block.kind == "bullet":
            body = _BULLET.sub("", body, count=1)
        if not body.strip():
            continue
        section = " > ".join(block.headings)
        key = slug(block.headings[-1]) if block.headings else "top"
        counts[key] = counts.get(key, 0) + 1
        given = next((kind_of_section[slug(h)] for h in reversed(block.headings)
                      if kind_of_section and slug(h) in kind_of_section), None)
        kind = given or infer_kind(body, section, user_level=user_level, numbered=block.kind == "numbered")
        title = f"{block.headings[-1]}: {_first_words(body)}" if block.headings else None
        out.append(Entry(f"{key}-{counts[key]}", body, kind, title, section))
    return out


def _first_words(text: str, limit: int = 60) -> str:
    flat = " ".join(re.sub(r"[`*_]", "", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


# ---------------------------------------------------------------- reading files


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path``.

    Raises:
        InvalidInput: missing, unreadable, too large, or not UTF-8 text (``what`` says what it should be).
    """
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InvalidInput(f"file is larger than {MAX_FILE_BYTES} bytes; not {what}", path=str(path))
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInput("no such file or folder", path=str(path)) from None
    except OSError as exc:
        raise InvalidInput(f"cannot read file: {exc.strerror or exc}", path=str(path)) from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"not UTF-8 text (byte {exc.start}); not {what}", path=str(path), line=line) from None
    if "\x00" in text:
        raise InvalidInput(f"binary data; not {what}", path=str(path))
    return text


def _require_markdown(path: Path, what: str) -> None:
    if path.is_dir():
        raise InvalidInput(f"is a folder; name the {what} file", path=str(path))
    if path.suffix.casefold() != ".md":
        raise InvalidInput(f"not a markdown file (.md); not {what}", path=str(path))


def read_rules_file(path: Path, kind: str, home: Path | None) -> MemoryFile:
    """An ``AGENTS.md`` or ``CLAUDE.md`` (``kind`` agents-md or claude-md), without memvault's own block.

    Raises:
        InvalidInput: not a readable markdown file, or a memvault block without its end marker.
    """
    what = "an AGENTS.md" if kind == "agents-md" else "a CLAUDE.md"
    _require_markdown(path, what)
    text = read_text(path, what)
    if text.lstrip().startswith(("{", "[")):
        raise InvalidInput(f"holds JSON, not markdown; not {what}", path=str(path))
    if BEGIN in text or "<!-- memvault:end -->" in text:
        text = unsplice(text, str(path))
    user_level = home is not None and _under(path, [home / ".claude", home / ".codex", home / ".config"])
    entries = markdown_entries(text, user_level=user_level)
    return MemoryFile(path, tuple(entries), user_level, None if user_level else path.parent)


# Claude Code's auto memory: a topic file's type, as memvault's kinds.
_CLAUDE_TYPES = {"user": "profile", "feedback": "rule", "project": "fact", "reference": "fact"}


def read_claude_code_memory(path: Path, home: Path | None) -> list[MemoryFile]:
    """Claude Code's auto memory: the ``memory`` folder, its ``MEMORY.md``, or one topic file in it.

    Raises:
        InvalidInput: not such a folder or file, or a file in it that cannot be read.
    """
    folder = path if path.is_dir() else path.parent
    if not path.exists():
        raise InvalidInput("no such file or folder", path=str(path))
    if path.is_dir() and not (path / "MEMORY.md").is_file() and not any(path.glob("*.md")):
        raise InvalidInput("holds no MEMORY.md nor topic file; not Claude Code's auto memory folder "
                           "(~/.claude/projects/<project>/memory)", path=str(path))
    if not path.is_dir():
        _require_markdown(path, "a Claude Code memory file")
    files = sorted(folder.glob("*.md")) if path.is_dir() else [path]
    project_folder = _claude_project_folder(folder)
    out: list[MemoryFile] = []
    for file in files:
        text = read_text(file, "a Claude Code memory file")
        if file.name == "MEMORY.md":
            kept = "\n".join(line for line in text.split("\n")
                             if not ((m := _INDEX_LINK.match(line)) and (folder / m.group("target")).is_file()))
            entries = markdown_entries(kept)
        else:
            entries = [_topic_entry(file, text)] if text.strip() else []
        out.append(MemoryFile(file, tuple(e for e in entries if e.text.strip()), project_folder is None,
                              project_folder))
    return out


def _topic_entry(file: Path, text: str) -> Entry:
    """A topic file of Claude Code's auto memory: its frontmatter names and types it, its body is the memory."""
    meta: dict[str, Any] = {}
    body = text
    match = re.match(r"^---\s*\n(.*?)\n---\s*(?:\n|$)", text, re.S)
    if match:
        try:
            meta = load_header(match.group(1), str(file))
        except VaultError:
            meta = {}  # a header memvault cannot read: the file is still a memory, typed by its words
        body = text[match.end():]
    nested = meta.get("metadata")
    claimed = meta.get("type") or (nested.get("type") if isinstance(nested, dict) else None)
    description = str(meta["description"]) if isinstance(meta.get("description"), str) else None
    name = str(meta["name"]) if isinstance(meta.get("name"), str) else None
    words = body.strip() or (description or "")
    kind = _CLAUDE_TYPES.get(str(claimed)) if claimed else None
    title = (description or name or file.stem).strip()
    return Entry(file.stem, words, kind or infer_kind(words, title), title[:120], title, description)


def _claude_project_folder(memory: Path) -> Path | None:
    """The folder a Claude Code project memory is for: ``projects/<slug>/memory``, where the slug is the
    folder's path with every character but letters and digits written as ``-``; found again by walking
    the disk from ``/``, matching each folder's name written the same way.  None when the folder is
    gone (or the memory is not a project's)."""
    project = memory.parent
    if memory.name != "memory" or project.parent.name != "projects" or not project.name.startswith("-"):
        return None

    def walk(base: Path, rest: str, depth: int) -> Path | None:
        if not rest:
            return base
        if depth > 64:
            return None
        try:
            children = sorted(c for c in base.iterdir() if c.is_dir())
        except OSError:
            return None
        for child in children:
            written = _SLUG_CHARS.sub("-", child.name)
            if rest == written or rest.startswith(written + "-"):
                found = walk(child, rest[len(written) + 1:], depth + 1)
                if found is not None:
                    return found
        return None

    return walk(Path("/"), project.name[1:], 0)


_CODEX_SKIPPED = lazy_pattern(r"(?i)^(what'?s in memory|keywords|rollout[_ ]summary[_ ]files|rollout summaries)$")
_CODEX_KINDS = {"user-profile": "profile", "general-tips": "rule", "user-preferences": "preference",
                "reusable-knowledge": "fact", "failures-and-how-to-do-differently": "rule"}
_CODEX_FILES = ("memory_summary.md", "MEMORY.md")


def read_codex_memories(path: Path) -> list[MemoryFile]:
    """Codex's memories: the ``memories`` folder, or its ``memory_summary.md`` or ``MEMORY.md``.

    Raises:
        InvalidInput: not such a folder or file, or one that cannot be read.
    """
    if not path.exists():
        raise InvalidInput("no such file or folder", path=str(path))
    if path.is_dir():
        files = [path / name for name in _CODEX_FILES if (path / name).is_file()]
        if not files:
            raise InvalidInput("holds no memory_summary.md nor MEMORY.md; not Codex's memories folder "
                               "(~/.codex/memories)", path=str(path))
    elif path.name in _CODEX_FILES:
        files = [path]
    else:
        raise InvalidInput("not memory_summary.md nor MEMORY.md; not Codex's memories", path=str(path))
    out: list[MemoryFile] = []
    for file in files:
        text = _without_yaml_headers(read_text(file, "Codex's memories"))
        entries = markdown_entries(text, user_level=True, skip_sections=_CODEX_SKIPPED, kind_of_section=_CODEX_KINDS)
        out.append(MemoryFile(file, tuple(entries), True))
    return out


def _without_yaml_headers(text: str) -> str:
    """``text`` without the ``---``-fenced YAML headers of MEMORY.md's blocks (their routing lines)."""
    return re.sub(r"(?ms)^---[ \t]*\n(?:(?!^---).)*?^(?:rollout_summary_files|description|keywords):.*?^---[ \t]*$\n?",
                  "", text)


def _under(path: Path, folders: list[Path]) -> bool:
    resolved = path.expanduser().absolute()
    return any(resolved.is_relative_to(f) for f in folders)


def read_memory_files(kind: str, paths: list[Path], home: Path | None) -> list[MemoryFile]:
    """The files of ``paths`` read as ``kind`` (see :data:`KINDS`); all of them, or an error and none.

    Raises:
        InvalidInput: an unknown kind, no path, or the first path that is not what ``kind`` says.
    """
    if kind not in KINDS:
        raise InvalidInput(f"unknown --from {kind!r}; expected one of {', '.join(KINDS)}")
    if not paths:
        raise InvalidInput(f"name what to import --from {kind}: one or more paths")
    out: list[MemoryFile] = []
    for path in paths:
        if kind == "claude-code-memory":
            out += read_claude_code_memory(path, home)
        elif kind == "codex-memories":
            out += read_codex_memories(path)
        else:
            if not path.exists():
                raise InvalidInput("no such file or folder", path=str(path))
            out.append(read_rules_file(path, kind, home))
    return out
