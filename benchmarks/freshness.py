"""Benchmark the check every read makes: what changed on disk since the last sync.

For each size: a vault of synthetic memories (stress/synthetic.py; imported, random vectors, synced),
or one kept from an earlier run under --keep DIR (DIR/v<size>).  Then, in this process:

- the check on an unchanged vault, as a command pays it (the stat cache read and parsed, every
  markdown file stat'ed) and as a server pays it (the stat cache kept parsed between requests);
  the walk alone (one lstat per file) beside it;
- a search with the check against the same search without it (the open searcher asked directly),
  alternated query by query: the medians of each and of the per-query difference;
- the first search after one memory was edited by hand: the check, the sync of that file (its words,
  its vectors dropped and embedded again by the real model) and the search.

Every figure is the median of --runs runs.

    .venv/bin/python -m benchmarks.freshness --sizes 1000,10000 --keep ~/.cache/memvault-bench-fresh
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.harness import line, median_ms, new_vault, positive, sizes_arg, timings
from stress.synthetic import QUERIES

MARKER = ".bench-freshness"  # hidden: never scanned as a memory


def build(parent: Path, size: int) -> Path:
    """A synced vault of ``size`` synthetic memories (random vectors: the model is not run to build it)."""
    from stress.synthetic import Generator, seed_vectors, write_vault
    from vault_engine.vault import Vault

    root = parent / f"v{size}"
    if (root / MARKER).exists():
        return root
    if root.exists():
        sys.exit(f"{root} exists but was not built by this benchmark; remove it or choose another --keep")
    root = new_vault(parent, f"v{size}")
    vault = Vault(root)
    write_vault(vault, Generator(seed=7), size)
    seed_vectors(root, vault.embedder())
    vault.sync()
    (root / MARKER).write_text("built\n", encoding="utf-8")
    return root


def measure(root: Path, runs: int) -> None:
    from vault_engine import store
    from vault_engine.index.disk import STAT_CACHE
    from vault_engine.index.freshness import RecordedStats, changes, compare
    from vault_engine.retrieval.searcher import SearchQuery
    from vault_engine.vault import Vault
    from vault_engine.vault.indexes import bring_current

    files = sum(1 for _ in store.stat_markdown(root))
    print(f"\n{files} memory files ({root})", flush=True)
    vault = Vault(root)
    bring_current(vault)  # files recorded in their own clock tick are read once, then settled
    assert changes(root).empty and not changes(root).settled, "the vault is not synced"
    recorded = RecordedStats(root / store.STATE_DIR / STAT_CACHE)
    line("walk alone (lstat)", f"{median_ms(timings(lambda: sum(1 for _ in store.stat_markdown(root)), runs)):.2f} ms")
    line("check, command", f"{median_ms(timings(lambda: changes(root), runs)):.2f} ms", "(stat cache parsed each time)")
    line("check, server", f"{median_ms(timings(lambda: compare(root, recorded.load()), runs)):.2f} ms",
         "(stat cache kept parsed)")

    searcher = vault.searcher()
    requests = [SearchQuery(q) for q in QUERIES]
    for request in requests:  # warm: the model, the searcher's caches
        vault.search(request)
    checked: list[float] = []
    direct: list[float] = []
    for n in range(runs):
        request = requests[n % len(requests)]
        pair: dict[str, float] = {}
        for label in (("with", "without") if n % 2 else ("without", "with")):
            started = time.perf_counter()
            vault.search(request) if label == "with" else searcher.search(request)
            pair[label] = time.perf_counter() - started
        checked.append(pair["with"])
        direct.append(pair["without"])
    difference = statistics.median(w - d for w, d in zip(checked, direct, strict=True)) * 1000
    line("search without check", f"{statistics.median(direct) * 1000:.2f} ms")
    line("search with check", f"{statistics.median(checked) * 1000:.2f} ms",
         f"(+{difference:.2f} ms per search, median of the per-query difference; "
         f"ratio {statistics.median(checked) / statistics.median(direct):.2f}x)")

    target = root / vault.find(vault.search(requests[0]).hits[0].id).path
    original = target.read_bytes()
    edited: list[float] = []
    try:
        for n in range(max(3, runs // 10)):
            word = f"quokka{chr(97 + n % 26)}{chr(97 + n // 26 % 26)}berry"  # a word no other memory holds
            target.write_bytes(original + f"\nEdited by hand: {word}.\n".encode())
            started = time.perf_counter()
            result = vault.search(SearchQuery(word))
            edited.append(time.perf_counter() - started)
            assert result.hits and result.hits[0].path == target.relative_to(root).as_posix(), "edit not found"
    finally:
        target.write_bytes(original)
        vault.sync()
    line("search after an edit", f"{statistics.median(edited) * 1000:.1f} ms",
         "(check + sync of the file, its vectors embedded again + search)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes_arg, default=[1000, 10000])
    parser.add_argument("--runs", type=positive, default=101, help="runs per figure (median)")
    parser.add_argument("--keep", type=Path, help="build the vaults here and reuse them next time")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-freshness-") as scratch:
        parent = args.keep.expanduser() if args.keep else Path(scratch)
        parent.mkdir(parents=True, exist_ok=True)
        for size in args.sizes:
            measure(build(parent, size), args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
