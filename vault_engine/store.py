"""The vault on disk: discovery, scanning, path guards, atomic reads and writes.

The store knows where files live and how to move them safely; it knows
nothing about lifecycles or the journal (that is :mod:`vault_engine.vault`).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import subprocess
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import copies, errors, fsio, location
from .config import CONFIG_FILE, environment
from .config import STATE_DIR as STATE_DIR  # where it always was, for the modules that name it here
from .errors import MemoryFileError, MemoryNotFound, PathEscapeError, VaultBusy, VaultError, VaultNotFound
from .format.memory import Memory, ParsedFile, decode, parse, read_back, render
from .format.redact import redact, redact_memory

TRASH_DIR = "trash"
JOURNAL_DIR = "journal"
SKIP_DIRS = frozenset({STATE_DIR, ".obsidian", ".git", JOURNAL_DIR, "node_modules"})
ROOT_FILES = frozenset({"README.md", "INDEX.md"})
INDEX_PAGE = "INDEX.md"  # generated at the root and in each project folder; never a memory
MAX_FILE_BYTES = 16 * 1024 * 1024
DEFAULT_VAULT = Path("~/.memvault/vault")


def template_dir() -> Path:
    """The template vault shipped with memvault."""
    return location.template_dir(environment())


is_vault = location.is_vault


def discover(explicit: Path | None, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path:
    """Find the vault: ``--vault``, else ``MEMVAULT_DIR``, else upward from cwd, else the default
    (:func:`~vault_engine.location.pick`).

    The default vault ``~/.memvault/vault`` is created from the template on first use.
    """
    path, origin = location.pick(explicit, environment(environ), cwd or Path.cwd())
    if not is_vault(path):
        if origin != "default":
            raise VaultNotFound(f"no vault at {path} (from {origin}); create one with: memvault init {path}")
        create_vault(path, git=False)
    return path


def create_vault(path: Path, git: bool = True) -> bool:
    """Copy the template into ``path`` (refuses a non-empty folder that is not a vault).

    Returns False when ``path`` already is a vault.
    """
    if is_vault(path):
        return False
    if path.exists() and not path.is_dir():
        raise VaultError(f"not a folder: {path}")
    source = template_dir()
    # A folder holding only template items (an init cut short) or a fresh git repo is completed, not refused.
    allowed = {item.name for item in source.iterdir()} | {".git"}
    present = {item.name for item in path.iterdir()} if path.exists() else set()
    if present - allowed:
        raise VaultError(f"folder is not empty and holds no vault: {path}")
    path.mkdir(parents=True, exist_ok=True)
    # A unique staging name: two processes creating the default vault never share one.
    staging = path.parent / f".{path.name}.init.{secrets.token_hex(6)}.tmp"
    shutil.copytree(source, staging, ignore=lambda folder, names: {  # and never a link: it may point anywhere
        n for n in names if n in (STATE_DIR, "__pycache__") or os.path.islink(os.path.join(folder, n))})
    for item in sorted(staging.iterdir(), key=lambda p: p.name == CONFIG_FILE):
        if item.name in present:
            continue
        os.replace(item, path / item.name)
    shutil.rmtree(staging, ignore_errors=True)
    # memvault.toml marks the vault: write it last so a crash never leaves a half vault marked done.
    if git and shutil.which("git") and not (path / ".git").exists():
        subprocess.run(["git", "init", "-q", str(path)], check=False, capture_output=True)
    return True


# ---------------------------------------------------------------- paths


def slugify(text: str, limit: int = 60) -> str:
    """A readable, safe file-name stem from any text (a secret in it never reaches the name)."""
    ascii_text = unicodedata.normalize("NFKD", redact(text)).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > limit:
        slug = slug[:limit].rsplit("-", 1)[0] or slug[:limit]
    return slug or "memory"


def project_folder(project: str) -> str:
    """The folder name of a project key: safe, never a path of its own, holding no secret."""
    project = redact(project)
    slug = re.sub(r"[^a-z0-9._-]+", "-", project.lower()).strip("-.")
    slug = re.sub(r"\.{2,}", ".", slug)
    if len(slug) > 80 or not slug:
        import hashlib

        slug = (slug[:60].strip("-.") or "project") + "-" + hashlib.sha256(project.encode()).hexdigest()[:10]
    return slug


def inside(root: Path, relative: str | Path) -> Path:
    """``root / relative``, refusing anything that would leave the vault.

    Raises:
        PathEscapeError: absolute paths, ``..`` parts, or symlinks leading outside.
    """
    rel = Path(relative)
    if rel.is_absolute() or ".." in rel.parts or str(relative).startswith("~"):
        raise PathEscapeError(f"path escapes the vault: {relative}")
    target = root / rel
    real_root = root.resolve()
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
        raise PathEscapeError(f"path cannot be resolved: {relative}") from None
    if not resolved.is_relative_to(real_root):
        raise PathEscapeError(f"path escapes the vault: {relative}")
    return target


# ---------------------------------------------------------------- scanning


@dataclass(frozen=True, slots=True)
class Entry:
    """A memory file found in the vault."""

    path: str  # relative, POSIX separators
    parsed: ParsedFile

    @property
    def memory(self) -> Memory:
        return self.parsed.memory

    @property
    def in_trash(self) -> bool:
        return self.path.startswith(TRASH_DIR + "/")


@dataclass(slots=True)
class Scan:
    """Everything one pass over the vault found."""

    entries: dict[str, Entry] = field(default_factory=dict)  # id -> entry
    problems: list[VaultError] = field(default_factory=list)
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # id -> paths of the ignored copies
    forgotten: dict[str, list[str]] = field(default_factory=dict)  # purged id -> paths of files holding it again

    def active(self) -> Iterator[Entry]:
        return (e for e in self.entries.values() if not e.in_trash)

    def trashed(self) -> Iterator[Entry]:
        return (e for e in self.entries.values() if e.in_trash)

    def tags(self) -> list[str]:
        """The tags of current memories, one spelling per tag (case aside), the most used first."""
        counts: dict[str, int] = {}
        spelling: dict[str, str] = {}
        for entry in self.active():
            if entry.memory.plain or entry.memory.lifecycle == "superseded":
                continue
            for tag in entry.memory.tags:
                key = tag.casefold()
                spelling.setdefault(key, tag)
                counts[key] = counts.get(key, 0) + 1
        return [spelling[k] for k in sorted(counts, key=lambda k: (-counts[k], k))]

    def get(self, memory_id: str) -> Entry:
        entry = self.entries.get(memory_id)
        if entry is None:
            raise MemoryNotFound(f"no memory with id {memory_id!r}")
        return entry


def iter_markdown(root: Path) -> Iterator[tuple[str, Path | None, str | None]]:
    """Yield (relative path, absolute path or None, problem or None) for every memory file."""
    real_root = root.resolve()
    stack: list[tuple[str, str]] = [(str(root), "")]  # (folder, its path relative to the root + "/")
    while stack:
        folder, prefix = stack.pop()
        at_root = not prefix
        try:
            items = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for item in items:
            name = item.name
            if name.startswith("."):
                continue
            rel = prefix + name
            if not _is_utf8(name):  # undecodable bytes: the path could be neither shown, hashed nor stored
                if name.endswith(".md") or item.is_dir():
                    yield _shown(rel), None, "name is not valid UTF-8; not read (rename it)"
                continue
            if item.is_symlink():
                try:
                    target = Path(item.path).resolve()
                except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
                    if name.endswith(".md"):
                        yield rel, None, "symlink cannot be resolved (a loop?); not followed"
                    continue
                if not target.is_relative_to(real_root) and (name.endswith(".md") or item.is_dir()):
                    yield rel, None, "symlink points outside the vault; not followed"
                continue
            if item.is_dir():
                if _descends(name, at_root):
                    stack.append((item.path, rel + "/"))
            elif is_memory_name(name, at_root):
                if item.is_file():
                    yield rel, Path(item.path), None
                else:  # a FIFO or device would block the reader forever
                    yield rel, None, "not a regular file; not read"


def stat_markdown(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(relative path, stat) of every file :func:`iter_markdown` would read, in no set order: the same
    rules (:func:`walk`, :func:`is_memory_name`), without the paths of the files it reports
    (nothing of theirs is ever indexed), at the cost
    of one ``lstat`` per file; asked before every read, so it builds no ``Path`` and sorts nothing."""
    for prefix, items in walk(root):
        for item in items:
            name = item.name
            if not item.is_dir(follow_symlinks=False) and is_memory_name(name, not prefix):
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    yield prefix + name, info


