"""Crash harness: SIGKILL ``memvault`` at random points of import, sync, maintain and correct, then check recovery.

A base vault is built once (planted near-duplicates and contradictions from
``stress/synthetic.py``, so ``maintain`` has real work; indexes built with
the real model).  Kills run in chains: each chain works on a fresh copy of
the base and keeps it through several kills, so the debris of one crash
meets the next command.  Every kill:

1. prepares the operation's input: a JSONL file of new records for
   ``import`` (a third without an id), a few files edited or renamed by hand
   before ``sync`` / ``sync --full``, nothing for ``maintain``, a random
   current memory and a new text for ``correct``.  ``import`` and ``correct``
   run with or without the automatic index update (``MEMVAULT_VAULT_AUTO_SYNC``).
2. starts ``python -m vault_engine --vault V <op>`` and kills it with SIGKILL:
   - *timed*: after a delay drawn over the operation's un-killed duration
     (measured once per operation and variant), one in six very early
     (while the interpreter starts);
   - *at a write*: the process kills itself right before its N-th file-system
     change (``os.write``, ``fsync``, ``replace``, ``unlink``, ``sync`` ...), N
     drawn over the count of an un-killed run, so the narrow windows between a
     temp file, its rename, a second file and the journal line are hit as often
     as the long model and index phases;
   - *torn write*: the process kills itself in its N-th journal append (any
     write for ``sync``, which appends nothing), after putting down half the
     bytes (what a power cut can leave; SIGKILL alone cannot tear a write to a
     regular file).
   Where the self-inflicted kills landed is counted by kind (a memory's temp
   file, its rename, the journal append, the index pages, ...).
3. checks, before anything else runs: every memory file parses and is whole
   (the body of an imported or corrected memory is exactly its input), no temp
   file is read as a memory, every journal line reads except at most the last
   one of a file (unterminated), and the journal replays.
4. recovers as a person would, in-process (same code as the CLI, the model
   stays loaded): ``maintain``'s repair step alone, then ``sync``; then checks
   no id is in two files, no temp file is left, and the indexes agree with the
   files (catalog, full text, vectors, ``INDEX.md`` pages, the stat cache).
5. retries the killed operation as its caller would (the import again, the
   same correction again, a full ``maintain``), syncs, and checks: every
   memory that existed before is still there (by id, in the vault or the trash,
   unless a journal event purged it); for import every input text is there
   exactly once; for correct exactly one current new version, the old one
   superseded by it and the correction journalled; for maintain every merged
   memory in the trash pointing at one that exists, and a second plan empty;
   no new text duplicates; the journal and the files agree (replay).

``run()`` returns the figures (``python -m stress`` prints them in its
table); ``main()`` prints a small table and exits 1 when any check failed.

    .venv/bin/python -m stress.crash                      # 200 kills
    .venv/bin/python -m stress.crash --seed 3 --kills 40 --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stress.synthetic import Generator, plant
from vault_engine import store
from vault_engine.errors import VaultError
from vault_engine.format.memory import content_digest, memory_text, text_digest
from vault_engine.history import replay
from vault_engine.index.embedder import Embedder
from vault_engine.journal import Journal
from vault_engine.vault import Vault

OPERATIONS = ("import", "sync", "maintain", "correct")
MODES = ("timed", "write", "torn")
CHAIN = 8  # kills per copy of the base vault
TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.[0-9a-f]{12}\.tmp$")  # fsio.temp_path_for
CATEGORIES = ("torn", "journal", "lost", "duplicated", "index", "temp", "replay", "retry", "error")

# Run as ``python -c BOOT --vault V <op> ...``: the memvault CLI, with the file-system calls that change
# something counted; MEMVAULT_CRASH_AT=N kills the process (SIGKILL) right before the N-th one
# (MEMVAULT_CRASH_JOURNAL_AT=N: before the N-th write to a journal file), and with MEMVAULT_CRASH_TORN=1 that
# call, an os.write, first writes half its bytes; MEMVAULT_CRASH_WHERE names a file that receives the call and
# its path.  MEMVAULT_CRASH_COUNT names a file that receives, when the process exits on its own, the count,
# the seconds from the start to the first such call and the count of journal writes.
BOOT = r"""
import os, shutil, signal, sys, time
_begun = time.monotonic()
_first = [None]
_at = int(os.environ.get("MEMVAULT_CRASH_AT") or 0)
_journal_at = int(os.environ.get("MEMVAULT_CRASH_JOURNAL_AT") or 0)
_torn = os.environ.get("MEMVAULT_CRASH_TORN") == "1"
_count = os.environ.get("MEMVAULT_CRASH_COUNT")
_where = os.environ.get("MEMVAULT_CRASH_WHERE")
_n = [0]
_journal = [0]
def _target(name, args):
    try:
        if name in ("write", "fsync", "ftruncate"):
            return os.readlink(f"/proc/self/fd/{args[0]}")
        return str(args[-1] if name in ("replace", "rename") else args[0]) if args else ""
    except OSError:
        return "?"
