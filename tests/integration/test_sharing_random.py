"""A property of sharing with real git: random operations on two clones, merged both ways (A's work
into B, and B's into A, each in a copy of its own), give the same files and the same memories."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2026-12-01T10:00:00Z",
       "GIT_COMMITTER_DATE": "2026-12-01T10:00:00Z"}
TOPICS = ("deploys", "the cache", "the nightly build", "staging", "the api", "release notes")


def git(where: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, env=ENV, timeout=120)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def random_work(vault: Vault, rng: random.Random, ids: list[str], side: str) -> None:
    """A few random operations, as a person and an agent would make them."""
    for n in range(rng.randint(2, 6)):
        kind = rng.choice(("add", "feedback", "correct", "forget", "tag", "edit"))
        current = [i for i in ids if vault.entry(i).memory.lifecycle != "superseded" and not vault.entry(i).in_trash]
        if kind == "add" or not current:
            topic = rng.choice(TOPICS)
            ids.append(vault.add(NewMemory(f"{side} note {n}: {topic} takes {rng.randint(1, 60)} minutes.",
                                           title=f"Notes on {topic}")).id)
        elif kind == "feedback":
            vault.feedback(rng.choice(current), rng.choice(("used-successfully", "ignored")))
        elif kind == "correct":
            ids.append(vault.correct(rng.choice(current), f"{side} corrected: {rng.choice(TOPICS)} moved.").id)
        elif kind == "forget":
            vault.forget(rng.choice(current))
        elif kind in ("tag", "edit"):
            entry = vault.entry(rng.choice(current))
            text = (vault.root / entry.path).read_text()
            if kind == "tag":
                text = text.replace("tags: []", f"tags: [{side}-{n}]", 1)
            else:
                text = text.rstrip("\n") + f"\n\n{side} adds line {n}.\n"
            (vault.root / entry.path).write_text(text)


def run_memvault(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], capture_output=True,
                          text=True, env=ENV, cwd=vault, timeout=300)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_work_on_two_clones_merged_both_ways_converges(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    a = tmp_path / "a"
    assert run_memvault(tmp_path, "init", str(a)).returncode == 0
    start = Vault(a, auto_sync=False)
    ids = [start.add(NewMemory(f"Base memory {n} about {topic}.", title=f"Base {topic}")).id
           for n, topic in enumerate(TOPICS[:4])]
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "base")
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(a), str(b))
    assert run_memvault(b, "status").returncode == 0  # registers the drivers in the clone
    random_work(Vault(a), rng, list(ids), "a")
    random_work(Vault(b), rng, list(ids), "b")
    for where in (a, b):
        git(where, "add", "-A")
        git(where, "commit", "-q", "-m", f"work on {where.name}")
    # A's work into a copy of B, and B's work into a copy of A.
    into_b, into_a = tmp_path / "into-b", tmp_path / "into-a"
    shutil.copytree(b, into_b)
    shutil.copytree(a, into_a)
    git(into_b, "remote", "remove", "origin")  # merged by hand, then settled by git sync without a remote
    git(into_b, "pull", "-q", "--no-rebase", "--no-edit", str(a), "HEAD")
    git(into_a, "pull", "-q", "--no-rebase", "--no-edit", str(b), "HEAD")
    for where in (into_a, into_b):  # what the merge left beside files, and the reconciliation
        assert run_memvault(where, "git", "sync").returncode == 0
    files = []
    for where in (into_a, into_b):
        tracked = {p: (where / p).read_bytes() for p in git(where, "ls-files").split()}
        assert not any(b"<<<<<<<" in data for data in tracked.values())
        files.append(tracked)
    assert files[0].keys() == files[1].keys()
    assert files[0] == files[1]
    memories = [sorted((e.memory.id, e.memory.lifecycle, e.in_trash) for e in Vault(w).scan().entries.values())
                for w in (into_a, into_b)]
    assert memories[0] == memories[1]
