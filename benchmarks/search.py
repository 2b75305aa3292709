"""Benchmark search: in-process latency, a cold `memvault search` process, and peak memory, per vault size.

For each size: build a vault of synthetic memories (stress/synthetic.py;
import, then sync), or reuse one built earlier under --keep DIR.  Then, in a
fresh child process: one `Searcher`, 5 warm-up queries, then --queries
queries (questions made from the synthetic vocabulary about known memories;
some with a rare token such as E4821, some filtered by project or type),
giving p50/p90/p99 latency, the model's share (each query embedded alone,
timed separately) and the child's peak RSS.  Last, `python -m vault_engine
--vault DIR search QUERY --json` runs as a subprocess --cold-runs times,
after one untimed run that warms the OS file cache.

At sizes >= --synthetic-vectors-from the vault's vectors are random (the
model is not run to build it; queries are still embedded by the real model),
so latency is real but the vector lanes rank noise.  The output says so.

    .venv/bin/python -m benchmarks.search --sizes 1000,10000 --keep ~/.cache/memvault-bench
    .venv/bin/python -m benchmarks.search --sizes 1500 --synthetic-vectors-from 1000   # quick check
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import statistics
import subprocess
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

MARKER = ".bench-search.json"  # hidden: never scanned as a memory


def percentiles(values: Sequence[float]) -> tuple[float, float, float]:
    """p50, p90, p99 (linear interpolation between closest ranks)."""
    if len(values) == 1:
        return values[0], values[0], values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[89], cuts[98]


def vault_name(size: int, synthetic_vectors: bool, seed: int) -> str:
    from stress import synthetic

    vectors = "synthetic" if synthetic_vectors else "model"
    return f"search-{size}-{vectors}-seed{seed}-v{synthetic.GENERATOR_VERSION}"


def marker_for(size: int, synthetic_vectors: bool, seed: int) -> dict[str, Any]:
    from stress import synthetic

    return {"size": size, "synthetic_vectors": synthetic_vectors, "seed": seed,
            "generator": synthetic.GENERATOR_VERSION}


# ---------------------------------------------------------------- child: build


def build(args: argparse.Namespace) -> int:
    from stress import synthetic
    from vault_engine.vault import Vault

    size: int = args.child_build
    root: Path = args.vault
    synthetic_vectors = size >= args.synthetic_vectors_from
    if root.exists():
        shutil.rmtree(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    root = new_vault(root.parent, root.name)
    vault = Vault(root)
    embedder = vault.embedder()
    added, seconds = synthetic.write_vault(vault, synthetic.Generator(args.seed), size, args.import_batch)
    line("import", f"{seconds:.2f} s", f"{added:,} memories")
    if synthetic_vectors:
        memories, rows, seconds = synthetic.seed_vectors(root, embedder, args.seed)
        line("synthetic vectors", f"{seconds:.2f} s", f"{rows:,} random unit vectors for {memories:,} memories")
    started = time.perf_counter()
    report = vault.sync()
    seconds = time.perf_counter() - started
    line("sync", f"{seconds:.2f} s", f"{report.embedded:,} texts embedded by the model")
    if len(report.plan.added) != size or report.problems:
        raise RuntimeError(f"sync indexed {len(report.plan.added):,} of {size:,} memories "
                           f"({len(report.problems)} problems)")
    (root / MARKER).write_text(json.dumps(marker_for(size, synthetic_vectors, args.seed)), encoding="utf-8")
    return 0


# ---------------------------------------------------------------- child: search


def search(args: argparse.Namespace) -> dict[str, Any]:
    from stress import synthetic
    from vault_engine import config as config_mod
    from vault_engine.retrieval.searcher import Searcher, SearchQuery
    from vault_engine.vault import Vault

    size: int = args.child_search
    root: Path = args.vault
    config = config_mod.load(root)
    vault = Vault(root, config)
    embedder = vault.embedder()
    # A kept vault built by an older engine may have an index part to bring up to date
    # (a catalog of another version is rebuilt from the files; vectors are kept).
    report = vault.sync()
    if report.notice or not report.plan.empty:
        line("index update", "", f"{report.plan.summary()}; {report.embedded} texts embedded")
    warmups = 5
    queries = synthetic.Generator(args.seed).queries(args.queries + warmups, size)

    started = time.perf_counter()
    embedder.embed(["warm up the model"])
    model_load = time.perf_counter() - started
    started = time.perf_counter()
    searcher = Searcher(root, config, embedder)
    opened = time.perf_counter() - started
    # The same search without the re-ranking stage, with it over exactly 30 candidates, and with
    # neither re-ranking nor the feedback lane: run alternately with the default searcher, so
    # machine noise hits all four alike.
    plain = Searcher(root, dataclasses.replace(config, retrieval=dataclasses.replace(config.retrieval, rerank=False)),
                     embedder)
    thirty = Searcher(root, dataclasses.replace(config, retrieval=dataclasses.replace(config.retrieval,
                                                                                      rerank_depth=30)), embedder)
    bare = Searcher(root, dataclasses.replace(config, retrieval=dataclasses.replace(
        config.retrieval, rerank=False, weight_feedback=0.0)), embedder)

    def request(number: int) -> SearchQuery:
        query = queries[number]
        return SearchQuery(query.text, limit=args.limit, project=query.project, types=query.types)

    try:
        started = time.perf_counter()
        searcher.search(request(0))
        first = time.perf_counter() - started
        for number in range(1, warmups):
            for each in (searcher, plain, thirty, bare):
                each.search(request(number))
        without: list[float] = []
        added_30: list[float] = []
        added_feedback: list[float] = []

        latency: list[float] = []
        by_kind: dict[str, list[float]] = {}
        found = {"all": 0}
        asked = {"all": 0}
        empty = 0
        for number in range(warmups, len(queries)):
            query = queries[number]
            started = time.perf_counter()
            result = searcher.search(request(number))
            elapsed = 1000 * (time.perf_counter() - started)
            latency.append(elapsed)
            started = time.perf_counter()
            plain.search(request(number))
            base = 1000 * (time.perf_counter() - started)
            without.append(base)
            started = time.perf_counter()
            thirty.search(request(number))
            added_30.append(1000 * (time.perf_counter() - started) - base)
            started = time.perf_counter()
            bare.search(request(number))
            added_feedback.append(base - 1000 * (time.perf_counter() - started))
            by_kind.setdefault(query.kind, []).append(elapsed)
            empty += not result.hits
            hit = any(h.id == query.source_id for h in result.hits)
            for key in ("all", query.kind):
                found[key] = found.get(key, 0) + hit
                asked[key] = asked.get(key, 0) + 1
    finally:
        searcher.close()
        plain.close()
        thirty.close()
        bare.close()

    embed_ms = []
    for number in range(warmups, len(queries)):
        started = time.perf_counter()
        embedder.embed([queries[number].text])
        embed_ms.append(1000 * (time.perf_counter() - started))

    p50, p90, p99 = percentiles(latency)
    e50, e90, _ = percentiles(embed_ms)
    line("model load", f"{1000 * model_load:.0f} ms", "before the searcher; not counted below")
    line("open Searcher", f"{1000 * opened:.1f} ms")
    line("first query", f"{1000 * first:.1f} ms", "loads the vector matrix and filter columns")
    line("search p50", f"{p50:.1f} ms", f"{len(latency)} queries, limit {args.limit}")
    line("search p90", f"{p90:.1f} ms")
    line("search p99", f"{p99:.1f} ms", f"max {max(latency):.1f} ms")
    w50, w90, _ = percentiles(without)
    line("search without re-ranking p50", f"{w50:.1f} ms", f"p90 {w90:.1f} ms ([retrieval] rerank = false)")
    line("re-ranking 30 candidates adds", f"{statistics.median(added_30):.2f} ms",
         "median of the per-query difference (rerank_depth = 30 minus no re-ranking)")
    line("feedback lane adds", f"{statistics.median(added_feedback):.2f} ms",
         "median of the per-query difference (no re-ranking minus neither re-ranking nor feedback)")
    line("query embedding p50", f"{e50:.1f} ms", f"p90 {e90:.1f} ms (model alone, one query per call)")
    line("search minus embedding", f"{p50 - e50:.1f} ms", "p50 difference: engine overhead")
    kinds = ", ".join(f"{kind} {statistics.median(values):.1f} ms (n={len(values)})"
                      for kind, values in sorted(by_kind.items()))
    line("p50 by query kind", "", kinds)
    recall = ", ".join(f"{kind} {found.get(kind, 0)}/{asked[kind]}" for kind in sorted(asked))
    line("source memory in hits", "", recall + (" (vector lanes are noise: synthetic vectors)"
                                                 if size >= args.synthetic_vectors_from else ""))
    if empty:
        line("queries with no hits", f"{empty}")
    return {
        "size": size, "synthetic": size >= args.synthetic_vectors_from, "model_load_ms": 1000 * model_load,
        "open_ms": 1000 * opened, "first_ms": 1000 * first, "p50": p50, "p90": p90, "p99": p99,
        "embed_p50": e50, "without_rerank_p50": w50, "rerank30_added": statistics.median(added_30),
        "feedback_added": statistics.median(added_feedback),
        "queries": len(latency), "found": found["all"], "empty": empty,
        "rss_self_mb": mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss),
    }


# ---------------------------------------------------------------- parent


def cold_runs(root: Path, query: str, runs: int) -> tuple[list[float], list[float], int]:
    """Wall seconds and peak RSS (MB) of each timed `memvault search` process, and the hits of the last."""
    command = [sys.executable, "-m", "vault_engine", "--vault", str(root), "search", query, "--json"]
    times: list[float] = []
    peaks: list[float] = []
    hits = 0
    for run in range(runs + 1):  # the first run only warms the OS file cache
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.perf_counter()
            proc = subprocess.Popen(command, stdout=out, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - started
            proc.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            if proc.returncode != 0:
                message = err.read().decode(errors="replace").strip().splitlines()
                raise RuntimeError(f"memvault search exited {proc.returncode}: {message[-1] if message else ''}")
            try:
                hits = len(json.loads(out.read())["hits"])
            except (ValueError, KeyError):
                raise RuntimeError("memvault search --json printed no JSON result") from None
        if run:
            times.append(elapsed)
            peaks.append(mb(usage.ru_maxrss))
    return times, peaks, hits


def parser() -> Parser:
    p = Parser(prog="python -m benchmarks.search", description=__doc__,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=sizes_arg, default=sizes_arg(DEFAULT_SIZES),
                   help=f"vault sizes in memories, comma-separated (default {DEFAULT_SIZES})")
    p.add_argument("--queries", type=positive, default=200, help="timed queries per size (default 200)")
    p.add_argument("--limit", type=positive, default=10, help="hits per query (default 10)")
    p.add_argument("--cold-runs", type=positive, default=5, help="timed `memvault search` processes (default 5)")
    p.add_argument("--synthetic-vectors-from", type=at_least_zero, default=DEFAULT_SYNTHETIC_FROM, metavar="N",
                   help="at sizes >= N build the vault with random vectors instead of running the model "
                        f"(default {DEFAULT_SYNTHETIC_FROM})")
    p.add_argument("--keep", type=folder_arg, metavar="DIR",
                   help="keep built vaults in DIR and reuse them on later runs (default: temporary)")
    p.add_argument("--seed", type=int, default=7, help="seed of the synthetic memories and queries (default 7)")
    p.add_argument("--import-batch", type=positive, default=25_000,
                   help="records per import_jsonl call when building (default 25000)")
    p.add_argument("--child-build", type=positive, help=argparse.SUPPRESS)
    p.add_argument("--child-search", type=positive, help=argparse.SUPPRESS)
    p.add_argument("--vault", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    return p


def child_main(args: argparse.Namespace) -> int:
    from vault_engine.errors import VaultError

    try:
        if args.child_build is not None:
            return build(args)
        result = search(args)
    except (VaultError, RuntimeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.result is not None:
        args.result.write_text(json.dumps(result), encoding="utf-8")
    return 0


def ensure_vault(args: argparse.Namespace, base: Path, size: int) -> Path:
    from stress import synthetic

    synthetic_vectors = size >= args.synthetic_vectors_from
    root = base / vault_name(size, synthetic_vectors, args.seed)
    try:
        built = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        built = None
    if built == marker_for(size, synthetic_vectors, args.seed):
        line("vault", "reused", str(root))
        return root
    what = "random vectors, model not run" if synthetic_vectors else "vectors from the real model"
    line("build vault", "", f"{root} ({what}; generator v{synthetic.GENERATOR_VERSION})")
    command = [*module_command("benchmarks.search"), "--child-build", str(size), "--vault", str(root),
               "--synthetic-vectors-from", str(args.synthetic_vectors_from), "--seed", str(args.seed),
               "--import-batch", str(args.import_batch)]
    code, seconds, peak = run_child(command)
    if code != 0:
        fail(f"building the {size:,}-memory vault failed (child exit code {code})")
    line("  built in", f"{seconds:.1f} s", f"peak RSS {peak:,.0f} MB")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.child_build is not None or args.child_search is not None:
        if args.vault is None:
            fail("--vault is required with a child option", 2)
        return child_main(args)

    from stress import synthetic

    print(f"memvault search benchmark: {os.cpu_count()} cores, Python {sys.version.split()[0]}, seed {args.seed}, "
          f"synthetic vectors at sizes >= {args.synthetic_vectors_from:,}")
    if args.keep is not None:
        try:
            args.keep.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"cannot create --keep folder {args.keep}: {exc.strerror}", 2)
    scratch = Path(tempfile.mkdtemp(prefix="memvault-bench-search-"))
    base = args.keep if args.keep is not None else scratch
    results: list[dict[str, Any]] = []
    try:
        for size in args.sizes:
            synthetic_vectors = size >= args.synthetic_vectors_from
            mode = "SYNTHETIC vectors (random; queries embedded by the real model)" if synthetic_vectors \
                else "real model"
            print(f"\n== {size:,} memories, {mode} ==", flush=True)
            root = ensure_vault(args, base, size)
            out = scratch / f"{size}.json"
            command = [*module_command("benchmarks.search"), "--child-search", str(size),
                       "--vault", str(root), "--result", str(out), "--queries", str(args.queries),
                       "--limit", str(args.limit), "--synthetic-vectors-from", str(args.synthetic_vectors_from),
                       "--seed", str(args.seed)]
            code, _, peak = run_child(command)
            if code != 0 or not out.exists():
                fail(f"searching the {size:,}-memory vault failed (child exit code {code})")
            result = json.loads(out.read_text(encoding="utf-8"))
            result["peak_rss_mb"] = peak
            line("peak RSS (in-process)", f"{peak:,.0f} MB", "model, indexes and caches of one Searcher")

            query = next(q for q in synthetic.Generator(args.seed).queries(50, size) if q.kind == "question")
            try:
                times, peaks, hits = cold_runs(root, query.text, args.cold_runs)
            except RuntimeError as exc:
                fail(f"cold search on the {size:,}-memory vault: {exc}")
            result["cold"] = statistics.median(times)
            result["cold_rss"] = statistics.median(peaks)
            line("cold CLI search", f"{result['cold']:.2f} s",
                 f"median of {len(times)} (min {min(times):.2f}, max {max(times):.2f}); {hits} hits for {query.text!r}")
            line("cold CLI peak RSS", f"{result['cold_rss']:,.0f} MB")
            results.append(result)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    headers = ["memories", "vectors", "p50 ms", "p90 ms", "p99 ms", "no re-rank p50 ms", "re-rank 30 adds ms",
               "feedback adds ms", "embed p50 ms", "p50 - embed ms",
               "first query ms", "cold CLI s", "peak RSS MB", "cold CLI RSS MB", "found"]
    rows = [[
        f"{r['size']:,}", "synthetic" if r["synthetic"] else "model", f"{r['p50']:.1f}", f"{r['p90']:.1f}",
        f"{r['p99']:.1f}", f"{r['without_rerank_p50']:.1f}", f"{r['rerank30_added']:.2f}", f"{r['feedback_added']:.2f}",
        f"{r['embed_p50']:.1f}", f"{r['p50'] - r['embed_p50']:.1f}", f"{r['first_ms']:.0f}",
        f"{r['cold']:.2f}", f"{r['peak_rss_mb']:,.0f}", f"{r['cold_rss']:,.0f}", f"{r['found']}/{r['queries']}",
    ] for r in results]
    print("\n## search benchmark\n")
    print(markdown_table(headers, rows))
    print("\nfound: queries whose source memory was among the hits.")
    if any(r["synthetic"] for r in results):
        print("synthetic: the vault's vectors are random, so vector lanes rank noise; latency is still real.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
