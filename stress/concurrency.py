"""Concurrency stress: many writers, syncs and readers at once, `memvault watch` running, files edited by hand.

Everything runs against one fresh vault, at the same time, for ``--seconds``:

- ``--workers`` client workers, each a loop of real ``memvault`` subprocesses
  (``python -m vault_engine --vault V add|correct|search|sync ... --json``): a
  worker adds memories, corrects its own (always the newest version of each),
  searches and syncs, in a seeded random order. Exit 75 (vault busy) is a
  retry message: the worker waits a moment and runs the same command again.
- one reader process calling ``Vault.search`` in-process (the model and the
  indexes stay loaded, as in ``memvault serve`` or ``memvault mcp``), timing
  every search: how long a reader waits while the writers write;
- ``memvault watch --json`` as a subprocess, stopped with SIGTERM at the end;
- an editor thread changing memory files directly, like a person in an
  editor: appending a line in place, renaming a file, touching one.

Then the final state is checked: ``memvault sync`` once more, then the
catalog holds exactly the ids of the files, no file is unparseable or a
duplicate, the journal reads without a warning, every successful add's id is
on disk, every successful correction's new version is on disk with the old
one superseded by it, and every line the editor appended is still in the
file of its memory.

    .venv/bin/python -m stress.concurrency --workers 6 --seconds 60
    .venv/bin/python -m stress.concurrency --seed 7 --workers 3 --seconds 10 --json

``run()`` returns the figures as a dict (``python -m stress`` prints them in
its table); ``main()`` prints a small table, and exits 1 when anything was
lost or failed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

KINDS = ("add", "correct", "search", "sync")
WEIGHTS = {"add": 4, "correct": 2, "search": 3, "sync": 1}
MAX_ATTEMPTS = 30  # runs of one command that answered "vault is busy" before the worker gives up (a failure)
COMMAND_TIMEOUT = 180.0
SEED_MEMORIES = 24

WORDS = """
deploy staging release pipeline postgres schema migration index cache latency timeout retry queue worker
token rotation secret vault backup restore snapshot replica shard cluster kubernetes helm chart ingress
pytest fixture coverage lint mypy ruff format commit branch rebase review merge conflict hotfix changelog
invoice billing payment refund customer account signup login session cookie header cors proxy gateway
logging tracing metrics alert dashboard oncall incident runbook postmortem budget quota limit throttle
python typescript rust golang docker compose makefile script cron scheduler batch stream kafka redis
""".split()

# A correction refused because `maintain` (run by the watcher) superseded or trashed the memory
# meanwhile: a clear answer to a real conflict, not a failure of concurrency.
_CONFLICT = re.compile(r"is superseded by|is in the trash")
# Lines of a process's stderr that mean something went wrong beyond a clear retry message.
_BAD_OUTPUT = re.compile(r"traceback|database is locked|internal error|exception", re.IGNORECASE)
_ID_LINE = re.compile(rb"(?m)^id:[ \t]*['\"]?([a-z0-9][a-z0-9._-]*)")


def _env() -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    for name in list(env):
        if name.startswith("ANTHROPIC_"):
            env.pop(name)  # the offline language model: no network in a stress run
    return env


def _percentile(values: Sequence[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def _sentence(rng: random.Random, unique: str) -> str:
    words = rng.sample(WORDS, 7)
    return f"Note {unique}: the {words[0]} {words[1]} needs {words[2]} before {words[3]}, " \
           f"then {words[4]} and {words[5]} with {words[6]}."


# ---------------------------------------------------------------- shared bookkeeping


@dataclass
class Tally:
    """What every worker saw, merged under one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    operations: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    failures: list[str] = field(default_factory=list)
    conflicts: int = 0
    index_warnings: int = 0
    added: set[str] = field(default_factory=set)
    corrected: list[tuple[str, str]] = field(default_factory=list)  # (old id, new id)
    cli_search_ms: list[float] = field(default_factory=list)
    inprocess_search_ms: list[float] = field(default_factory=list)  # searches of the in-process writers
    edits: Counter[str] = field(default_factory=Counter)
    appended: list[tuple[str, str]] = field(default_factory=list)  # (memory id, marker line)

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what[:300])


