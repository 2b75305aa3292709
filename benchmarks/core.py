"""Benchmark the vault core through the real CLI.

Measures, for N memories (default 10,000): `memvault import` time, `memvault
list --json` time, `memvault --help` time, and each command's peak memory.
Every figure is the median of several runs, each in a fresh subprocess.

    .venv/bin/python -m benchmarks.core [--count 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import make_records


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run a command; return (seconds, peak RSS in MB, stdout)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out_chunks = []
    assert proc.stdout is not None
    for chunk in iter(lambda: proc.stdout.read(65536), b""):  # type: ignore[union-attr]
        out_chunks.append(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(args)}\n{err}")
    return elapsed, usage.ru_maxrss / 1024, b"".join(out_chunks).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    exe = [sys.executable, "-m", "vault_engine"]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    work = Path(tempfile.mkdtemp(prefix="memvault-bench-"))
    try:
        data = work / "records.jsonl"
        data.write_text("\n".join(make_records(args.count)) + "\n", encoding="utf-8")

        help_times = [timed([*exe, "--help"], env)[0] for _ in range(max(7, args.runs))]

        import_times, import_rss = [], []
        vault = work / "vault"
        for run in range(args.runs):
            vault = work / f"vault{run}"
            subprocess.run([*exe, "init", str(vault), "--no-git"], check=True, capture_output=True, env=env)
            seconds, rss, _ = timed([*exe, "--vault", str(vault), "import", str(data)], env)
            import_times.append(seconds)
            import_rss.append(rss)

        list_times, list_rss = [], []
        listed = 0
        for _ in range(max(5, args.runs)):
            seconds, rss, out = timed([*exe, "--vault", str(vault), "list", "--json"], env)
            list_times.append(seconds)
            list_rss.append(rss)
            listed = len(json.loads(out)["memories"])
        if listed != args.count:
            raise SystemExit(f"list returned {listed} memories, expected {args.count}")

        rows: list[tuple[str, float, float, float | None]] = [
            (f"import {args.count:,} memories", statistics.median(import_times), 20.0, statistics.median(import_rss)),
            (f"list --json over {args.count:,}", statistics.median(list_times), 2.0, statistics.median(list_rss)),
            ("--help", statistics.median(help_times), 0.3, None),
        ]
        print(f"memvault core benchmark ({os.cpu_count()} cores, Python {sys.version.split()[0]})")
        print(f"{'operation':<32} {'median s':>9} {'target s':>9} {'peak MB':>8}  runs")
        for name, seconds, target, peak_mb in rows:
            mark = "ok" if seconds <= target else "SLOW"
            peak = f"{peak_mb:8.0f}" if peak_mb is not None else f"{'-':>8}"
            runs = len(help_times) if name == "--help" else (len(list_times) if "list" in name else len(import_times))
            print(f"{name:<32} {seconds:9.3f} {target:9.1f} {peak}  {runs} {mark}")
        print("all runs (s): import " + ", ".join(f"{t:.2f}" for t in import_times)
              + " | list " + ", ".join(f"{t:.2f}" for t in list_times)
              + " | help " + ", ".join(f"{t:.3f}" for t in help_times))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