def _hook(name):
    real = getattr(os, name)
    def call(*args, **kwargs):
        _n[0] += 1
        if _first[0] is None:
            _first[0] = time.monotonic() - _begun
        hit = _n[0] == _at
        if name == "write" and (_journal_at or _count):
            path = _target(name, args)
            if "/journal/" in path and path.endswith(".jsonl"):
                _journal[0] += 1
                hit = hit or _journal[0] == _journal_at
        if hit:
            if _where:
                with open(_where, "w") as out:
                    out.write(name + " " + _target(name, args))
            if name == "write" and _torn and len(args[1]) > 1:
                real(args[0], bytes(args[1])[: len(args[1]) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    setattr(os, name, call)
for _name in ("write", "fsync", "replace", "rename", "unlink", "remove", "rmdir", "sync", "ftruncate"):
    _hook(_name)
if _count:
    import atexit
    atexit.register(lambda: open(_count, "w").write(f"{_n[0]} {_first[0] or 0.0} {_journal[0]}"))
sys.argv = ["memvault", *sys.argv[1:]]
from vault_engine.cli import main
main()
"""


# ---------------------------------------------------------------- figures


@dataclass(slots=True)
class Figures:
    seed: int
    kills: int = 0
    by_operation: Counter[str] = field(default_factory=Counter)
    by_mode: Counter[str] = field(default_factory=Counter)
    early: int = 0
    mid_operation: int = 0
    after_finished: int = 0
    recoveries: int = 0
    temp_after_kill: int = 0
    torn_journal_lines: int = 0
    points: Counter[str] = field(default_factory=Counter)
    phases: dict[str, float] = field(default_factory=dict)  # seconds spent per phase
    failures: list[tuple[str, str]] = field(default_factory=list)

    def fail(self, category: str, message: str) -> None:
        assert category in CATEGORIES, category
        self.failures.append((category, message))

    def count(self, category: str) -> int:
        return sum(1 for c, _ in self.failures if c == category)

    def to_json(self, seconds: float) -> dict[str, Any]:
        torn, journal, lost = self.count("torn"), self.count("journal"), self.count("lost")
        duplicated, index = self.count("duplicated"), self.count("index")
        ops = ", ".join(f"{op} {self.by_operation[op]}" for op in OPERATIONS)
        return {
            "seed": self.seed,
            "kills": self.kills,
            "by_operation": {op: self.by_operation[op] for op in OPERATIONS},
            "by_mode": {mode: self.by_mode[mode] for mode in MODES},
            "early_kills": self.early,
            "mid_operation": self.mid_operation,
            "after_finished": self.after_finished,
            "recoveries": self.recoveries,
            "kill_points": dict(self.points.most_common()),
            "phase_seconds": {k: round(v, 1) for k, v in self.phases.items()},
            "temp_files_after_kill": self.temp_after_kill,
            "torn_journal_lines": self.torn_journal_lines,
            "torn": torn,
            "journal_errors": journal,
            "lost": lost,
            "duplicated": duplicated,
            "index_errors": index,
            "temp_left": self.count("temp"),
            "replay_errors": self.count("replay"),
            "retry_errors": self.count("retry"),
            "errors": self.count("error"),
            "failures": len(self.failures),
            "problems": [f"{c}: {m}" for c, m in self.failures[:50]],
            "seconds": round(seconds, 1),
            "summary": (f"{ops}; {self.mid_operation} mid-operation, {self.after_finished} after it finished; "
                        f"{self.recoveries} recoveries checked, {len(self.failures)} failures"),
        }


# ---------------------------------------------------------------- checks


def temp_files(root: Path) -> list[str]:
    """Every leftover temp file of an atomic write anywhere in the vault (git's own folder aside)."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (folder == str(root) and d == ".git")]
        for name in files:
            if TEMP_NAME.match(name):
                out.append(Path(folder, name).relative_to(root).as_posix())
    return sorted(out)


@dataclass(slots=True)
class Snapshot:
    """What a vault holds at one moment, as the checks compare it."""

    ids: set[str]
    current: dict[str, str]  # id -> text digest of each active, not superseded memory
    paths: dict[str, str]  # id -> path


def snapshot(root: Path) -> Snapshot:
    scan = store.scan(root)
    ids = set(scan.entries) | set(scan.duplicates)
    current = {i: text_digest(memory_text(e.memory)) for i, e in scan.entries.items()
               if not e.in_trash and e.memory.lifecycle != "superseded" and not e.memory.plain}
    return Snapshot(ids, current, {i: e.path for i, e in scan.entries.items()})


def check_files(root: Path, figures: Figures, where: str, expected_bodies: dict[str, str]) -> None:
    """Every memory file parses and is whole; no temp file is read as a memory."""
    scan = store.scan(root)
    for problem in scan.problems:
        if "duplicate id" in str(problem):
            continue  # an interrupted move: the repair step's work, checked after it
        figures.fail("torn", f"{where}: {problem.one_line()}")
    entries = list(scan.entries.values())
    for paths in scan.duplicates.values():
        for rel in paths:
            with contextlib.suppress(VaultError):
                entries.append(store.read_entry(root, rel))
    for entry in entries:
        if TEMP_NAME.match(entry.path.rsplit("/", 1)[-1]):
            figures.fail("temp", f"{where}: temp file {entry.path} read as memory {entry.memory.id}")
        data = (root / entry.path).read_bytes()
        if not data.endswith(b"\n"):
            figures.fail("torn", f"{where}: {entry.path} does not end with a newline")
        body = expected_bodies.get(entry.memory.id)
        if body is not None and entry.memory.body.strip() != body.strip():
            figures.fail("torn", f"{where}: {entry.path} holds another body than was written")


def check_journal(root: Path, figures: Figures, where: str, closed: set[bytes]) -> None:
    """Every line reads except the unterminated last one of a file (a torn append) or one such line closed
    by a later append (``closed`` collects them); no event id twice; the events replay."""
    seen: set[str] = set()
    journal = Journal(root / store.JOURNAL_DIR)
    for path in journal.files():
        data = path.read_bytes()
        lines = data.split(b"\n")
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
                event_id = record["id"]
                assert isinstance(event_id, str) and isinstance(record["kind"], str)
            except (ValueError, KeyError, TypeError, AssertionError):
                if number == len(lines):  # no "\n" after it: a crash mid-append
                    if raw not in closed:
                        figures.torn_journal_lines += 1
                    closed.add(raw)
                elif raw not in closed:
                    figures.fail("journal", f"{where}: {path.name}:{number} unreadable inside the file")
                continue
            if event_id in seen:
                figures.fail("journal", f"{where}: event {event_id} written twice")
            seen.add(event_id)
    try:
        replay(journal.events())
    except Exception as exc:
        figures.fail("journal", f"{where}: replay failed: {type(exc).__name__}: {exc}")


def check_indexes(vault: Vault, figures: Figures, where: str) -> None:
    """The catalog, full text, vectors, pages and stat cache agree with the files (after a sync)."""
    from vault_engine.index.catalog import Catalog
    from vault_engine.index.derived import embedding_texts, text_fingerprint
    from vault_engine.index.disk import STAT_CACHE
    from vault_engine.index.fulltext import FullTextIndex
    from vault_engine.index.pages import render_pages
    from vault_engine.index.vectors import VectorStore

    root = vault.root
    state = root / store.STATE_DIR
    scan = store.scan(root)
    files = {i: (e.path, content_digest((root / e.path).read_bytes())) for i, e in scan.entries.items()}
    catalog = Catalog(state / "catalog.sqlite")
    try:
        records = catalog.records()
        listing = catalog.listing()
    finally:
        catalog.close()
    if records != files:
        missing, extra = sorted(set(files) - set(records)), sorted(set(records) - set(files))
        stale = sorted(i for i in set(files) & set(records) if files[i] != records[i])
        figures.fail("index", f"{where}: catalog differs from the files (missing {missing[:3]}, extra {extra[:3]}, "
                              f"stale {stale[:3]})")
    fulltext = FullTextIndex(state / "fulltext")
    if fulltext.records() != records or fulltext.count() != len(records):
        figures.fail("index", f"{where}: full-text index differs from the catalog "
                              f"({fulltext.count()} documents, {len(records)} rows)")
    embedder = vault.embedder()
    vectors = VectorStore(state / "vectors.sqlite", embedder.name, embedder.dim)
    try:
        hashes = vectors.hashes()
    finally:
        vectors.close()
    expected = {i: text_fingerprint(embedding_texts(e.memory, embedder)) for i, e in scan.entries.items()}
    if hashes != expected:
        wrong = sorted(i for i in set(hashes) | set(expected) if hashes.get(i) != expected.get(i))
        figures.fail("index", f"{where}: vectors differ from the files for {len(wrong)} memories ({wrong[:3]})")
    for rel, text in render_pages(listing).items():
        try:
            held = (root / rel).read_text(encoding="utf-8")
        except OSError:
            held = None
        if held != text:
            figures.fail("index", f"{where}: page {rel} does not list what the catalog holds")
    try:
        cache = json.loads((state / STAT_CACHE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cache = {}
    for rel, known in cache.items():
        path = root / rel
        with contextlib.suppress(OSError):
            info = path.stat()
            if [info.st_mtime_ns, info.st_size] == known[:2] and content_digest(path.read_bytes()) != known[2]:
                figures.fail("index", f"{where}: stat cache hides a change of {rel}")


def check_replay(vault: Vault, figures: Figures, where: str) -> None:
    """The journal and the files agree: lifecycle and counters (``journal replay``), and which are trashed."""
    diffs = vault.replay_diff()
    for diff in diffs[:3]:
        figures.fail("replay", f"{where}: {diff.id} {diff.key}: file {diff.file_value!r}, "
                               f"journal {diff.journal_value!r}")
    states = replay(vault.journal.events())
    for memory_id, entry in vault.scan().entries.items():
        state = states.get(memory_id)
        if state is None or entry.memory.plain:
            continue
        if (state.status == "trashed") != entry.in_trash:
            figures.fail("replay", f"{where}: {memory_id} is {'in' if entry.in_trash else 'out of'} the trash; "
                                   f"the journal says {state.status}")


def purged_ids(root: Path) -> set[str]:
    return {e.memory for e in Journal(root / store.JOURNAL_DIR).events() if e.kind in ("purge", "trash-expire")}


def check_kept(root: Path, before: Snapshot, figures: Figures, where: str) -> None:
    """No memory that existed before is gone (unless purged on purpose); no text doubled."""
    after = snapshot(root)
    lost = before.ids - after.ids - purged_ids(root)
    for memory_id in sorted(lost):
        figures.fail("lost", f"{where}: {memory_id} ({before.paths.get(memory_id)}) is gone")
    had = Counter(before.current.values())
    has = Counter(after.current.values())
    for digest, number in has.items():
        if number > 1 and number > had.get(digest, 0):
            ids = sorted(i for i, d in after.current.items() if d == digest)
            figures.fail("duplicated", f"{where}: one text in {number} current memories: {', '.join(ids)}")


def check_repaired(root: Path, figures: Figures, where: str) -> None:
    scan = store.scan(root)
    for memory_id, paths in scan.duplicates.items():
        figures.fail("duplicated", f"{where}: {memory_id} in {len(paths) + 1} files after the repair")
    # The model's folder is laid out by any process that loads it, without the vault's locks: a temp
    # file a crash leaves there is never swept (a live one could be another process's), nor read.
    left = [rel for rel in temp_files(root) if not rel.startswith(f"{store.STATE_DIR}/models/")]
    if left:
        figures.fail("temp", f"{where}: {len(left)} temp files left after recovery ({left[0]})")


# ---------------------------------------------------------------- the vault and the operations


class _NoNeighbours:
    def neighbours(self, memory_id: str) -> list[tuple[str, float]]:
        return []


def recover(root: Path, embedder: Embedder) -> Vault:
    """What the next commands do after a crash: ``maintain``'s repair step, then ``sync``."""
    from vault_engine.governance.maintain import maintain

    vault = Vault(root, embedder=embedder)
    maintain(vault, steps=(), similarity=_NoNeighbours())  # the repair step alone
    vault.sync()
    return vault


@dataclass(slots=True)
class Operation:
    """One command to kill, with what its checks need."""

    name: str
    variant: str
    args: list[str]
    env: dict[str, str]
    lines: list[str] = field(default_factory=list)  # import: the input
    memory: str = ""  # correct: the memory corrected
    text: str = ""  # correct: the new text

    @property
    def key(self) -> str:
        return f"{self.name}/{self.variant}"


def _generator_lines(seed: int, count: int, rng: random.Random) -> list[str]:
    generator = Generator(seed=seed)
    lines = []
    for memory in generator.memories(count):
        record = dict(memory.record)
        if rng.random() < 1 / 3:
            del record["id"]  # the engine picks the id: a retry cannot tell it by id
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def prepare(name: str, root: Path, folder: Path, rng: random.Random, serial: int,
            variant: str | None = None) -> Operation:
    """The operation ``name`` on the vault at ``root``, its input written under ``folder``."""
    env: dict[str, str] = {}
    if name == "import":
        variant = variant or rng.choice(("auto-sync", "no-sync"))
        lines = _generator_lines(10_000 + serial, rng.randint(5, 30), rng)
        source = folder / f"import-{serial}.jsonl"
        source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        if variant == "no-sync":
            env["MEMVAULT_VAULT_AUTO_SYNC"] = "false"
        return Operation(name, variant, ["import", str(source)], env, lines=lines)
    if name == "sync":
        variant = variant or ("full" if rng.random() < 0.25 else "changes")
        current = sorted(e.path for e in store.scan(root).active())
        for rel in rng.sample(current, min(len(current), rng.randint(1, 6))):
            path = root / rel
            path.write_text(path.read_text(encoding="utf-8") + f"\nEdited by hand ({serial}).\n", encoding="utf-8")
        if current and rng.random() < 0.3:
            rel = rng.choice(current)
            if (root / rel).exists():
                (root / rel).rename((root / rel).with_name(f"moved-{serial}-{(root / rel).name}"))
        return Operation(name, variant, ["sync", "--full"] if variant == "full" else ["sync"], env)
    if name == "maintain":
        return Operation(name, variant or "full", ["maintain"], env)
    if name == "correct":
        variant = variant or rng.choice(("auto-sync", "no-sync"))
        candidates = sorted(e.memory.id for e in store.scan(root).active()
                            if e.memory.lifecycle != "superseded" and not e.memory.plain)
        memory = rng.choice(candidates)
        text = f"Correction {serial}: " + rng.choice(_generator_texts()) + f" Checked on run {rng.randrange(10**6)}."
        if variant == "no-sync":
            env["MEMVAULT_VAULT_AUTO_SYNC"] = "false"
        return Operation(name, variant, ["correct", memory, text], env, memory=memory, text=text)
    raise ValueError(name)


_TEXTS: list[str] = []


def _generator_texts() -> list[str]:
    if not _TEXTS:
        _TEXTS.extend(m.record["summary"] for m in Generator(seed=99).memories(50))
    return _TEXTS


def expected_bodies(operation: Operation, root: Path) -> dict[str, str]:
    """id -> the body each memory this operation writes must hold (only those known by id)."""
    out: dict[str, str] = {}
    for line in operation.lines:
        record = json.loads(line)
        if "id" in record:
            out[record["id"]] = record.get("body", "")
    return out


def _environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "ANTHROPIC_"))}
    env.update(HF_HUB_OFFLINE="1", **extra)
    return env


@dataclass(slots=True)
class Outcome:
    killed: bool  # False: the process had finished on its own
    returncode: int
    seconds: float
    mutations: int | None  # counted only when the process finished on its own
    stderr: str
    point: str | None = None  # where a process that killed itself was: "call path"
    first: float = 0.0  # seconds from the start to its first file-system change (counted runs)
    journal_writes: int = 0  # writes to journal files (counted runs)


def launch(root: Path, operation: Operation, *, delay: float | None = None, at: int = 0, journal_at: int = 0,
           torn: bool = False, count_file: Path | None = None, timeout: float = 300) -> Outcome:
    """Run ``operation`` on ``root``; SIGKILL it after ``delay`` seconds, or let it kill itself at mutation ``at``
    (or at its ``journal_at``-th journal write)."""
    env = _environment(operation.env)
    point_file = root.parent / f".{root.name}.crash-point"
    if at or journal_at:
        env["MEMVAULT_CRASH_AT"] = str(at)
        env["MEMVAULT_CRASH_JOURNAL_AT"] = str(journal_at)
        env["MEMVAULT_CRASH_WHERE"] = str(point_file)
        if torn:
            env["MEMVAULT_CRASH_TORN"] = "1"
    with contextlib.suppress(FileNotFoundError):
        point_file.unlink()
    if count_file is not None:
        env["MEMVAULT_CRASH_COUNT"] = str(count_file)
        with contextlib.suppress(FileNotFoundError):
            count_file.unlink()
    started = time.perf_counter()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen([sys.executable, "-c", BOOT, "--vault", str(root), *operation.args],
                                   env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
        try:
            if delay is not None:
                try:
                    process.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    process.send_signal(signal.SIGKILL)
            process.wait(timeout=timeout)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait()
        errors.seek(0)
        stderr = errors.read().decode("utf-8", "replace")
    seconds = time.perf_counter() - started
    mutations, first, journal_writes = None, 0.0, 0
    if count_file is not None and count_file.exists():
        counted, first_text, journal_text = count_file.read_text().split()
        mutations, first, journal_writes = int(counted), float(first_text), int(journal_text)
    killed = process.returncode == -signal.SIGKILL
    point = None
    if point_file.exists():
        point = point_file.read_text(encoding="utf-8", errors="replace")
        point_file.unlink()
    return Outcome(killed, process.returncode, seconds, mutations, stderr, point, first, journal_writes)


def kill_point(point: str | None, root: Path) -> str:
    """What a process that killed itself was doing, as one of a few kinds."""
    if point is None:
        return "finished first"
    call, _, path = point.partition(" ")
    rel = path[len(str(root)) + 1:] if path.startswith(str(root) + "/") else path
    name = rel.rsplit("/", 1)[-1]
    temp = TEMP_NAME.match(name)
    target = temp["target"] if temp else name
    if call == "sync":
        return "flush (os.sync)"
    if not path.startswith(str(root) + "/"):
        return "outside the vault (a library's temp file)"
    if call == "fsync" and Path(path).is_dir():
        return "folder flush"
    if rel.startswith(store.JOURNAL_DIR + "/"):
        return "journal append" if not temp else "journal rewrite"
    if rel.startswith(store.STATE_DIR + "/"):
        if name in ("lock", "index.lock"):
            return "lock"
        return "full-text index files" if rel.startswith(f"{store.STATE_DIR}/fulltext/") else "index state files"
    if target == store.INDEX_PAGE:
        return "index pages"
    if target.endswith(".md"):
        if call in ("replace", "rename"):
            return "memory file rename"
        if call in ("unlink", "remove"):
            return "memory file removal" if not temp else "memory temp cleanup"
        return "memory temp file (write, flush)"
    return f"other ({call} {name})"


# ---------------------------------------------------------------- one kill


@dataclass(slots=True)
class Calibration:
    seconds: float  # an un-killed run, start to exit
    mutations: int
    startup: float  # seconds before its first file-system change: the interpreter and the imports
    journal_writes: int


def retry(operation: Operation, vault: Vault, figures: Figures, where: str) -> None:
    """Run the killed operation again, as its caller would, in-process."""
    from vault_engine.errors import InvalidInput

    if operation.name == "import":
        result = vault.import_jsonl(operation.lines, "retry")
        for error in result.errors:
            if "already used" not in error.one_line():
                figures.fail("retry", f"{where}: the import again: {error.one_line()}")
    elif operation.name == "correct":
        try:
            vault.correct(operation.memory, operation.text)
        except InvalidInput as exc:
            if "superseded" not in str(exc):  # done already: the caller is told to correct the newer one
                figures.fail("retry", f"{where}: the correction again: {exc.one_line()}")
    elif operation.name == "maintain":
        vault.maintain()
    vault.sync()


def check_outcome(operation: Operation, vault: Vault, before: Snapshot, figures: Figures, where: str) -> None:
    """What the retried operation must have left."""
    scan = vault.scan()
    current = [e for e in scan.active() if e.memory.lifecycle != "superseded" and not e.memory.plain]
    if operation.name == "import":
        wanted = Counter(text_digest(memory_text_of(line)) for line in operation.lines)
        held = Counter(text_digest(memory_text(e.memory)) for e in current)
        for line in operation.lines:
            digest = text_digest(memory_text_of(line))
            if held[digest] != 1:
                figures.fail("duplicated" if held[digest] > 1 else "lost",
                             f"{where}: an imported text is in {held[digest]} current memories "
                             f"({json.loads(line).get('id', 'no id')}, {wanted[digest]} in the input)")
    elif operation.name == "correct":
        digest = text_digest(operation.text)
        versions = [e for e in current if text_digest(memory_text(e.memory)) == digest]
        old = scan.entries.get(operation.memory)
        if len(versions) != 1:
            figures.fail("duplicated" if versions else "lost",
                         f"{where}: the corrected text is in {len(versions)} current memories")
        elif old is None or old.memory.superseded_by != versions[0].memory.id \
                or old.memory.lifecycle != "superseded" or versions[0].memory.supersedes != operation.memory:
            figures.fail("retry", f"{where}: {operation.memory} is not superseded by its correction")
        else:
            new_id = versions[0].memory.id
            if not any(e.kind == "correct" and e.memory == operation.memory and e.payload.get("new") == new_id
                       for e in vault.journal.events(("correct",))):
                figures.fail("replay", f"{where}: the correction {operation.memory} -> {new_id} is not journalled")
    elif operation.name == "maintain":
        for entry in scan.entries.values():
            target = entry.memory.extra.get("merged_into")
            if target is None:
                continue
            if not entry.in_trash:
                figures.fail("retry", f"{where}: {entry.memory.id} merged into {target} but not in the trash")
            if target not in scan.entries:
                figures.fail("lost", f"{where}: {entry.memory.id} merged into {target}, which does not exist")
        again = vault.maintain(dry_run=True, replan=True)
        if again.actions:
            figures.fail("retry", f"{where}: a second maintain still plans {again.counts()}")


def memory_text_of(line: str) -> str:
    """The text an import line states, as the engine compares it (see ``memory_text``)."""
    record = json.loads(line)
    return str(record.get("body", "")).strip() or str(record.get("summary") or record.get("title") or "")


def one_kill(root: Path, operation: Operation, mode: str, calibration: Calibration, rng: random.Random,
             figures: Figures, embedder: Embedder, closed: set[bytes], serial: int) -> None:
    """Kill ``operation`` once as ``mode`` says, then check the vault, recover, retry and check again."""
    where = f"kill {serial} ({operation.key}, {mode})"
    clock = time.perf_counter()

    def phase(name: str) -> None:
        nonlocal clock
        moment = time.perf_counter()
        figures.phases[name] = figures.phases.get(name, 0.0) + moment - clock
        clock = moment

    before = snapshot(root)
    early = False
    if mode == "timed":
        startup = calibration.startup
        if rng.random() < 1 / 6:
            delay, early = rng.uniform(0.0, startup), True
        else:
            delay = rng.uniform(startup, max(startup + 0.01, calibration.seconds * 0.98))
        outcome = launch(root, operation, delay=delay)
    elif mode == "torn" and calibration.journal_writes:  # the append that matters most, torn
        outcome = launch(root, operation, journal_at=rng.randint(1, calibration.journal_writes), torn=True)
        figures.points["torn: " + kill_point(outcome.point, root)] += 1
    else:
        outcome = launch(root, operation, at=rng.randint(1, max(1, calibration.mutations)), torn=mode == "torn")
        figures.points[("torn: " if mode == "torn" else "") + kill_point(outcome.point, root)] += 1
    phase("killed process")
    figures.kills += 1
    figures.by_operation[operation.name] += 1
    figures.by_mode[mode] += 1
    figures.early += early
    if outcome.killed:
        figures.mid_operation += 1
    else:
        figures.after_finished += 1
        if outcome.returncode != 0 or "Traceback" in outcome.stderr:
            figures.fail("error", f"{where}: exit {outcome.returncode}: {outcome.stderr.strip()[-300:]}")
    if "Traceback" in outcome.stderr and outcome.killed:
        figures.fail("error", f"{where}: traceback before the kill: {outcome.stderr.strip()[-300:]}")
    bodies = expected_bodies(operation, root)
    if operation.name == "correct":
        digest = text_digest(operation.text)
        for entry in store.scan(root).entries.values():
            if entry.memory.supersedes == operation.memory and text_digest(memory_text(entry.memory)) != digest \
                    and entry.memory.id not in before.ids:
                figures.fail("torn", f"{where}: {entry.path} holds another text than the correction")
    # 1. Right after the kill: whole files, a readable journal.
    figures.temp_after_kill += len(temp_files(root))
    check_files(root, figures, where, bodies)
    check_journal(root, figures, where, closed)
    if operation.name == "import":
        _check_partial_import(root, operation, before, figures, where)
    phase("checks")
    # 2. Recovery: the repair step and a sync; the indexes agree with the files.
    try:
        vault = recover(root, embedder)
    except Exception as exc:
        figures.fail("error", f"{where}: recovery failed: {type(exc).__name__}: {exc}")
        return
    phase("recovery")
    check_repaired(root, figures, where)
    check_files(root, figures, where + " after recovery", bodies)
    check_indexes(vault, figures, where + " after recovery")
    check_kept(root, before, figures, where + " after recovery")
    phase("checks")
    # 3. The caller's retry completes the operation.
    try:
        retry(operation, vault, figures, where)
    except Exception as exc:
        figures.fail("error", f"{where}: retry failed: {type(exc).__name__}: {exc}")
        return
    phase("retry")
    check_outcome(operation, vault, before, figures, where + " after the retry")
    check_kept(root, before, figures, where + " after the retry")
    check_indexes(vault, figures, where + " after the retry")
    check_replay(vault, figures, where + " after the retry")
    check_journal(root, figures, where + " after the retry", closed)
    phase("checks")
    figures.recoveries += 1


def _check_partial_import(root: Path, operation: Operation, before: Snapshot, figures: Figures, where: str) -> None:
    """After a killed import: what it added is a part of the input, nothing twice."""
    wanted = {text_digest(memory_text_of(line)) for line in operation.lines}
    after = snapshot(root)
    added = Counter(digest for memory_id, digest in after.current.items() if memory_id not in before.ids)
    for digest, number in added.items():
        if digest not in wanted:
            figures.fail("torn", f"{where}: the import added a text that is not in its input")
        elif number > 1:
            figures.fail("duplicated", f"{where}: the import added one text {number} times")


# ---------------------------------------------------------------- the run


def build_base(folder: Path, seed: int, size: int) -> tuple[Path, Embedder]:
    """A vault of ``size`` planted records (near-duplicates and contradictions), indexed; and the model,
    laid out in the vault as a command would (so the copies need not do it again)."""
    root = folder / "base"
    store.create_vault(root, git=False)
    embedder = Vault(root).embedder()  # the model as every command of this vault loads it
    planted = plant(Generator(seed=seed), size, duplicate_share=0.15, contradictions=max(2, size // 25))
    vault = Vault(root, embedder=embedder)
    result = vault.import_jsonl([json.dumps(r) for r in planted.records], "planted")
    if result.errors:
        raise RuntimeError(f"the base vault did not import: {result.errors[0].one_line()}")
    vault.sync()
    return root, embedder


def copy_vault(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, symlinks=True)
    return dest


def calibrate(base: Path, folder: Path, name: str, variant: str, figures: Figures, embedder: Embedder) -> Calibration:
    """One un-killed run of the operation on a copy of the base: its duration and its mutation count.
    Its result is checked like a recovery (which checks the checker)."""
    root = copy_vault(base, folder / f"calibrate-{name}-{variant}")
    operation = prepare(name, root, folder, random.Random(f"calibrate:{name}:{variant}"), 0, variant)
    before = snapshot(root)
    outcome = launch(root, operation, count_file=folder / "count")
    where = f"un-killed {operation.key}"
    if outcome.returncode != 0 or outcome.mutations is None:
        raise RuntimeError(f"{where} failed (exit {outcome.returncode}): {outcome.stderr.strip()[-500:]}")
    vault = Vault(root, embedder=embedder)
    vault.sync()
    check_files(root, figures, where, expected_bodies(operation, root))
    check_journal(root, figures, where, set())
    check_repaired(root, figures, where)
    check_indexes(vault, figures, where)
    check_kept(root, before, figures, where)
    check_replay(vault, figures, where)
    shutil.rmtree(root)
    return Calibration(outcome.seconds, outcome.mutations, outcome.first, outcome.journal_writes)


def _schedule(kills: int, rng: random.Random) -> Iterator[tuple[str, str]]:
    """(operation, mode) of each kill: the operations in turn (shuffled every four), modes at random."""
    for start in range(0, kills, len(OPERATIONS)):
        ops = list(OPERATIONS)
        rng.shuffle(ops)
        for op in ops[: kills - start]:
            roll = rng.random()
            yield op, ("timed" if roll < 0.5 else "write" if roll < 0.88 else "torn")


def run(seed: int, kills: int, workdir: Path, *, size: int = 60, chain: int = CHAIN,
        progress: bool = False) -> dict[str, Any]:
    """Kill memvault ``kills`` times (seeded), recover, check; returns the figures."""
    # Torn journal lines are planted on purpose: the warning each read logs about them is expected noise.
    journal_log = logging.getLogger("vault_engine.journal")
    level = journal_log.level
    journal_log.setLevel(logging.ERROR)
    try:
        return _run(seed, kills, workdir, size, chain, progress)
    finally:
        journal_log.setLevel(level)


def _run(seed: int, kills: int, workdir: Path, size: int, chain: int, progress: bool) -> dict[str, Any]:
    started = time.perf_counter()
    workdir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(f"crash:{seed}")
    figures = Figures(seed)
    base, embedder = build_base(workdir, seed, size)
    calibrations: dict[str, Calibration] = {}
    schedule = list(_schedule(kills, rng))
    root: Path | None = None
    closed: set[bytes] = set()
    for serial, (name, mode) in enumerate(schedule, start=1):
        if root is None or (serial - 1) % chain == 0:
            if root is not None:
                shutil.rmtree(root, ignore_errors=True)
            root = copy_vault(base, workdir / f"chain-{serial}")
            closed = set()
        operation = prepare(name, root, workdir, rng, serial)
        if operation.key not in calibrations:
            calibrations[operation.key] = calibrate(base, workdir, name, operation.variant, figures, embedder)
        one_kill(root, operation, mode, calibrations[operation.key], rng, figures, embedder, closed, serial)
        if progress:
            print(f"\r{serial}/{len(schedule)} kills, {len(figures.failures)} failures", end="", file=sys.stderr,
                  flush=True)
    if progress:
        print(file=sys.stderr)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)
    out = figures.to_json(time.perf_counter() - started)
    out["calibration"] = {k: {"seconds": round(c.seconds, 2), "startup": round(c.startup, 2),
                              "mutations": c.mutations, "journal_writes": c.journal_writes}
                          for k, c in sorted(calibrations.items())}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--size", type=int, default=60, help="Records in the base vault (default 60).")
    parser.add_argument("--workdir", type=Path, help="Where the vaults go (default: a temporary folder).")
    parser.add_argument("--json", action="store_true", help="Print the figures as one JSON document.")
    args = parser.parse_args(argv)
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memvault-crash-")))
        figures = run(args.seed, args.kills, workdir, size=args.size, progress=not args.json)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        rows = [
            ("kills", f"{figures['kills']} ({', '.join(f'{k} {v}' for k, v in figures['by_operation'].items())})"),
            ("kill modes", ", ".join(f"{k} {v}" for k, v in figures["by_mode"].items())
             + f"; {figures['early_kills']} very early"),
            ("landed mid-operation / after it finished", f"{figures['mid_operation']} / {figures['after_finished']}"),
            ("recoveries checked", str(figures["recoveries"])),
            ("temp files left by the kills (removed by recovery)", str(figures["temp_files_after_kill"])),
            ("torn journal lines (skipped, as designed)", str(figures["torn_journal_lines"])),
            ("torn files", str(figures["torn"])),
            ("journal errors", str(figures["journal_errors"])),
            ("memories lost", str(figures["lost"])),
            ("memories duplicated", str(figures["duplicated"])),
            ("index inconsistencies after recovery", str(figures["index_errors"])),
            ("other failures (temp left, replay, retry, errors)",
             str(figures["temp_left"] + figures["replay_errors"] + figures["retry_errors"] + figures["errors"])),
            ("seconds", f"{figures['seconds']:.0f}"),
        ]
        width = max(len(name) for name, _ in rows)
        for name, value in rows:
            print(f"{name:<{width}}  {value}")
        for problem in figures["problems"]:
            print(f"  {problem}")
    return 1 if figures["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