class Cli:
    """Runs ``memvault`` commands against one vault, retrying on exit 75."""

    def __init__(self, vault: Path, tally: Tally, deadline: float):
        self.vault = vault
        self.tally = tally
        self.deadline = deadline
        self.env = _env()

    def run(self, kind: str, args: Sequence[str], rng: random.Random) -> dict[str, Any] | None:
        """One command to success (its JSON), or None after a failure (recorded) or at the deadline."""
        command = [sys.executable, "-m", "vault_engine", "--vault", str(self.vault), *args, "--json"]
        for _attempt in range(MAX_ATTEMPTS):
            started = time.perf_counter()
            try:
                proc = subprocess.run(command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT, env=self.env)
            except subprocess.TimeoutExpired:
                self.tally.fail(f"{kind}: no answer in {COMMAND_TIMEOUT:g}s")
                return None
            elapsed = (time.perf_counter() - started) * 1000
            stderr = proc.stderr.strip()
            if proc.returncode == 75:
                lines = stderr.splitlines()
                if len(lines) != 1 or ("try again" not in lines[0] and "retry" not in lines[0]):
                    self.tally.fail(f"{kind}: exit 75 without one clear retry line: {stderr[:200]!r}")
                    return None
                with self.tally.lock:
                    self.tally.retries += 1
                if time.monotonic() > self.deadline + 30:
                    return None
                time.sleep(rng.uniform(0.05, 0.3))
                continue
            if proc.returncode == 1 and kind == "correct" and _CONFLICT.search(stderr) and "\n" not in stderr:
                with self.tally.lock:
                    self.tally.conflicts += 1
                return None
            if proc.returncode != 0:
                self.tally.fail(f"{kind} exit {proc.returncode}: {stderr[:240]}")
                return None
            bad = [line for line in stderr.splitlines() if _BAD_OUTPUT.search(line)]
            if bad:
                self.tally.fail(f"{kind}: {bad[0][:240]}")
            if "search indexes not updated" in stderr:
                with self.tally.lock:
                    self.tally.index_warnings += 1
            try:
                data = json.loads(proc.stdout)
            except ValueError:
                self.tally.fail(f"{kind}: output is not JSON: {proc.stdout[:120]!r}")
                return None
            with self.tally.lock:
                self.tally.operations[kind] += 1
                if kind == "search":
                    self.tally.cli_search_ms.append(elapsed)
            return data if isinstance(data, dict) else {"value": data}
        self.tally.fail(f"{kind}: still busy after {MAX_ATTEMPTS} attempts")
        return None


def _loop(number: int, seed: int, stop: Any, execute: Any) -> None:
    """Add, correct (own memories, newest version), search and sync until ``stop`` is set.

    ``execute(kind, args)`` runs one operation to success and returns its id
    (add, correct), or None when it failed.
    """
    rng = random.Random(seed * 1009 + number)
    mine: list[str] = []  # the newest version of each memory this worker added
    count = 0
    kinds = list(WEIGHTS)
    weights = [WEIGHTS[k] for k in kinds]
    # Every kind once first, finished even past the deadline: on a busy machine a short run
    # must still have run each kind (a CLI operation costs seconds of process start and model load).
    first = ["add", "correct", "search", "sync"] if number % 2 else ["add", "correct", "sync", "search"]
    while count < len(first) or not stop():
        kind = first[count] if count < len(first) else rng.choices(kinds, weights)[0]
        if kind == "correct" and not mine:
            kind = "add"
        count += 1
        if kind == "add":
            made = execute("add", (_sentence(rng, f"w{number}n{count}"), rng.choice(WORDS)))
            if made is not None:
                mine.append(made)
        elif kind == "correct":
            at = rng.randrange(len(mine))
            made = execute("correct", (mine[at], _sentence(rng, f"w{number}c{count}")))
            if made is not None:
                mine[at] = made
            else:  # superseded or trashed by `maintain` meanwhile (or failed): leave it be
                mine.pop(at)
        elif kind == "search":
            execute("search", (" ".join(rng.sample(WORDS, 3)),))
        else:
            execute("sync", ())


