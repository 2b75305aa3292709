"""Search with the real offline model and the real indexes, through the API, the CLI and a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.store import STATE_DIR
from vault_engine.vault import Vault

pytestmark = pytest.mark.slow

FACTS = [
    "The cat sat on the mat all afternoon.",
    "Quarterly tax filings are due in April.",
    "Deploys to production happen on Tuesdays after the standup.",
    "The linter fails with error code E1102 when a module is not callable.",
    "Our staging database is Postgres 16 with the pgvector extension.",
    "Python code is formatted with ruff format, line length 120.",
    "The mobile app uses React Native with Expo.",
    "Invoices are generated on the first working day of the month.",
]


@pytest.fixture
def world(vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> tuple[Vault, list[str]]:
    return vault_of(FACTS)


def test_a_paraphrase_with_no_shared_words_is_found_by_the_vector_lane(world: tuple[Vault, list[str]]) -> None:
    vault, made = world
    hit = vault.search(SearchQuery("A kitten rested upon a rug")).hits[0]
    assert hit.id == made[0]
    assert "fts" not in hit.lanes and hit.why[0] == "full text: no match"
    assert hit.lanes.get("summary") == 1 or hit.lanes.get("body") == 1


def test_a_rare_exact_token_is_found_by_the_bm25_lane(world: tuple[Vault, list[str]]) -> None:
    vault, made = world
    hit = vault.search(SearchQuery("E1102")).hits[0]
    assert hit.id == made[3] and hit.lanes["fts"] == 1
    assert "E1102" in hit.snippet or "E1102" in hit.summary


def test_hybrid_ranks_the_right_memory_first_for_a_natural_question(world: tuple[Vault, list[str]]) -> None:
    vault, made = world
    assert vault.search(SearchQuery("how should I format python files?")).hits[0].id == made[5]
    assert vault.search(SearchQuery("which framework is the phone app built with")).hits[0].id == made[6]
    assert vault.search(SearchQuery("what database does staging use")).hits[0].id == made[4]


def test_cli_add_then_search_without_a_sync_step(run_cli: Callable[..., Result]) -> None:
    added = run_cli("add", "Backups of the billing database run nightly at 02:00 UTC.", "--json")
    assert added.exit_code == 0, added.output
    memory_id = json.loads(added.output)["id"]
    found = run_cli("search", "when are billing backups taken", "--json")
    assert found.exit_code == 0, found.output
    data = json.loads(found.output)
    assert data["query"] == "when are billing backups taken"
    assert data["hits"][0]["id"] == memory_id
    for key in ("id", "title", "path", "score", "summary", "trigger", "type", "scope", "project", "trust",
                "lifecycle", "why"):
        assert key in data["hits"][0]
    explained = run_cli("search", "billing backups", "--explain")
    assert explained.exit_code == 0
    assert memory_id in explained.output and "- full text: rank 1" in explained.output
    assert "- boosts: recency" in explained.output


def test_cli_external_is_labelled(run_cli: Callable[..., Result]) -> None:
    run_cli("add", "A forum post claims the SDK leaks sockets.", "--trust", "external")
    hidden = run_cli("search", "SDK leaks sockets")
    assert "[external]" not in hidden.output
    shown = run_cli("search", "SDK leaks sockets", "--trust", "external")
    assert shown.exit_code == 0 and "[external]" in shown.output


def test_a_deleted_state_folder_is_rebuilt_by_the_next_search(
    vault: Vault, memvault_proc: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    added = memvault_proc("--vault", str(vault.root), "add", "Release notes live in CHANGELOG.md.")
    assert added.returncode == 0, added.stderr
    shutil.rmtree(vault.root / STATE_DIR)
    found = memvault_proc("--vault", str(vault.root), "search", "where are the release notes")
    assert found.returncode == 0, found.stderr
    assert "built the search indexes" in found.stderr
    assert added.stdout.strip() in found.stdout
    assert "Traceback" not in found.stderr
    (vault.root / STATE_DIR / "fulltext" / "VERSION").write_text("something else\n")
    again = memvault_proc("--vault", str(vault.root), "search", "release notes")
    assert again.returncode == 0 and "rebuilt" in again.stderr and added.stdout.strip() in again.stdout


def test_bad_search_input_is_one_line(run_cli: Callable[..., Result]) -> None:
    empty = run_cli("search", "  ")
    assert empty.exit_code != 0 and empty.output.count("\n") == 1 and "needs a query" in empty.output
    bad_type = run_cli("search", "x", "--type", "nonsense")
    assert bad_type.exit_code == 2


CHAT = [  # imported turn by turn: the role as a tag, the turn's place as its source
    ("user", "Can you suggest some resources on night photography?"),
    ("assistant", "Sure! For night photography, try a photography workshop: many cities run weekend photography "
                  "workshops on night photography, long exposures and star trails, and attending one is the "
                  "fastest way to learn."),
    ("user", "Thanks, that helps! By the way, I went to a three-day photography workshop in a nearby city "
             "yesterday and learned a lot about long exposures. What are dark frames?"),
    ("assistant", "Dark frames are exposures taken with the lens cap on, at the same settings, so software can "
                  "subtract the sensor noise. For landscapes I recommend a wide-angle lens such as a 16-35mm zoom."),
    ("user", "Which lens would work for landscapes on my next trip? I want to photograph landscapes and "
             "mountains."),
]


def test_the_person_of_a_question_names_the_chat_role_that_said_it(run_cli: Callable[..., Result],
                                                                   tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"  # a chat export, as chat tools write one
    log.write_text("".join(json.dumps({"role": role, "content": text, "ts": f"2023-05-20T10:0{n}:00Z"}) + "\n"
                           for n, (role, text) in enumerate(CHAT)), encoding="utf-8")
    imported = run_cli("import", str(log))
    assert imported.exit_code == 0, imported.output

    def first(question: str) -> str:
        found = run_cli("search", question, "--json")
        assert found.exit_code == 0, found.output
        hit = json.loads(found.output)["hits"][0]
        return f"{hit['title']} {hit['summary']}"

    # What the user said answers "when did I ...", though the assistant's advice has more of its words
    # (without the roles, the advice comes first) ...
    assert "Thanks, that helps!" in first("When did I attend the photography workshop?")
    # ... and what the assistant said answers "which ... did you recommend", though the user's question
    # has more of them.
    assert "Dark frames are exposures" in first("Which lens did you recommend for landscapes?")
