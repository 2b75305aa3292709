"""No secret reaches the disk: every kind of secret of the corpus (``stress/secret_corpus.py``)
through every way text enters a vault, then the whole vault folder read as bytes: memory files,
file and folder names, ``INDEX.md``, the journal, session buffers and every file under
``.memvault/`` (the SQLite catalog and vectors, the Tantivy segments) must hold none of it.

The ways in (``stress/secret_paths.py``, the same family ``python -m stress`` runs): the
command line's add (every field), import (every key, unknown ones too), ingest (episodes and
buffers left open; a session named like a secret refused), ingest-doc (a secret in the title, so
in the slug), remember-output (with sessions) and context (the task's words are journalled), the
HTTP API, the MCP tools, and an agent's transcript captured.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stress import secret_paths as family  # the paths, also run by `python -m stress`
from vault_engine.vault import Vault

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", list(family.PATHS))
def test_no_kind_of_secret_is_stored_through_any_path(path: str, tmp_path: Path) -> None:
    vault = family.open_vault(tmp_path / "vault")
    reached = family.PATHS[path](vault, tmp_path)
    assert family.finish(vault, reached) == []


def test_the_family_counts_a_kind_found_in_a_name_or_in_the_bytes(tmp_path: Path) -> None:
    """The check itself: a secret left in a file, or spelt into a file name, is found."""
    vault: Vault = family.open_vault(tmp_path / "vault")
    secret = family.KINDS["gitlab token"][0]
    for folder in (vault.root / "memories" / "global", vault.root / ".memvault"):
        folder.mkdir(parents=True, exist_ok=True)
    (vault.root / "memories" / "global" / f"note-{secret}.md").write_text("---\nid: m-x\n---\n", encoding="utf-8")
    (vault.root / ".memvault" / "left.bin").write_bytes(b"\x00" + family.KINDS["npm token"][0].encode())
    assert family.kinds_of(family.leaks(vault.root)) == ["gitlab token", "npm token"]