def client_worker(number: int, seed: int, cli: Cli, stop: threading.Event) -> None:
    """A worker running each operation as a real ``memvault`` subprocess."""
    rng = random.Random(seed * 2003 + number)
    tally = cli.tally

    def execute(kind: str, args: tuple[str, ...]) -> str | None:
        if kind == "add":
            result = cli.run("add", ["add", args[0], "--tag", args[1]], rng)
        elif kind == "correct":
            result = cli.run("correct", ["correct", args[0], args[1]], rng)
        elif kind == "search":
            result = cli.run("search", ["search", args[0], "--limit", "5"], rng)
        else:
            result = cli.run("sync", ["sync"], rng)
        made = result.get("id") if result is not None and kind in ("add", "correct") else None
        if not isinstance(made, str):
            return None
        with tally.lock:
            if kind == "add":
                tally.added.add(made)
            else:
                tally.corrected.append((args[0], made))
        return made

    _loop(number, seed, stop.is_set, execute)


def inprocess_worker(number: int, seed: int, vault: str, until: float, out: str) -> None:
    """A worker process calling :class:`Vault` in-process (model loaded once), until the time ``until``."""
    from vault_engine.errors import VaultBusy, VaultError
    from vault_engine.retrieval.searcher import SearchQuery
    from vault_engine.vault import NewMemory, Vault

    rng = random.Random(seed * 4001 + number)
    opened = Vault(Path(vault), auto_sync=True)
    opened.search(SearchQuery("warm up the model", limit=1))  # loading the model is not a wait for a writer
    figures: dict[str, Any] = {"operations": Counter(), "retries": 0, "failures": [], "added": [], "corrected": [],
                               "search_ms": [], "index_warnings": 0, "conflicts": 0}

    def once(kind: str, args: tuple[str, ...]) -> str | None:
        if kind == "add":
            return opened.add(NewMemory(args[0], tags=(args[1],))).id
        if kind == "correct":
            return opened.correct(args[0], args[1]).id
        if kind == "search":
            started = time.perf_counter()
            opened.search(SearchQuery(args[0], limit=5))
            figures["search_ms"].append((time.perf_counter() - started) * 1000)
            return None
        opened.sync()
        return None

    def execute(kind: str, args: tuple[str, ...]) -> str | None:
        for _attempt in range(MAX_ATTEMPTS):
            try:
                made = once(kind, args)
            except VaultBusy as exc:
                if "try again" not in exc.one_line() and "retry" not in exc.one_line():
                    figures["failures"].append(f"in-process {kind}: busy without a retry hint: {exc.one_line()}")
                    return None
                figures["retries"] += 1
                time.sleep(rng.uniform(0.05, 0.3))
                continue
            except VaultError as exc:
                if kind == "correct" and _CONFLICT.search(exc.one_line()):
                    figures["conflicts"] += 1
                    return None
                figures["failures"].append(f"in-process {kind}: {exc.one_line()}"[:300])
                return None
            except Exception as exc:  # a bug: the figures must show it
                figures["failures"].append(f"in-process {kind}: {type(exc).__name__}: {exc}"[:300])
                return None
            figures["operations"][kind] += 1
            if opened.index_warning:
                figures["index_warnings"] += 1
                opened.index_warning = None
            if kind == "add" and made is not None:
                figures["added"].append(made)
            elif kind == "correct" and made is not None:
                figures["corrected"].append((args[0], made))
            return made
        figures["failures"].append(f"in-process {kind}: still busy after {MAX_ATTEMPTS} attempts")
        return None

    _loop(number, seed, lambda: time.time() >= until, execute)
    Path(out).write_text(json.dumps(figures))