def walk(root: Path, entered: Callable[[str], object] | None = None) -> Iterator[tuple[str, list[os.DirEntry[str]]]]:
    """(prefix, entries) of every folder a walk of the vault enters (``prefix``: its path relative to
    ``root`` plus "/", ``""`` for the root), in no set order; the entries are those not hidden, not
    symlinks and with a UTF-8 name (:func:`_descends` decides which folders are entered).
    ``entered`` is told each folder (relative, ``""`` for the root) before it is listed: a watch
    placed then misses nothing created in it later (:mod:`vault_engine.index.change_feed`)."""
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        if entered is not None:
            entered(prefix[:-1])
        try:
            items = os.scandir(folder)
        except OSError:
            continue
        with items:
            kept = [item for item in items
                    if item.name[0] != "." and not item.is_symlink() and _is_utf8(item.name)]
        for item in kept:
            if item.is_dir(follow_symlinks=False) and _descends(item.name, not prefix):
                stack.append((item.path, prefix + item.name + "/"))
        yield prefix, kept


def _descends(name: str, at_root: bool) -> bool:
    """Whether a walk of the vault enters the folder ``name``: only the vault's own folders are
    skipped, at its root (a project folder may be called "journal")."""
    return not (at_root and name in SKIP_DIRS)


def is_memory_name(name: str, at_root: bool) -> bool:
    """Whether a file called ``name`` is a memory file (not the generated index page, nor one of the
    vault's own files at its root)."""
    return name.endswith(".md") and name != INDEX_PAGE and not (at_root and name in ROOT_FILES)


