"""Benchmark `memvault watch`: how soon an edited file is searchable after the write.

Creates a vault of N memories (default 1,000), runs the watcher in a thread
with the real embedding model, then edits one file at a time (a fresh unique
word appended to its body) and measures the time from the write until a
full-text search for that word returns the memory. Prints the median and p90
of the latency, and of the sync alone.

    .venv/bin/python -m benchmarks.watch [--memories 1000] [--edits 15] [--debounce 150]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import make_records
from vault_engine.daemon.watch import WatcherThread, WatchUpdate
from vault_engine.index.fulltext import FullTextIndex
from vault_engine.store import STATE_DIR, create_vault, iter_markdown
from vault_engine.vault import Vault

TARGET_MS = 500.0
POLL_SECONDS = 0.01  # each poll opens the index afresh (~1 ms of CPU): polling harder slows the sync it measures


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def searchable_after(root: Path, token: str, memory_id: str, since: float, timeout: float = 30.0) -> float:
    """Seconds from ``since`` until a search for ``token`` finds ``memory_id`` (a fresh reader each time, as a
    separate `memvault search` process would have)."""
    deadline = since + timeout
    while time.perf_counter() < deadline:
        hits = FullTextIndex(root / STATE_DIR / "fulltext").search(token, 5)
        if any(hit.id == memory_id for hit in hits):
            return time.perf_counter() - since
        time.sleep(POLL_SECONDS)
    raise SystemExit(f"{memory_id} was not searchable for {token!r} within {timeout:g}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=1000, help="memories in the vault (default 1000)")
    parser.add_argument("--edits", type=int, default=15, help="edits to time (default 15)")
    parser.add_argument("--debounce", type=int, default=None, help="watch debounce in ms (default: the config's)")
    parser.add_argument("--copy-of", type=Path, default=None, metavar="VAULT",
                        help="time a copy of this already-synced vault instead of building one "
                             "(e.g. a benchmarks.search --keep vault of 10,000 memories)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="memvault-bench-watch-"))
    try:
        root = work / "vault"
        if args.copy_of is not None:
            source = next((p.parent for p in args.copy_of.rglob("memvault.toml")), None)
            if source is None:
                raise SystemExit(f"error: no vault under {args.copy_of}")
            shutil.copytree(source, root, symlinks=True)
            vault = Vault(root)
            args.memories = sum(1 for _ in iter_markdown(root))
            print(f"vault: a copy of {source} ({args.memories:,} memory files; its indexes as built there)")
            embedder = vault.embedder()
        else:
            create_vault(root, git=False)
            vault = Vault(root)
            started = time.perf_counter()
            result = vault.import_jsonl(make_records(args.memories))
            if len(result.added) != args.memories:
                raise SystemExit(f"imported {len(result.added)} of {args.memories} memories: {result.errors[:3]}")
            print(f"vault: {args.memories:,} memories imported in {time.perf_counter() - started:.1f}s")
            embedder = vault.embedder()  # the real model, shared by the first build and the watcher
        started = time.perf_counter()
        built = vault.sync(embedder=embedder)
        print(f"first build: {built.plan.summary()}; {built.embedded} texts embedded in "
              f"{time.perf_counter() - started:.1f}s")

        syncs: list[WatchUpdate] = []
        started = time.perf_counter()
        with WatcherThread(vault, embedder, debounce_ms=args.debounce, on_report=syncs.append) as watcher:
            first = watcher.updates[0]
            if first.report is None:
                raise SystemExit(f"the start sync failed: {first.error}")
            print(f"watcher ready after {time.perf_counter() - started:.2f}s "
                  f"(start sync {first.seconds * 1000:.0f} ms: {first.report.plan.summary()})")
            files = [(rel, path) for rel, path, _ in iter_markdown(root) if path is not None]
            rng = random.Random(11)
            latencies, sync_times = [], []
            for number in range(args.edits):
                _rel, path = rng.choice(files)
                text = path.read_text(encoding="utf-8")
                memory_id = next(line[3:].strip() for line in text.splitlines() if line.startswith("id:"))
                token = f"benchtoken{number}x{rng.randrange(10**9)}"
                before = len(syncs)
                path.write_text(text.rstrip("\n") + f"\n\nFresh word: {token}.\n", encoding="utf-8")
                written = time.perf_counter()
                latencies.append(searchable_after(root, token, memory_id, written) * 1000)
                deadline = time.monotonic() + 30
                while len(syncs) == before and time.monotonic() < deadline:
                    time.sleep(0.002)
                edit_syncs = syncs[before:]
                sync_times.append(sum(u.seconds for u in edit_syncs) * 1000)
                time.sleep(0.3)  # let the watcher go idle: edits are measured one at a time
        for name, values in (("write -> searchable", latencies), ("sync alone", sync_times)):
            print(f"{name:<20} median {statistics.median(values):7.1f} ms   p90 {percentile(values, 0.9):7.1f} ms"
                  f"   max {max(values):7.1f} ms")
        verdict = "ok" if percentile(latencies, 0.9) <= TARGET_MS else "SLOW"
        print(f"target: searchable within {TARGET_MS:.0f} ms of the write (p90) -> {verdict}")
        print(f"({args.edits} edits, {args.memories:,} memories, {os.cpu_count()} cores, Python "
              f"{sys.version.split()[0]}; latencies: {', '.join(f'{v:.0f}' for v in latencies)})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
