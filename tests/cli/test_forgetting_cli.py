"""Forget means forgotten: a permanent forget is final on every path, through the real CLI and real git.

A purged memory's file brought back by git is reported and never indexed; journal replay leaves it
alone; its vectors leave the embedding cache, so a deliberate re-add embeds the text afresh; the
overview that quoted it goes with it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from test_cli import as_json  # the CLI suite's helpers, same folder

from vault_engine.index.fakes import HashEmbedder
from vault_engine.vault import Vault

RunCli = Callable[..., Result]
SECRET = "The office door code is 4471 and changes every spring"


@pytest.fixture(autouse=True)
def fake_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every vault the CLI opens embeds with the bag-of-words fake (no model to load)."""
    model = HashEmbedder()
    monkeypatch.setattr(Vault, "embedder", lambda self: model)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), "-c", "user.name=Test", "-c", "user.email=test@example.com",
                           *args], check=True, capture_output=True, text=True)
    return done.stdout


def test_a_purged_memory_brought_back_by_git_is_reported_never_indexed(run_cli: RunCli, vault: Vault) -> None:
    git(vault.root, "init", "-q")
    added = as_json(run_cli("add", SECRET, "--json"))
    other = as_json(run_cli("add", "The office opens at eight", "--json"))
    git(vault.root, "add", "-A")
    git(vault.root, "commit", "-q", "-m", "memories")
    assert as_json(run_cli("forget", added["id"], "--permanent", "--json"))["action"] == "purged"
    git(vault.root, "checkout", "HEAD", "--", added["path"])  # an old copy comes back
    assert (vault.root / added["path"]).exists()

    synced = as_json(run_cli("sync", "--json"))
    [problem] = [line for line in synced["invalid"] if added["id"] in line]
    assert added["path"] in problem and "permanently forgotten" in problem
    hits = as_json(run_cli("search", "office door code", "--json"))["hits"]
    assert added["id"] not in [hit["id"] for hit in hits] and other["id"] in [hit["id"] for hit in hits]
    assert as_json(run_cli("sync", "--full", "--json"))["added"] == [other["id"]]  # a rebuild leaves it out too
    status = run_cli("status")
    assert added["id"] in status.stdout and "permanently forgotten" in status.stdout

    replay = as_json(run_cli("journal", "replay", "--apply", "--json"))
    assert [d for d in replay["differences"] if d["id"] == added["id"]] == []
    assert (vault.root / added["path"]).read_bytes() == git(vault.root, "show", f"HEAD:{added['path']}").encode()
    maintained = as_json(run_cli("maintain", "--json"))
    assert added["id"] not in str(maintained["actions"])

    again = as_json(run_cli("forget", added["id"], "--permanent", "--json"))  # asked again: the file goes
    assert again["action"] == "purged" and not (vault.root / added["path"]).exists()
    assert as_json(run_cli("sync", "--json"))["invalid"] == []


def test_a_purge_takes_the_vectors_from_the_embedding_cache(run_cli: RunCli) -> None:
    added = as_json(run_cli("add", SECRET, "--json"))
    assert as_json(run_cli("sync", "--json"))["pending"] == 0
    assert as_json(run_cli("cache", "status", "--json"))["vectors"] > 0
    run_cli("forget", added["id"], "--permanent")
    assert as_json(run_cli("cache", "status", "--json"))["vectors"] == 0  # nothing of it outlives the purge
    refused = run_cli("add", SECRET)
    assert refused.exit_code != 0 and "permanently forgotten" in refused.stderr
    back = as_json(run_cli("add", SECRET, "--allow-forgotten", "--json"))  # a person's deliberate re-add
    assert back["created"] is True and back["id"] != added["id"]
    status = as_json(run_cli("cache", "status", "--json"))
    assert status["vectors"] > 0  # the new memory's vectors, embedded afresh...
    synced = as_json(run_cli("sync", "--full", "--json"))
    assert synced["cached"] >= 1  # ...and cached again once made
    run_cli("forget", back["id"], "--permanent")
    assert as_json(run_cli("cache", "status", "--json"))["vectors"] == 0