def editor(vault: Path, seed: int, tally: Tally, stop: threading.Event) -> None:
    """Edit memory files directly, as a person in an editor would: append a line in place, rename, touch."""
    rng = random.Random(seed * 7919)
    folder = vault / "memories"
    count = 0
    while not stop.wait(rng.uniform(0.05, 0.25)):
        files = sorted(p for p in folder.rglob("*.md") if not p.name.startswith(".") and p.name != "INDEX.md")
        if not files:
            continue
        path = rng.choice(files)
        action = rng.choices(("append", "rename", "touch"), (5, 2, 3))[0]
        count += 1
        try:
            if action == "append":
                # In place, like an editor that writes the file it opened: read the id, then append.
                with open(path, "r+b") as handle:
                    head = handle.read(4096)
                    found = _ID_LINE.search(head)
                    if found is None:
                        continue
                    marker = f"Edited by hand, mark e{seed}x{count}."
                    handle.seek(0, os.SEEK_END)
                    size = handle.tell()
                    last = b""
                    if size:
                        handle.seek(size - 1)
                        last = handle.read(1)
                    handle.seek(0, os.SEEK_END)
                    handle.write((b"" if last == b"\n" else b"\n") + marker.encode() + b"\n")
                with tally.lock:
                    tally.appended.append((found.group(1).decode(), marker))
            elif action == "rename":
                stem = re.sub(r"-r[0-9]+$", "", path.stem)
                os.rename(path, path.with_name(f"{stem}-r{count}.md"))
            else:
                os.utime(path)
        except FileNotFoundError:
            continue  # moved or replaced meanwhile: a person would just reopen it
        with tally.lock:
            tally.edits[action] += 1


def reader(vault: str, seed: int, until: float, out: str) -> None:
    """In-process searches (kept-open indexes and model), timed, until the monotonic time ``until``."""
    from vault_engine.errors import VaultBusy, VaultError
    from vault_engine.retrieval.searcher import SearchQuery
    from vault_engine.vault import Vault

    rng = random.Random(seed * 31)
    opened = Vault(Path(vault))
    latencies: list[float] = []
    retries = 0
    failures: list[str] = []
    opened.search(SearchQuery("warm up the model", limit=1))
    while time.time() < until:
        query = " ".join(rng.sample(WORDS, 3))
        started = time.perf_counter()
        try:
            opened.search(SearchQuery(query, limit=5))
        except VaultBusy:
            retries += 1
            continue
        except VaultError as exc:
            failures.append(f"reader search: {exc.one_line()}"[:300])
            continue
        except Exception as exc:  # a bug: the figure must show it
            failures.append(f"reader search: {type(exc).__name__}: {exc}"[:300])
            continue
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(rng.uniform(0.01, 0.05))  # an agent between two look-ups, not a tight loop
    Path(out).write_text(json.dumps({"latencies": latencies, "retries": retries, "failures": failures}))


# ---------------------------------------------------------------- the run


def _seed_vault(vault: Path, seed: int) -> None:
    from vault_engine.store import create_vault

    create_vault(vault, git=False)
    rng = random.Random(seed)
    lines = [json.dumps({"title": f"Seed memory {n}", "body": _sentence(rng, f"s{n}"), "tags": [rng.choice(WORDS)]})
             for n in range(SEED_MEMORIES)]
    for args, stdin in ((["import", "-"], "\n".join(lines) + "\n"), (["sync"], None)):
        proc = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], input=stdin,
                              capture_output=True, text=True, timeout=600, env=_env())
        if proc.returncode != 0:
            raise RuntimeError(f"preparing the vault failed: memvault {args[0]}: {proc.stderr.strip()}")


