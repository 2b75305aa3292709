"""The redaction boundary: what every way in passes through before anything is written.

- every memory file goes through ``store.write`` / ``store.write_many``: each text field redacted;
- every file name made from text goes through ``store.slugify`` / ``store.project_folder``;
- every journal event goes through ``Journal.append``: each payload string redacted;
- session names and the few state files named after caller text hold no secret;
- an agent's tool call is redacted before it is cut to its one line.

End to end, every kind through every command, server and capture: ``tests/integration/test_secrets_everywhere.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine import store
from vault_engine.agents import hooks
from vault_engine.agents.messages import TOOL_INPUT_CHARS, condensed_call
from vault_engine.agents.session import AgentSession, session_name
from vault_engine.config import environment
from vault_engine.errors import InvalidInput
from vault_engine.format.memory import Memory
from vault_engine.format.redact import REDACTED
from vault_engine.ingest.outputs import session_file
from vault_engine.ingest.transcripts import check_session
from vault_engine.journal import Event, Journal
from vault_engine.vault import Vault

TOKEN = "ghp_Gd0aUfwxunGxFJ5WHlfXDt4tmkb7oV6Yx8PW"
GITLAB = "glpat-hs3HDj2Tn3SkV7WEP_Cx"
AGE = "AGE-SECRET-KEY-1" + ("QZ3J8XK2M9PL4RT7VW6YN5HC0FGD2BSQE8UJ4KA7XM3NP9RL6TV2W" * 2)[:58]


def nowhere(root: Path, *secrets: str) -> None:
    """No file under ``root`` holds a secret, in its name or its bytes."""
    for path in root.rglob("*"):
        for secret in secrets:
            assert secret.lower() not in path.name.lower()
            assert not path.is_file() or secret.encode() not in path.read_bytes(), path


def test_file_names_made_from_text_hold_no_secret() -> None:
    assert TOKEN.lower() not in store.slugify(f"Rotate {TOKEN} now", 200)
    assert "redacted" in store.slugify(f"Rotate {GITLAB}")
    assert TOKEN.lower() not in store.project_folder(f"github.com/acme/{TOKEN}")
    assert store.slugify("Deploy notes") == "deploy-notes" and store.project_folder("github.com/acme/api") == \
        "github.com-acme-api"


def test_a_memory_is_written_with_every_field_redacted_and_reads_back(make_vault: Callable[..., Vault]) -> None:
    root = make_vault().root
    memory = Memory(id="m-01j00000000000000000000001", title=f"Token {TOKEN}", type="fact", body=f"Use {TOKEN}.\n",
                    summary=f"api_key = {GITLAB}", trigger=TOKEN, tags=(TOKEN,), source=f"document:{TOKEN}",
                    paths=(f"src/{TOKEN}/**",), extra={"notes": f"password: hunter2{TOKEN}"})
    rel = store.choose_path(root, store.folder_for(memory), memory)
    assert store.write(root, rel, memory)
    written = store.read_entry(root, rel).memory
    assert written.title == f"Token {REDACTED}" and written.trigger == REDACTED and written.tags == (REDACTED,)
    nowhere(root, TOKEN, GITLAB)


def test_a_file_written_by_hand_with_a_secret_is_redacted_when_memvault_next_writes_it(
        make_vault: Callable[..., Vault]) -> None:
    rel = "memories/global/by-hand.md"
    root = make_vault({rel: f"---\nid: m-byhand\ntitle: By hand\ntype: fact\n---\nThe token is {TOKEN}.\n"}).root
    entry = store.read_entry(root, rel)
    assert store.write(root, rel, entry.memory.replace(summary="edited"), entry.parsed)
    nowhere(root, TOKEN)


def test_many_memories_written_at_once_are_redacted(make_vault: Callable[..., Vault]) -> None:
    root = make_vault().root
    files = [(f"memories/global/m{n}.md", Memory(id=f"m-many{n}", title="Keys", type="fact",
                                                 body=f"key {n}: {TOKEN}\n"), None) for n in range(3)]
    store.write_many(root, files)
    nowhere(root, TOKEN)


def test_every_journal_event_is_redacted_at_any_depth_and_keeps_its_id(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal")
    event = Event("application", "m-x", {"task": f"deploy with {TOKEN}", "ids": ["m-x"],
                                         "nested": {"notes": [f"export SECRET_TOKEN={GITLAB}"]}, "count": 2},
                  id="e-fixed", ts="2026-12-01T08:00:00Z")
    [written] = journal.append([event])
    assert written.id == "e-fixed" and written.payload["count"] == 2 and written.payload["ids"] == ["m-x"]
    assert written.payload["task"] == f"deploy with {REDACTED}"
    assert journal.append([event]) == []  # the same id again: nothing written twice
    nowhere(tmp_path, TOKEN, GITLAB)
    assert [e.payload for e in journal.events()] == [written.payload]


def test_a_session_named_like_a_secret_is_refused_and_state_files_are_named_by_hash(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="looks like a secret") as refused:
        check_session(TOKEN)
    assert TOKEN not in str(refused.value)
    assert check_session("claude-code-4f9a2c1e") == "claude-code-4f9a2c1e"
    assert TOKEN not in session_file(tmp_path, TOKEN).name and session_file(tmp_path, "s-1").name == "s-1.json"
    assert TOKEN not in session_name("codex", TOKEN) and session_name("codex", "abc-1") == "codex-abc-1"
    state = AgentSession("claude-code-x", project=f"github.com/acme/{TOKEN}", captured={TOKEN})
    state.save(tmp_path)
    nowhere(tmp_path, TOKEN)


def test_an_imported_record_whose_id_is_a_secret_is_refused(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    secret_id = "dop_v1_" + "3f624c9f94e15c6cbad83cd4865542b78d16ed0cbdaa0c7a2cdd2ed7dbd1f0e3"
    result = vault.import_jsonl([json.dumps({"id": secret_id, "body": "A note."})])
    assert result.added == [] and "looks like a secret" in str(result.errors[0])
    nowhere(vault.root, secret_id)


def test_a_tool_call_is_redacted_before_it_is_cut_to_one_line() -> None:
    command = "x" * (TOOL_INPUT_CHARS - 30) + f" echo {AGE} > key.txt"  # the cut falls inside the key
    shown = condensed_call("Bash", {"command": command})
    assert AGE[:20] not in shown and AGE[-20:] not in shown and REDACTED in shown


def test_the_hooks_log_holds_no_secret(make_vault: Callable[..., Vault]) -> None:
    root = make_vault().root
    hooks.log(root, environment({}), f"error: invalid session name '{TOKEN}'")
    assert REDACTED in (root / hooks.LOG_FILE).read_text(encoding="utf-8")
    nowhere(root, TOKEN)
