"""Benchmark sync: the first full sync, an unchanged re-sync and peak memory, per vault size.

For each size, in a fresh temporary vault and a fresh child process (so each
size's peak memory is its own), with an empty embedding cache: import
synthetic memories (stress/synthetic.py), time the first sync (real embedding
model, loaded beforehand) in its two halves: until the full text answers (and
the first search, answered then), and the vectors after; split its time into
inside and outside the embedder, count the texts and tokens embedded, then
time re-syncs of the unchanged vault (median of --repeats; each must parse and
embed nothing), searches, and a rebuild after `rm -rf .memvault` with the
cache the first sync filled (warm).

At sizes >= --synthetic-vectors-from the model is not run: random unit vectors,
fingerprinted as sync would, are stored first, so sync embeds nothing and its
time is everything outside the model.  The output says so.

    .venv/bin/python -m benchmarks.sync --sizes 1000,10000 [--repeats 5]
    .venv/bin/python -m benchmarks.sync --sizes 2000 --synthetic-vectors-from 1000   # quick check
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.harness import (
    DEFAULT_SIZES,
    DEFAULT_SYNTHETIC_FROM,
    Parser,
    at_least_zero,
    fail,
    folder_arg,
    line,
    markdown_table,
    mb,
    module_command,
    new_vault,
    positive,
    run_child,
    sizes_arg,
)
from stress import synthetic
from stress.synthetic import QUERIES

# ---------------------------------------------------------------- child: one size


def with_cache(root: Path, cache: Path) -> Any:
    """The vault's settings with its embedding cache in ``cache``."""
    import dataclasses

    from vault_engine import config as config_mod

    loaded = config_mod.load(root)
    return dataclasses.replace(loaded, cache=dataclasses.replace(loaded.cache, dir=str(cache)))