def _watch_lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _final_state(vault: Path, tally: Tally) -> dict[str, Any]:
    """Sync once more, then compare the files, the catalog, the journal and what the workers were told."""
    from vault_engine.index.catalog import Catalog
    from vault_engine.vault import Vault

    proc = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), "sync", "--json"],
                          capture_output=True, text=True, timeout=600, env=_env())
    problems: list[str] = []
    if proc.returncode != 0:
        problems.append(f"final sync exit {proc.returncode}: {proc.stderr.strip()[:200]}")
    opened = Vault(vault)
    scan = opened.scan()
    entries = scan.entries
    catalog = Catalog(vault / ".memvault" / "catalog.sqlite")
    try:
        indexed = catalog.records()
    finally:
        catalog.close()
    events = list(opened.journal.events())
    adds_lost = sorted(i for i in tally.added if i not in entries)
    corrections_lost = []
    for old, new in tally.corrected:
        newer, older = entries.get(new), entries.get(old)
        if newer is None or newer.memory.supersedes != old or older is None \
                or older.memory.superseded_by not in {new} | {n for o, n in tally.corrected if o == old}:
            corrections_lost.append(f"{old}->{new}")
    edits_lost = [f"{memory_id}: {marker}" for memory_id, marker in tally.appended
                  if memory_id in entries and marker not in entries[memory_id].memory.body]
    temp_files = [p.name for p in vault.rglob("*.tmp") if ".memvault" not in p.parts]
    return {
        "files": len(entries),
        "catalog": len(indexed),
        "catalog_matches_files": set(indexed) == set(entries)
        and all(indexed[i][0] == entries[i].path for i in entries if i in indexed),
        "unparseable": len(scan.problems),
        "problems": [p.one_line() for p in scan.problems][:10] + problems,
        "journal_events": len(events),
        "journal_warnings": len(opened.journal.warnings),
        "adds_lost": adds_lost,
        "corrections_lost": corrections_lost,
        "edits_lost": edits_lost,
        "temp_files_left": temp_files,
    }


