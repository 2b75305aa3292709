"""A large import followed at once by ``memvault sync``: the sync takes over the background fill
of the vectors that the import started, instead of failing because that fill holds the indexes.

Real files, real tantivy, the real model, real processes: a LongMemEval haystack (about 500 chat
turns, many of them thousands of characters long) imported the way a user's chat export looks
(each session its own chat log, both roles, no session ids), then ``memvault sync``.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from vault_engine.locks import WriterLock
from vault_engine.store import STATE_DIR
from vault_engine.vault import Vault

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[3] / "shared" / "bench" / "longmemeval_s_dev.json.gz"
QUESTION = "gpt4_18c2b244"  # the pool's longest haystack: 495 turns, 528,000 characters


def _haystack() -> dict[str, Any]:
    if not DATA.is_file():
        pytest.skip(f"the LongMemEval development pool is not at {DATA}")
    with gzip.open(DATA, "rt", encoding="utf-8") as handle:
        return next(item for item in json.load(handle) if item["question_id"] == QUESTION)


def _chat_export(item: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per turn, each session a chat log of its own (named by its place, never its id)."""
    sessions = sorted(zip(item["haystack_dates"], item["haystack_sessions"], strict=True), key=lambda p: p[0])
    records = []
    for number, (date, turns) in enumerate(sessions):
        for place, turn in enumerate(turns):
            text = str(turn.get("content", "")).strip()
            if text:
                records.append({"body": f"[{date}] {turn['role']}: {text}", "tags": [turn["role"]],
                                "source": f"conversation:chat-{number}#{place}"})
    return records


def _memvault(vault: Path, *args: str, env: dict[str, str] | None = None,
              timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_a_sync_right_after_a_large_import_takes_over_the_background_fill(
        make_vault: Callable[..., Vault], tmp_path: Path) -> None:
    item = _haystack()
    records = _chat_export(item)
    assert len(records) > 450 and sum(len(r["body"]) for r in records) > 500_000
    export = tmp_path / "chats.jsonl"
    export.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    root = make_vault().root
    # The background fill the import starts gets one core, as on a machine busy with other work
    # (where this was met): computing the vectors of 500 long turns holds the indexes for minutes.
    imported = _memvault(root, "import", str(export), env={**os.environ, "MEMVAULT_EMBEDDING_THREADS": "1"})
    assert imported.returncode == 0, imported.stderr
    assert "vectors are being computed in the background" in imported.stderr
    lock = WriterLock(root / STATE_DIR / "index.lock", 0)
    deadline = time.monotonic() + 60
    while not lock.held() and time.monotonic() < deadline:  # the background fill has the indexes
        time.sleep(0.05)
    assert lock.held(), "no background fill started"

    synced = _memvault(root, "sync", "--json")
    assert synced.returncode == 0, synced.stderr
    assert "busy" not in synced.stderr
    assert json.loads(synced.stdout)["pending"] == 0  # every vector is there when it returns

    turn = next(r for r in records if r["tags"] == ["user"] and len(r["body"]) > 400)
    words = " ".join(turn["body"].split("] ", 1)[1].split()[2:14])  # a dozen of its words
    found = _memvault(root, "search", words, "--json", "--limit", "5")
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["vectors"] == {"built": 1.0, "pending": 0}
    sources = [Vault(root).find(hit["id"]).memory.source for hit in answer["hits"]]
    assert turn["source"] in sources
