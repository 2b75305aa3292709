"""A large import followed at once by ``memvault sync``: the sync takes over the background fill
of the vectors that the import started, instead of failing because that fill holds the indexes.

Real files, real tantivy, the real model, real processes: a chat export the size of a LongMemEval
haystack (about 500 turns, many of them thousands of characters long, built here so that the test
never depends on a dataset), imported the way a user's chat export looks (each session its own chat
log, both roles, no session ids), then ``memvault sync``.
"""

from __future__ import annotations

import json
import os
import random
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

WORDS = ("deploy pipeline cache database migration review release schedule budget vendor contract meeting "
         "garden recipe travel flight hotel museum concert guitar lesson marathon training doctor insurance "
         "apartment lease mortgage savings invoice customer support ticket warehouse shipment inventory "
         "laptop keyboard monitor printer backup password network router camera lens photo album "
         "birthday wedding anniversary gift dinner restaurant coffee tea bakery market bicycle commute").split()


def _chat_export(sessions: int = 40, turns: int = 12, seed: int = 7) -> list[dict[str, Any]]:
    """A chat export the size of a LongMemEval haystack's (about 500 turns, over 500,000 characters; the
    assistant's turns a few thousand characters each): one record per turn, each session a chat log of
    its own, both roles, named by its place."""
    rng = random.Random(seed)
    records = []
    for number in range(sessions):
        date = f"2023/{1 + number % 12:02d}/{1 + number % 28:02d}"
        for place in range(turns):
            role = "user" if place % 2 == 0 else "assistant"
            words = rng.randint(30, 60) if role == "user" else rng.randint(200, 320)
            sentences = [" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."
                         for _ in range(max(1, words // 12))]
            records.append({"body": f"[{date}] {role}: {' '.join(sentences)}", "tags": [role],
                            "source": f"conversation:chat-{number}#{place}"})
    return records


def _memvault(vault: Path, *args: str, env: dict[str, str] | None = None,
              timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_a_sync_right_after_a_large_import_takes_over_the_background_fill(
        make_vault: Callable[..., Vault], tmp_path: Path) -> None:
    records = _chat_export()
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
    report = json.loads(synced.stdout)
    assert report["pending"] == 0  # every vector is there when it returns
    assert report["embedded"] > 0  # it took the fill over: what was left was embedded here, not waited for

    turn = next(r for r in records if r["tags"] == ["user"] and len(r["body"]) > 400)
    words = " ".join(turn["body"].split("] ", 1)[1].split()[2:14])  # a dozen of its words
    found = _memvault(root, "search", words, "--json", "--limit", "5")
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["vectors"] == {"built": 1.0, "pending": 0}
    sources = [Vault(root).find(hit["id"]).memory.source for hit in answer["hits"]]
    assert turn["source"] in sources
