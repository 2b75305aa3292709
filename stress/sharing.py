#!/usr/bin/env python3
"""A shared vault under hostile commits and killed syncs: what leaks, what breaks.

Three clones of one vault share a bare remote in a temp folder (loopback only):
A and B are memvault users who run ``memvault git sync``; C is a teammate who
pushes by hand, each round one hostile commit, in turn:

- ``gitignore``: a ``.gitignore`` without ``.memvault/``;
- ``gitattributes``: a ``.gitattributes`` without memvault's block;
- ``symlink-journal``: this month's journal file made a symlink to a file outside the vault;
- ``symlink-memory``: a memory file that is a symlink to a file outside the vault;
- ``symlink-pages``: ``.gitattributes`` and ``INDEX.md`` made symlinks to a file outside the vault;
- ``forged-purge``: a journal line forgetting one of A's memories for good, with no digest;
- ``conflict``: a line of ``README.md`` that A and B also rewrite (a person's conflict).

Meanwhile A and B write memories and keep private state (a buffered conversation under
``.memvault/sessions/``); every second sync of A or B is SIGKILLed with its process group
after a random delay, and the next sync runs as a timer's next run would (git's locks
then dated a minute back, as time would have made them).  A sync that stops at a
conflict is answered as a person would: the markers are removed (both sides kept), and
sync runs again.

Printed at the end (all should be 0), with the counts of attempts:

- **private files pushed**: paths under ``.memvault/`` in any commit of the remote, plus
  commits holding the private conversation's text;
- **outside files read**: the outside files' text found in the remote, in a clone's
  ``.memvault/`` or in a search's answer, plus outside files changed;
- **markers committed**: commits of the remote holding a conflict marker line;
- **syncs left broken**: syncs that still failed after the person's fix and one more run;
- **purges applied to edited memories**: memories edited on A that a forged purge removed.

Usage:
    .venv/bin/python -m stress.sharing [--seconds 150] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

HOSTILE = ("gitignore", "gitattributes", "symlink-journal", "symlink-memory", "symlink-pages", "forged-purge",
           "conflict")
PRIVATE = "PRIVATE-CANARY-51d2: the conversation of another machine"
OUTSIDE = "OUTSIDE-CANARY-9e07: a file of the machine, never of the vault"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com"}
for _name in [n for n in ENV if n.startswith("MEMVAULT_")]:
    del ENV[_name]


@dataclass
class Tally:
    attempts: Counter[str] = field(default_factory=Counter)
    broken: list[str] = field(default_factory=list)
    purged_edits: int = 0


def git(where: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, env=ENV, timeout=120)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


def memvault(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], capture_output=True,
                          text=True, env=ENV, cwd=vault, timeout=300)


def backdate(vault: Path, seconds: float = 60.0) -> None:
    """Git's locks and merge temp files dated ``seconds`` back: the next timer run, a minute later."""
    stamp = time.time() - seconds
    for path in [*(vault / ".git").rglob("*.lock"), *vault.glob(".merge_file_*")]:
        os.utime(path, (stamp, stamp), follow_symlinks=False)


def resolve_markers(path: Path) -> None:
    """A person's fix: the marker lines removed, both sides' lines kept."""
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    path.write_text("\n".join(line for line in lines if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))))


def sync(vault: Path, tally: Tally, rng: random.Random, *, kill: bool) -> None:
    """One ``git sync`` as a timer runs it (killed, when ``kill``), then as many as a person needs."""
    name = vault.name
    if kill:
        tally.attempts["killed syncs"] += 1
        proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "--vault", str(vault), "git", "sync"],
                                cwd=vault, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        time.sleep(rng.uniform(0.1, 1.5))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        backdate(vault)
    for attempt in range(3):
        tally.attempts["syncs"] += 1
        done = memvault(vault, "--json", "git", "sync")
        if done.returncode == 0:
            return
        try:
            conflicts = json.loads(done.stdout)["conflicts"] if done.stdout.strip() else []
        except (ValueError, KeyError):
            conflicts = []
        if not conflicts or attempt == 2:
            tally.broken.append(f"{name}: {done.stderr.strip()[:200] or 'to fix: ' + ', '.join(conflicts)}")
            return
        tally.attempts["conflicts fixed by hand"] += 1
        for rel in conflicts:
            if (vault / rel).is_file():
                resolve_markers(vault / rel)