def child(args: argparse.Namespace) -> dict[str, Any]:
    from vault_engine.retrieval.searcher import SearchQuery
    from vault_engine.vault import Vault

    size: int = args.child
    synthetic_vectors = size >= args.synthetic_vectors_from
    work = Path(tempfile.mkdtemp(prefix="memvault-bench-sync-", dir=args.tmp))
    try:
        root = new_vault(work, "vault")
        vault = Vault(root, with_cache(root, work / "cache"))  # an empty embedding cache: nothing reused
        embedder = vault.embedder()
        window = vault.config.embedding.max_tokens
        generator = synthetic.Generator(args.seed)
        mode = "SYNTHETIC vectors (random, model not run)" if synthetic_vectors else "real model"
        print(f"\n== {size:,} memories, {mode} ==", flush=True)

        added, import_seconds = synthetic.write_vault(vault, generator, size, args.import_batch)
        line("import", f"{import_seconds:.2f} s",
             f"{added:,} memories, batches of {args.import_batch:,} (import_jsonl only; generation not timed)")

        seeded_seconds = load_seconds = 0.0
        if synthetic_vectors:
            memories, rows, seeded_seconds = synthetic.seed_vectors(root, embedder, args.seed)
            line("synthetic vectors", f"{seeded_seconds:.2f} s",
                 f"{rows:,} random unit vectors for {memories:,} memories stored before the sync (not timed below)")
        else:
            started = time.perf_counter()
            embedder.embed(["warm up the model"])
            load_seconds = time.perf_counter() - started
            line("model load", f"{load_seconds:.2f} s", "before the sync; not counted below")

        profiler = None
        if args.profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        # What `memvault import` then a search see: the full text first, a search, then the vectors.
        started = time.perf_counter()
        report = vault.sync(vectors=False)
        words = time.perf_counter() - started
        started = time.perf_counter()
        early = vault.search(SearchQuery(QUERIES[0], limit=10))
        first_search = time.perf_counter() - started
        started = time.perf_counter()
        report.filled(vault.fill_vectors())
        total = words + time.perf_counter() - started
        if profiler is not None:
            profiler.disable()
        line("full text ready", f"{words:.2f} s", f"{len(report.plan.added):,} memories searchable by their words")
        line("first search", f"{first_search:.2f} s",
             f"{len(early.hits)} hits, vectors {100 * (early.vectors or {}).get('built', 0):.0f}% built; "
             f"answered {words + first_search:.2f} s after the import returned")
        if len(report.plan.added) != size or report.problems:
            problem = report.problems[0].one_line() if report.problems else "-"
            raise RuntimeError(f"first sync added {len(report.plan.added):,} of {size:,} memories "
                               f"({len(report.problems)} problems; first: {problem})")
        inside = report.seconds_embedding
        outside = total - inside
        texts, tokens = synthetic.count_tokens(root, embedder, window)
        if not synthetic_vectors and texts != report.embedded:
            print(f"  warning: {report.embedded:,} texts embedded but {texts:,} expected", flush=True)
        line("first sync", f"{total:.2f} s", "(profiled: slower than normal)" if profiler else "")
        line("  inside embedder", f"{inside:.2f} s", f"{100 * inside / total:.1f}%")
        line("  outside embedder", f"{outside:.2f} s", f"{100 * outside / total:.1f}%")
        line("  texts embedded", f"{report.embedded:,}",
             f"synthetic: {texts:,} texts would be embedded" if synthetic_vectors else "")
        line("  tokens", f"{tokens:,}", f"in {texts:,} texts, each cut at {window} tokens")
        tokens_per_second = tokens / inside if inside > 0 and report.embedded else None
        if tokens_per_second is not None:
            line("  embedder speed", f"{tokens_per_second:,.0f} tok/s", f"{report.embedded / inside:,.1f} texts/s")
        else:
            line("  embedder speed", "n/a", "model not run (synthetic vectors)" if synthetic_vectors else "")
        line("  outside, per memory", f"{1000 * outside / size:.2f} ms")

        resync: list[float] = []
        worst = (0, 0)
        for _ in range(args.repeats):
            started = time.perf_counter()
            again = vault.sync()
            resync.append(time.perf_counter() - started)
            if not again.plan.empty or again.parsed or again.embedded:
                worst = max(worst, (again.parsed, again.embedded))
                print(f"  unchanged re-sync did work: {again.plan.summary()}, parsed {again.parsed}, "
                      f"embedded {again.embedded}", flush=True)
        line("unchanged re-sync", f"{statistics.median(resync):.3f} s",
             f"median of {len(resync)} (min {min(resync):.3f}, max {max(resync):.3f}); "
             f"parsed {worst[0]}, embedded {worst[1]}")
        latencies = []
        for n in range(max(args.repeats, 1) * len(QUERIES)):
            started = time.perf_counter()
            vault.search(SearchQuery(QUERIES[n % len(QUERIES)], limit=10))
            latencies.append(time.perf_counter() - started)
        line("search", f"{1000 * statistics.median(latencies):.1f} ms",
             f"median of {len(latencies)} searches (vectors built)")
        rebuild = rebuilt_embedded = 0.0
        if not synthetic_vectors:
            shutil.rmtree(root / ".memvault")  # as `rm -rf .memvault`, or a fresh clone on this machine
            started = time.perf_counter()
            again = Vault(root, vault.config, embedder=embedder).sync()
            rebuild = time.perf_counter() - started
            rebuilt_embedded = again.embedded
            line("rebuild, warm cache", f"{rebuild:.2f} s",
                 f"after rm -rf .memvault: {again.embedded:,} texts embedded, {again.cached:,} from the cache")
        if profiler is not None:
            import pstats

            print("\n  first sync profile (top 20 by own time):")
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(20)
        if worst != (0, 0):
            raise RuntimeError(f"unchanged re-sync parsed {worst[0]} files and embedded {worst[1]} texts")
        return {
            "size": size, "synthetic": synthetic_vectors, "import": import_seconds, "seed_vectors": seeded_seconds,
            "model_load": load_seconds, "first_sync": total, "inside": inside, "outside": outside,
            "embedded": report.embedded, "texts": texts, "tokens": tokens, "tokens_per_second": tokens_per_second,
            "resync": statistics.median(resync), "resync_all": resync, "words": words,
            "first_search": words + first_search, "search_ms": 1000 * statistics.median(latencies),
            "rebuild": rebuild, "rebuilt_embedded": rebuilt_embedded,
            "rss_self_mb": mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- parent


def parser() -> Parser:
    p = Parser(prog="python -m benchmarks.sync", description=__doc__,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=sizes_arg, default=sizes_arg(DEFAULT_SIZES),
                   help=f"vault sizes in memories, comma-separated (default {DEFAULT_SIZES})")
    p.add_argument("--repeats", type=positive, default=5, help="unchanged re-syncs to time (default 5)")
    p.add_argument("--synthetic-vectors-from", type=at_least_zero, default=DEFAULT_SYNTHETIC_FROM, metavar="N",
                   help="at sizes >= N store random vectors instead of running the model "
                        f"(default {DEFAULT_SYNTHETIC_FROM})")
    p.add_argument("--seed", type=int, default=7, help="seed of the synthetic memories (default 7)")
    p.add_argument("--import-batch", type=positive, default=25_000,
                   help="records per import_jsonl call (default 25000)")
    p.add_argument("--tmp", type=folder_arg, default=None, help="where to create the temporary vaults")
    p.add_argument("--profile", action="store_true", help="print a cProfile of each first sync")
    p.add_argument("--child", type=positive, help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    return p


def child_main(args: argparse.Namespace) -> int:
    from vault_engine.errors import VaultError

    try:
        result = child(args)
    except (VaultError, RuntimeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.result is not None:
        args.result.write_text(json.dumps(result), encoding="utf-8")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.tmp is not None:
        try:
            args.tmp.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"cannot create --tmp folder {args.tmp}: {exc.strerror}", 2)
    if args.child is not None:
        return child_main(args)

    print(f"memvault sync benchmark: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
          f"seed {args.seed}, synthetic vectors at sizes >= {args.synthetic_vectors_from:,}")
    results: list[dict[str, Any]] = []
    scratch = Path(tempfile.mkdtemp(prefix="memvault-bench-sync-results-"))
    try:
        for size in args.sizes:
            out = scratch / f"{size}.json"
            command = [*module_command("benchmarks.sync"), "--child", str(size), "--result", str(out),
                       "--repeats", str(args.repeats), "--synthetic-vectors-from", str(args.synthetic_vectors_from),
                       "--seed", str(args.seed), "--import-batch", str(args.import_batch)]
            if args.tmp is not None:
                command += ["--tmp", str(args.tmp)]
            if args.profile:
                command.append("--profile")
            code, _, peak = run_child(command)
            if code != 0 or not out.exists():
                fail(f"size {size:,} failed (child exit code {code})")
            result = json.loads(out.read_text(encoding="utf-8"))
            result["peak_rss_mb"] = peak
            line("peak RSS", f"{peak:,.0f} MB", "whole child process: import, sync, re-syncs")
            results.append(result)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    headers = ["memories", "vectors", "import s", "full text ready s", "first sync s", "in embedder s",
               "outside s", "outside %", "texts embedded", "tokens", "tokens/s", "re-sync s", "search ms",
               "warm-cache rebuild s", "peak RSS MB"]
    rows = []
    for r in results:
        rows.append([
            f"{r['size']:,}", "synthetic" if r["synthetic"] else "model", f"{r['import']:.2f}",
            f"{r['words']:.2f}", f"{r['first_sync']:.2f}", f"{r['inside']:.2f}", f"{r['outside']:.2f}",
            f"{100 * r['outside'] / r['first_sync']:.1f}",
            f"{r['embedded']:,}" if not r["synthetic"] else f"0 (of {r['texts']:,})",
            f"{r['tokens']:,}", f"{r['tokens_per_second']:,.0f}" if r["tokens_per_second"] else "n/a",
            f"{r['resync']:.3f}", f"{r['search_ms']:.1f}", f"{r['rebuild']:.2f}" if not r["synthetic"] else "n/a",
            f"{r['peak_rss_mb']:,.0f}",
        ])
    print("\n## sync benchmark\n")
    print(markdown_table(headers, rows))
    if any(r["synthetic"] for r in results):
        print("\nsynthetic: random vectors were stored before the sync, so it embedded nothing; "
              "its time is all outside the model.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