def run(seed: int, workers: int, seconds: float, workdir: Path) -> dict[str, Any]:
    """The whole run in ``workdir`` (a fresh vault in ``workdir/vault``); returns its figures."""
    if workers < 1 or seconds <= 0:
        raise ValueError("workers must be at least 1 and seconds above 0")
    workdir = Path(workdir)
    vault = workdir / "vault"
    if vault.exists():
        shutil.rmtree(vault)
    workdir.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    _seed_vault(vault, seed)
    prepared = time.perf_counter()

    tally = Tally()
    stop = threading.Event()
    deadline = time.monotonic() + seconds
    watch_log = workdir / "watch.jsonl"
    with open(watch_log, "w", encoding="utf-8") as log, open(workdir / "watch.err", "w", encoding="utf-8") as err:
        watcher = subprocess.Popen([sys.executable, "-m", "vault_engine", "--vault", str(vault), "watch", "--json"],
                                   stdout=log, stderr=err, env=_env())
    reader_out = workdir / "reader.json"
    context = multiprocessing.get_context("spawn")
    until = time.time() + seconds
    searcher = context.Process(target=reader, args=(str(vault), seed, until, str(reader_out)))
    # Even-numbered workers run CLI subprocesses, odd-numbered ones call Vault in their own process.
    in_process = {n: workdir / f"worker-{n}.json" for n in range(1, workers, 2)}
    processes = [context.Process(target=inprocess_worker, args=(n, seed, str(vault), until, str(out)))
                 for n, out in in_process.items()]
    for process in (searcher, *processes):
        process.start()
    cli = Cli(vault, tally, deadline)
    threads = [threading.Thread(target=client_worker, args=(n, seed, cli, stop), name=f"worker-{n}")
               for n in range(0, workers, 2)]
    threads.append(threading.Thread(target=editor, args=(vault, seed, tally, stop), name="editor"))
    for thread in threads:
        thread.start()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if watcher.poll() is not None:
            tally.fail(f"memvault watch ended early with exit {watcher.returncode}")
            break
    stop.set()
    for thread in threads:
        thread.join(COMMAND_TIMEOUT * 2)
    for process in (searcher, *processes):
        process.join(COMMAND_TIMEOUT)
        if process.is_alive():
            process.kill()
            tally.fail("an in-process worker did not finish")
    for out in in_process.values():
        if not out.exists():
            tally.fail(f"{out.stem} wrote no figures (it ended with an error)")
            continue
        done = json.loads(out.read_text())
        tally.operations.update(done["operations"])
        tally.retries += done["retries"]
        tally.conflicts += done["conflicts"]
        tally.index_warnings += done["index_warnings"]
        tally.failures.extend(done["failures"])
        tally.added.update(done["added"])
        tally.corrected.extend((old, new) for old, new in done["corrected"])
        tally.inprocess_search_ms.extend(done["search_ms"])
    stopped = time.perf_counter()
    if watcher.poll() is None:
        watcher.send_signal(signal.SIGTERM)
        try:
            watcher.wait(60)
        except subprocess.TimeoutExpired:
            watcher.kill()
            tally.fail("memvault watch did not stop within 60 s of SIGTERM")
    if watcher.returncode not in (0, None):
        tally.fail(f"memvault watch exit {watcher.returncode}: {(workdir / 'watch.err').read_text()[-300:]}")
    watch_stops = (time.perf_counter() - stopped) * 1000
    updates = _watch_lines(watch_log)
    watch_errors = [u.get("error", "") for u in updates if u.get("event") == "error"]
    for message in watch_errors:
        if "busy" not in message and "try again" not in message:  # retried by the watcher itself
            tally.fail(f"watch: {message}")
    for line in (workdir / "watch.err").read_text(encoding="utf-8", errors="replace").splitlines():
        if _BAD_OUTPUT.search(line):
            tally.fail(f"watch stderr: {line}")

    reading: dict[str, Any] = {"latencies": [], "retries": 0, "failures": ["the reader wrote no figures"]}
    if reader_out.exists():
        reading = json.loads(reader_out.read_text())
    for failure in reading["failures"]:
        tally.fail(failure)
    final = _final_state(vault, tally)
    for problem in final["problems"]:
        tally.fail(f"final state: {problem}")
    if not final["catalog_matches_files"]:
        tally.fail("final state: the catalog does not list exactly the files' ids and paths")
    if final["journal_warnings"]:
        tally.fail(f"final state: {final['journal_warnings']} unreadable journal lines")
    if final["temp_files_left"]:
        tally.fail(f"final state: temp files left: {final['temp_files_left'][:3]}")
    for edit in final["edits_lost"]:  # a lost update, though no memory went missing
        tally.fail(f"final state: a line appended by hand was overwritten: {edit}")

    latencies = list(reading["latencies"]) + tally.inprocess_search_ms  # every search with the model loaded
    operations = dict(tally.operations)
    operations["edit"] = sum(tally.edits.values())
    operations["watch sync"] = sum(1 for u in updates if u.get("event") == "sync")
    operations["reader search"] = len(reading["latencies"])
    lost = len(final["adds_lost"]) + len(final["corrections_lost"])
    completed = sum(operations.get(k, 0) for k in KINDS) + operations["reader search"]
    figures: dict[str, Any] = {
        "seed": seed,
        "workers": workers,
        "seconds": round(time.perf_counter() - began, 1),
        "run_seconds": seconds,
        "prepare_seconds": round(prepared - began, 1),
        "operations": operations,
        "edits": dict(tally.edits),
        "completed": completed,
        "retries": tally.retries + int(reading["retries"]),
        "index_warnings": tally.index_warnings,
        "conflicts": tally.conflicts,
        "watch_maintenance": [u.get("counts") for u in updates if u.get("event") == "maintain"],
        "watch_retried_errors": len(watch_errors),
        "failures": len(tally.failures),
        "failure_samples": tally.failures[:10],
        "lost": lost,
        "adds_lost": len(final["adds_lost"]),
        "corrections_lost": len(final["corrections_lost"]),
        "edits_lost": len(final["edits_lost"]),
        "lost_samples": (final["adds_lost"] + final["corrections_lost"] + final["edits_lost"])[:10],
        "search_p50_ms": round(_percentile(latencies, 0.50), 1),
        "search_p99_ms": round(_percentile(latencies, 0.99), 1),
        "longest_reader_wait_ms": round(max(latencies), 1) if latencies else float("nan"),
        "cli_search_p50_ms": round(_percentile(tally.cli_search_ms, 0.50), 1),
        "cli_search_p99_ms": round(_percentile(tally.cli_search_ms, 0.99), 1),
        "watch_stop_ms": round(watch_stops, 1),
        "final": {k: v for k, v in final.items() if k not in ("adds_lost", "corrections_lost", "edits_lost")},
    }
    figures["summary"] = (
        f"{operations.get('add', 0)} adds, {operations.get('correct', 0)} corrections, "
        f"{operations.get('search', 0) + operations['reader search']} searches, {operations.get('sync', 0)} syncs, "
        f"{operations['edit']} direct edits, {operations['watch sync']} watch syncs; "
        f"{figures['retries']} busy retries, {figures['failures']} failures, {figures['edits_lost'] + lost} lost"
    )
    return figures