def _is_utf8(name: str) -> bool:
    """Whether a name read from the file system was valid UTF-8 (os.fsdecode keeps other bytes as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(rel: str) -> str:
    """A path whose name is not valid UTF-8, printable: the odd bytes as ``\\xNN``."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_memory_path(rel: str) -> bool:
    """Whether a relative path names a file :func:`iter_markdown` would yield (by its name alone)."""
    parts = rel.split("/")
    if not rel.endswith(".md") or any(not p or p.startswith(".") or p == ".." for p in parts) or not _is_utf8(rel):
        return False
    if parts[0] in SKIP_DIRS and len(parts) > 1:
        return False
    return parts[-1] != INDEX_PAGE and not (len(parts) == 1 and parts[0] in ROOT_FILES)


def read_bytes(root: Path, rel: str) -> bytes:
    """The bytes of one memory file, never through a symlink (:func:`.fsio.read_no_follow`). Raises
    :class:`MemoryFileError` (a link, too large, unreadable)."""
    path = root / rel
    try:
        if path.lstat().st_size > MAX_FILE_BYTES:
            raise MemoryFileError(f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; skipped", path=rel)
        return fsio.read_no_follow(path, root=root)
    except OSError as exc:
        raise MemoryFileError(f"cannot read file: {fsio.reason(exc)}", path=rel) from None


def entry_from_bytes(rel: str, data: bytes) -> Entry:
    """Parse file bytes read from ``rel``. Raises a :class:`MemoryFileError` subclass."""
    return Entry(rel, parse(decode(data, rel), rel))


def read_entry(root: Path, rel: str) -> Entry:
    """Read and parse one file. Raises a :class:`MemoryFileError` subclass."""
    return entry_from_bytes(rel, read_bytes(root, rel))


ParseCache = dict[str, tuple[tuple[int, int, int, int], "Entry | MemoryFileError"]]


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


Recorded = Callable[[Sequence[str]], Mapping[str, copies.Known]]  # ids -> what memvault recorded of each


def scan(root: Path, cache: ParseCache | None = None, recorded: Recorded | None = None,
         purged: Mapping[str, str] | None = None) -> Scan:
    """Parse every memory file; bad files become problems, duplicate ids resolve deterministically.

    A file holding a permanently forgotten id (``purged``: id -> purge event) is no memory: it is
    reported (see :func:`forgotten_problem`) and left out, so nothing reads, governs or indexes it.

    Of several files with one id the copy the indexes hold keeps it (``recorded`` says which, and what
    the journal recorded; see :mod:`vault_engine.copies` for the whole rule).  With ``cache`` (kept by a
    long-lived process between scans) a file whose size, mtime, ctime and inode are unchanged is not
    read again: its earlier parse (or problem) is reused.
    """
    result = Scan()
    seen: ParseCache = {}
    found: dict[str, list[Entry]] = {}
    for rel, path, problem in iter_markdown(root):
        if problem is not None or path is None:
            result.problems.append(MemoryFileError(problem or "unreadable", path=rel))
            continue
        stamp = _stamp(path) if cache is not None else None
        known = cache.get(rel) if cache is not None and stamp is not None else None
        parsed: Entry | MemoryFileError
        if known is not None and known[0] == stamp:
            parsed = known[1]
        else:
            try:
                parsed = read_entry(root, rel)
            except MemoryFileError as exc:
                parsed = exc
        if stamp is not None:
            seen[rel] = (stamp, parsed)
        if isinstance(parsed, MemoryFileError):
            result.problems.append(parsed)
        elif purged and parsed.memory.id in purged:
            result.forgotten.setdefault(parsed.memory.id, []).append(rel)
            result.problems.append(forgotten_problem(parsed.memory.id, purged[parsed.memory.id], rel))
        else:
            found.setdefault(parsed.memory.id, []).append(parsed)
    clashing = [memory_id for memory_id, held in found.items() if len(held) > 1]
    records = recorded(clashing) if recorded is not None and clashing else {}
    for memory_id, held in found.items():
        keep = copies.keeper(memory_id, held, records.get(memory_id)) if len(held) > 1 else held[0]
        result.entries[memory_id] = keep
        if len(held) > 1:  # reported once all copies are seen, each naming the copy in use
            result.duplicates[memory_id] = [e.path for e in held if e is not keep]
            result.problems += [copies.duplicate_problem(memory_id, keep.path, e.path,
                                                         copies.same_memory(e.memory, keep.memory))
                                for e in held if e is not keep]
    if cache is not None:
        cache.clear()
        cache.update(seen)
    return result


def forgotten_problem(memory_id: str, event_id: str, rel: str) -> errors.ForgottenFile:
    """What ``status``, ``sync`` and ``audit`` say of a file that holds a permanently forgotten memory."""
    return errors.ForgottenFile(f"holds {memory_id}, permanently forgotten ({event_id}); not indexed: delete the file, "
                         f"or run memvault forget {memory_id} --permanent to delete it", path=rel)


# ---------------------------------------------------------------- writing


def folder_for(memory: Memory) -> str:
    """Where the engine files a memory (relative folder)."""
    if memory.type == "core-profile":
        return "profile"
    base = "episodes" if memory.type in ("episode", "document") else "memories"
    if memory.scope == "project" and memory.project:
        return f"{base}/projects/{project_folder(memory.project)}"
    return f"{base}/global"


ID_SUFFIX = copies.ID_SUFFIX  # characters of the id's random end a new file name carries


def choose_path(root: Path, folder: str, memory: Memory, taken: set[str] | None = None) -> str:
    """A free, readable file path for ``memory`` inside ``folder``: its title's slug and the last
    :data:`ID_SUFFIX` characters of its id (``deploy-notes-5gbmp3.md``).

    The id's end makes two memories of one title, written on two machines that share the vault
    through git, two files, never one path both sides add (which git cannot merge).  A file keeps
    its name for life: existing files are never renamed to this pattern.
    """
    stem = slugify(memory.title)
    candidates = [f"{stem}-{memory.id[-ID_SUFFIX:]}", f"{stem}-{memory.id.replace('.', '-')}"]
    for candidate in candidates:
        rel = f"{folder}/{candidate}.md"
        if (taken is None or rel not in taken) and not (root / rel).exists():
            inside(root, rel)
            return rel
    raise VaultError(f"no free file name for {memory.id} in {folder}")


def ensure_unchanged(root: Path, rel: str, original: ParsedFile) -> None:
    """Refuse to go on when the file at ``rel`` no longer holds the text ``original`` was read from.

    A writer reads, decides, then writes; meanwhile a person's editor, ``git pull`` or a rename
    may have changed the file, and replacing it would silently drop that change (or, for a
    renamed file, bring back a second copy of the memory).  An ``original`` made in memory
    (no text) is not checked.

    Raises:
        VaultBusy: the file changed, moved or vanished since it was read; a retry reads it again.
    """
    if not original.text:
        return
    try:
        current: bytes | None = fsio.read_no_follow(root / rel)
    except OSError:
        current = None
    if current != original.text.encode("utf-8"):
        what = "moved or deleted" if current is None else "changed"
        raise VaultBusy(f"{what} by another program while memvault was updating it; left as it is; try again",
                        path=rel)


def write(root: Path, rel: str, memory: Memory, original: ParsedFile | None = None) -> bool:
    """Write ``memory`` to ``rel`` atomically; returns False when the text is unchanged.

    With ``original`` (the file as read) a file changed or moved since is never overwritten
    (see :func:`ensure_unchanged`).  The bytes written are read back before they replace the file:
    text that would not parse back to ``memory`` is never written (:func:`~.format.memory.read_back`).
    Every text field is redacted first: no secret reaches a memory file.
    """
    memory = redact_memory(memory)
    target = inside(root, rel)
    text = render(memory, original)
    if original is not None and text == original.text and target.exists():
        return False
    if original is not None and original.text:  # checked at the rename itself, and again right after it
        fsio.replace_unchanged(target, text, original.text.encode("utf-8"), verify=read_back(rel, memory), shown=rel)
    else:
        fsio.write_atomic(target, text, verify=read_back(rel, memory))
    return True


def write_many(root: Path, files: Sequence[tuple[str, Memory, ParsedFile | None]]) -> None:
    """Write new or checked-out files, each atomically and read back (as :func:`write`), with one flush
    for all; when one would not read back, none is written."""
    files = [(rel, redact_memory(memory), original) for rel, memory, original in files]
    fsio.write_many_atomic([(inside(root, rel), render(memory, original)) for rel, memory, original in files],
                           verify=[read_back(rel, memory) for rel, memory, _ in files])


def move(root: Path, source: str, dest: str, memory: Memory, original: ParsedFile | None) -> None:
    """Write ``memory`` to ``dest`` first, then remove ``source``: never in neither place."""
    write(root, dest, memory, original if source == dest else None)
    if source != dest:
        fsio.remove(inside(root, source))