def hostile_commit(c: Path, kind: str, outside: Path, shared: list[str], n: int) -> None:
    git(c, "pull", "-q", "--no-rebase", "origin", "main", check=False)
    if kind == "gitignore":
        (c / ".gitignore").write_text(f".obsidian/workspace*.json\n# round {n}\n")
    elif kind == "gitattributes":
        (c / ".gitattributes").write_text(f"*.png binary\n# round {n}\n")
    elif kind == "symlink-journal":
        link = c / "journal" / f"{datetime.now(UTC):%Y-%m}.jsonl"
        link.unlink(missing_ok=True)
        link.symlink_to(outside / "outside.jsonl")
    elif kind == "symlink-memory":
        (c / "memories" / "global" / f"linked-{n}.md").symlink_to(outside / "outside.md")
    elif kind == "symlink-pages":
        for name in (".gitattributes", "INDEX.md"):
            (c / name).unlink(missing_ok=True)
            (c / name).symlink_to(outside / "outside.jsonl")
    elif kind == "forged-purge" and shared:
        line = {"id": f"e-forged{n:020d}", "kind": "purge", "memory": shared[n % len(shared)],
                "payload": {"permanent": True}, "ts": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
        month = c / "journal" / f"{datetime.now(UTC):%Y-%m}.jsonl"
        if month.is_symlink():
            month.unlink()
        with month.open("a") as journal:
            journal.write(json.dumps(line) + "\n")
    elif kind == "conflict":
        text = (c / "README.md").read_text()
        (c / "README.md").write_text(f"Round {n}: C says ask carol.\n" + text)
    git(c, "add", "-A", "--", ".")
    git(c, "commit", "-q", "-m", f"c: {kind} (round {n})", check=False)
    git(c, "push", "-q", "origin", "HEAD:main", check=False)


def measure(remote: Path, clones: list[Path], outside: Path, before: dict[str, bytes]) -> dict[str, int]:
    commits = git(remote, "rev-list", "--all").split()
    private_paths: set[str] = set()
    private_text = outside_text = markers = 0
    for commit in commits:
        private_paths.update(p for p in git(remote, "ls-tree", "-r", "--name-only", commit).split("\n")
                             if p.startswith(".memvault/"))
        private_text += git(remote, "grep", "-c", "-F", PRIVATE, commit, check=False) != ""
        outside_text += git(remote, "grep", "-c", "-F", OUTSIDE, commit, check=False) != ""
        markers += git(remote, "grep", "-c", "-E", "^(<<<<<<<|>>>>>>>) ", commit, check=False) != ""
    for clone in clones:
        for path in (clone / ".memvault").rglob("*"):
            if path.is_file() and not path.is_symlink() and OUTSIDE.encode() in path.read_bytes():
                outside_text += 1
        if OUTSIDE in memvault(clone, "search", "outside canary file of the machine").stdout:
            outside_text += 1
    changed = sum((outside / name).read_bytes() != data for name, data in before.items())
    return {"private files pushed": len(private_paths) + private_text, "outside files read": outside_text + changed,
            "markers committed": markers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=150.0, help="stop starting rounds after this long")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tally = Tally()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memvault-stress-sharing-") as tmp:
        base = Path(tmp)
        outside = base / "outside"
        outside.mkdir()
        (outside / "outside.jsonl").write_text(f"{OUTSIDE} (1)\n{OUTSIDE} (2)\n")
        (outside / "outside.md").write_text(f"---\nid: m-01kx0000000000000000000000\ntitle: Outside\n---\n{OUTSIDE}\n")
        before = {p.name: p.read_bytes() for p in outside.iterdir()}
        remote = base / "remote.git"
        git(base, "init", "-q", "--bare", "-b", "main", str(remote))
        a, b, c = base / "a", base / "b", base / "c"
        memvault(base, "init", str(a))
        git(a, "checkout", "-q", "-b", "main")
        git(a, "remote", "add", "origin", str(remote))
        shared = [memvault(a, "add", f"Shared fact {n}: the deploy step {n} runs after the tests.").stdout.strip()
                  for n in range(4)]
        memvault(a, "git", "sync")
        for clone in (b, c):
            git(base, "clone", "-q", str(remote), str(clone))
        memvault(b, "git", "sync")
        rounds = 0
        while time.monotonic() - started < args.seconds:
            kind = HOSTILE[rounds % len(HOSTILE)]
            tally.attempts[f"hostile: {kind}"] += 1
            hostile_commit(c, kind, outside, shared, rounds)
            for where in (a, b):
                sessions = where / ".memvault" / "sessions"
                sessions.mkdir(parents=True, exist_ok=True)
                (sessions / f"s{rounds}.jsonl").write_text(json.dumps({"content": PRIVATE}) + "\n")
                memvault(where, "add", f"{where.name} learned fact {rounds}: step {rng.randint(1, 99)} is slow.")
                if kind == "conflict":
                    text = (where / "README.md").read_text()
                    (where / "README.md").write_text(f"Round {rounds}: {where.name} says ask {where.name}.\n" + text)
            if kind == "forged-purge":  # A edits the memory the forged line names: the edit must survive
                target = shared[rounds % len(shared)]
                memvault(a, "correct", target, f"Shared fact, edited in round {rounds}.")
            for where in (a, b):
                sync(where, tally, rng, kill=rng.random() < 0.5)
            if kind == "forged-purge":
                ids = json.loads(memvault(a, "--json", "list", "--trash").stdout or "{}").get("memories", [])
                tally.purged_edits += shared[rounds % len(shared)] not in {m.get("id") for m in ids}
            rounds += 1
        for where in (a, b, a):  # a last round each: everyone has everyone's work
            sync(where, tally, rng, kill=False)
        figures = measure(remote, [a, b], outside, before)
    figures["syncs left broken"] = len(tally.broken)
    figures["purges applied to edited memories"] = tally.purged_edits
    print(f"stress_sharing: {rounds} rounds in {time.monotonic() - started:.0f} s (seed {args.seed})")
    for name, count in figures.items():
        print(f"  {name:36} {count}")
    print("attempts:")
    for name, count in sorted(tally.attempts.items()):
        print(f"  {name:36} {count}")
    for line in tally.broken:
        print(f"  broken: {line}")
    sys.exit(1 if any(figures.values()) else 0)


if __name__ == "__main__":
    main()
