#!/usr/bin/env python3
"""Benchmark ``memvault git sync``: with nothing to do, and after 100 changes made on another machine.

A bare remote and two clones of one vault (made with ``memvault init``, --size synthetic memories
imported and indexed on both). Printed, each a median over --runs:

- ``git sync`` on a clone with nothing to do (the cost of a timer that fires every few minutes),
  beside a bare ``git fetch`` of the same remote in the same run;
- ``git sync`` on clone B after clone A added 50 memories and gave feedback on 50 others and synced:
  commit, fetch, merge with the drivers, re-index what changed (the real model), push; beside a
  plain ``git pull`` of the same changes into a third clone (no drivers, no re-index).

    .venv/bin/python -m benchmarks.git_sync [--size 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Parser, markdown_table, positive

ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def memvault(vault: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], capture_output=True,
                          text=True, cwd=vault, env=ENV, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"memvault {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, env=ENV, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def timed(*command: str, cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(list(command), capture_output=True, text=True, cwd=cwd, env=ENV, timeout=3600)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: {done.stderr.strip()}")
    return seconds


def main() -> int:
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=positive, default=1000, help="memories in the shared vault (default 1000)")
    parser.add_argument("--runs", type=positive, default=3, help="rounds of 100 remote changes (default 3)")
    args = parser.parse_args()
    from stress import synthetic

    with tempfile.TemporaryDirectory(prefix="mv-bench-git-") as scratch:
        base = Path(scratch)
        remote = base / "remote.git"
        git(base, "init", "-q", "--bare", "-b", "main", str(remote))
        a = base / "a"
        memvault(base, "init", str(a))
        records = base / "records.jsonl"
        records.write_text("".join(line + "\n" for line in synthetic.jsonl(synthetic.Generator(7).memories(args.size))))
        print(f"importing {args.size} memories ...", file=sys.stderr, flush=True)
        memvault(a, "import", str(records))
        memvault(a, "sync")
        git(a, "checkout", "-q", "-b", "main")
        git(a, "add", "-A")
        git(a, "commit", "-q", "-m", "vault")
        git(a, "remote", "add", "origin", str(remote))
        git(a, "push", "-q", "origin", "main")
        clones = {}
        for name in ("b", "plain"):
            clones[name] = base / name
            git(base, "clone", "-q", str(remote), str(clones[name]))
        b, plain = clones["b"], clones["plain"]
        memvault(b, "sync")
        idle = [timed(sys.executable, "-m", "vault_engine", "--vault", str(b), "git", "sync", cwd=b)
                for _ in range(max(5, args.runs))]
        fetch = [timed("git", "-C", str(b), "fetch", "-q", "origin", cwd=b) for _ in range(max(5, args.runs))]
        ids = [json.loads(line)["id"] for line in records.read_text().splitlines()]
        merged, pulled = [], []
        for run in range(args.runs):
            lines = [json.dumps({"title": f"Round {run} note {n}", "body": f"Round {run}: change {n} on machine A.",
                                 "type": "fact"}) for n in range(50)]
            (base / "round.jsonl").write_text("\n".join(lines) + "\n")
            memvault(a, "import", str(base / "round.jsonl"))
            for memory_id in ids[run * 50:(run + 1) * 50]:
                memvault(a, "feedback", memory_id, "--outcome", "used-successfully")
            memvault(a, "git", "sync")
            merged.append(timed(sys.executable, "-m", "vault_engine", "--vault", str(b), "git", "sync", cwd=b))
            pulled.append(timed("git", "-C", str(plain), "pull", "-q", "--no-rebase", "origin", "main", cwd=plain))
            print(f"  round {run}: git sync {merged[-1]:.1f} s, plain git pull {pulled[-1]:.1f} s",
                  file=sys.stderr, flush=True)
        conflicts = subprocess.run(["git", "-C", str(b), "grep", "-l", "^<<<<<<<"], capture_output=True, text=True)
        rows = [
            ["git sync, nothing to do", f"{statistics.median(idle):.2f}", f"{len(idle)}"],
            ["git fetch, nothing to fetch (baseline)", f"{statistics.median(fetch):.2f}", f"{len(fetch)}"],
            ["git sync after 100 remote changes", f"{statistics.median(merged):.2f}", f"{len(merged)}"],
            ["plain git pull of the same (baseline)", f"{statistics.median(pulled):.2f}", f"{len(pulled)}"],
        ]
    print(markdown_table(["step", "median s", "runs"], rows))
    print(f"\n{args.size} memories; ratio git sync / plain pull after 100 changes: "
          f"{statistics.median(merged) / statistics.median(pulled):.1f}x; files with conflict markers: "
          f"{len(conflicts.stdout.split())}; {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