def _table(figures: dict[str, Any]) -> str:
    ops = figures["operations"]
    final = figures["final"]
    rows = [
        ("operations completed", f"{figures['completed']:,}",
         ", ".join(f"{k} {v}" for k, v in ops.items())),
        ("busy retries (exit 75 / VaultBusy)", str(figures["retries"]), "each followed by a retry that succeeded"),
        ("failures beyond a retry message", str(figures["failures"]), "must be 0"),
        ("corrections refused: maintain got there first", str(figures["conflicts"]),
         f"superseded or trashed meanwhile by the watcher's maintain ({len(figures['watch_maintenance'])} runs: "
         + (", ".join(f"{k} {v}" for k, v in sum((Counter(c or {}) for c in figures["watch_maintenance"]),
                                                 Counter()).items()) or "nothing to do") + ")"),
        ("memories lost", str(figures["lost"]),
         f"adds {figures['adds_lost']}, corrections {figures['corrections_lost']}; must be 0"),
        ("hand edits lost", str(figures["edits_lost"]), f"of {figures['edits'].get('append', 0)} appended lines"),
        ("in-process search p50 / p99", f"{figures['search_p50_ms']:.0f} / {figures['search_p99_ms']:.0f} ms",
         "under concurrent writes"),
        ("longest reader wait", f"{figures['longest_reader_wait_ms']:.0f} ms", "the slowest of those searches"),
        ("CLI search p50 / p99", f"{figures['cli_search_p50_ms']:.0f} / {figures['cli_search_p99_ms']:.0f} ms",
         "a cold process each"),
        ("final state", "ok" if final["catalog_matches_files"] and not final["unparseable"]
         and not final["journal_warnings"] else "BAD",
         f"{final['files']} files, {final['catalog']} catalogued, {final['unparseable']} unparseable, "
         f"{final['journal_events']} journal events, {final['journal_warnings']} journal warnings"),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{label:<{width}}  {value:>12}  {note}" for label, value, note in rows]
    for sample in figures["failure_samples"] + figures["lost_samples"]:
        lines.append(f"  ! {sample}")
    lines.append(f"{figures['seconds']} s (seed {figures['seed']}, {figures['workers']} workers, "
                 f"{figures['run_seconds']:g} s of load)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--workers", type=int, default=6, help="Client workers running memvault commands.")
    parser.add_argument("--seconds", type=float, default=60.0, help="How long the load runs.")
    parser.add_argument("--workdir", type=Path, help="Where the vault and the logs go (default: a temp folder).")
    parser.add_argument("--json", action="store_true", help="Print the figures as one JSON document.")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        figures = run(args.seed, args.workers, args.seconds, args.workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="memvault-concurrency-") as temp:
            figures = run(args.seed, args.workers, args.seconds, Path(temp))
    print(json.dumps(figures, indent=2, default=str) if args.json else _table(figures))
    return 1 if figures["failures"] or figures["lost"] or figures["edits_lost"] else 0


if __name__ == "__main__":
    sys.exit(main())
