"""Without a watcher, every read answers from the files as they are now: a memory edited, deleted,
renamed or added by hand is seen by the next search, context, show and server request (real files,
real Tantivy, the real model)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from vault_engine.errors import MemoryNotFound
from vault_engine.index.change_feed import ChangeFeed
from vault_engine.retrieval.searcher import SearchQuery as Query
from vault_engine.server.requests import ContextRequest, ReadRequest, SearchRequest
from vault_engine.server.service import MemoryService
from vault_engine.vault import Vault

pytestmark = pytest.mark.slow

CAT = "The cat sat on the mat all afternoon."
OLD_WORDS = "cat sat on the mat all afternoon"
NEW_WORDS = "quarterly budget review moved to the boardroom"
PARAPHRASE = "A kitten rested upon a rug"  # the old text's meaning, sharing none of its words
OTHERS = [
    "Quarterly tax filings are due in April.",
    "Deploys to production happen on Tuesdays after the standup.",
    "The linter fails with error code E1102 when a module is not callable.",
]
NOTE = "# Harbour ferry timetable\n\nThe harbour ferry leaves pier seven every forty minutes.\n"


def _file(vault: Vault, memory_id: str) -> Path:
    return vault.root / vault.find(memory_id).path


def _edit(path: Path) -> None:
    """Rewrite a memory by hand, as an editor saving over it would (the words of its title, summary and body)."""
    text = path.read_text(encoding="utf-8")
    assert OLD_WORDS in text
    path.write_text(text.replace(OLD_WORDS, NEW_WORDS), encoding="utf-8")


def _meaning(hits: list[dict[str, object]], memory_id: str) -> float:
    """The best cosine with the query of ``memory_id`` among ``hits`` (0 when it is not there)."""
    for hit in hits:
        if hit["id"] == memory_id:
            similarity = hit.get("similarity") or {}
            assert isinstance(similarity, dict)
            return max((float(v) for v in similarity.values()), default=0.0)
    return 0.0


def _ids(hits: list[dict[str, object]]) -> list[object]:
    return [hit["id"] for hit in hits]


# ---------------------------------------------------------------- through the command line


@pytest.fixture
def cli_world(run_cli: Callable[..., Result], vault: Vault) -> dict[str, str]:
    ids = {}
    for name, text in (("cat", CAT), *((f"other{n}", t) for n, t in enumerate(OTHERS))):
        added = run_cli("add", text, "--json")
        assert added.exit_code == 0, added.output
        ids[name] = json.loads(added.output)["id"]
    before = json.loads(run_cli("search", PARAPHRASE, "--json").output)
    assert before["hits"][0]["id"] == ids["cat"]  # found by meaning before the edit
    return ids


def _search(run_cli: Callable[..., Result], query: str, *extra: str) -> list[dict[str, object]]:
    result = run_cli("search", query, "--json", *extra)
    assert result.exit_code == 0, result.output
    hits: list[dict[str, object]] = json.loads(result.output)["hits"]
    return hits


def test_cli_an_edit_by_hand_is_searched_at_once(run_cli: Callable[..., Result], vault: Vault,
                                                cli_world: dict[str, str]) -> None:
    memory_id = cli_world["cat"]
    _edit(_file(vault, memory_id))
    found = _search(run_cli, "budget review boardroom")
    assert found and found[0]["id"] == memory_id
    assert NEW_WORDS in str(found[0]["title"]).lower() + str(found[0]["summary"]).lower()
    # The old text answers neither by its words nor by its meaning (--weak: every candidate listed).
    old_words = _search(run_cli, OLD_WORDS, "--weak")
    assert all("fts" not in (hit.get("lanes") or {}) for hit in old_words if hit["id"] == memory_id)
    assert _meaning(_search(run_cli, PARAPHRASE, "--weak"), memory_id) < 0.3
    shown = run_cli("show", memory_id, "--depth", "2")
    assert shown.exit_code == 0 and NEW_WORDS in shown.output.lower()


def test_cli_a_file_deleted_by_hand_is_never_delivered(run_cli: Callable[..., Result], vault: Vault,
                                                      cli_world: dict[str, str]) -> None:
    memory_id = cli_world["cat"]
    _file(vault, memory_id).unlink()
    assert memory_id not in _ids(_search(run_cli, PARAPHRASE, "--weak"))
    assert memory_id not in _ids(_search(run_cli, "cat mat afternoon", "--weak"))
    context = run_cli("context", "--task", "where did the cat sit all afternoon", "--json")
    assert context.exit_code == 0, context.output
    assert memory_id not in context.output
    shown = run_cli("show", memory_id)
    assert shown.exit_code != 0 and "no memory with id" in shown.output


def test_cli_a_file_renamed_by_hand_is_found_under_its_new_path(run_cli: Callable[..., Result], vault: Vault,
                                                               cli_world: dict[str, str]) -> None:
    memory_id = cli_world["cat"]
    old = _file(vault, memory_id)
    new = vault.root / "memories" / "global" / "pets" / "where-the-cat-sits.md"
    new.parent.mkdir(parents=True)
    os.rename(old, new)
    hits = _search(run_cli, "cat mat afternoon")
    assert hits[0]["id"] == memory_id and hits[0]["path"] == "memories/global/pets/where-the-cat-sits.md"
    shown = run_cli("show", memory_id, "--json")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["path"] == "memories/global/pets/where-the-cat-sits.md"


def test_cli_a_file_added_by_hand_is_found_at_once(run_cli: Callable[..., Result], vault: Vault,
                                                  cli_world: dict[str, str]) -> None:
    (vault.root / "memories" / "global" / "ferry.md").write_text(NOTE, encoding="utf-8")
    hits = _search(run_cli, "when does the harbour ferry leave")
    assert hits and hits[0]["path"] == "memories/global/ferry.md"
    shown = run_cli("show", str(hits[0]["id"]), "--depth", "2")
    assert shown.exit_code == 0 and "pier seven" in shown.output


# ---------------------------------------------------------------- a long-lived service (HTTP and MCP)


@pytest.fixture(params=["walk", "kernel feed"])
def service(vault_of: Callable[[list[str]], tuple[Vault, list[str]]],
            request: pytest.FixtureRequest) -> tuple[MemoryService, list[str]]:
    vault, made = vault_of([CAT, *OTHERS])
    served = MemoryService(vault)  # no watcher: what `serve --no-watch` runs, and `serve` between events
    if request.param == "kernel feed":  # as `serve` and `mcp` read: a walk only after the kernel saw a change
        vault.change_feed = ChangeFeed.open(vault.root)
        assert vault.change_feed is not None
    first = served.search(SearchRequest(PARAPHRASE))
    assert first["hits"][0]["id"] == made[0]  # the searcher is open and warm before any edit
    yield served, made
    served.close()


def test_service_sees_an_edit_between_two_requests(service: tuple[MemoryService, list[str]]) -> None:
    served, made = service
    _edit(_file(served.vault, made[0]))
    found = served.search(SearchRequest("budget review boardroom"))["hits"]
    assert found and found[0]["id"] == made[0]
    assert _meaning(served.search(SearchRequest(PARAPHRASE, weak=True))["hits"], made[0]) < 0.3
    assert all("fts" not in hit["lanes"] for hit in served.search(SearchRequest(OLD_WORDS, weak=True))["hits"]
               if hit["id"] == made[0])
    assert NEW_WORDS in served.read(ReadRequest(made[0], depth=2))["body"].lower()


def test_service_never_delivers_a_file_deleted_between_two_requests(
        service: tuple[MemoryService, list[str]]) -> None:
    served, made = service
    served.context(ContextRequest("where did the cat sit all afternoon", record=False))
    _file(served.vault, made[0]).unlink()
    assert made[0] not in _ids(served.search(SearchRequest(PARAPHRASE, weak=True))["hits"])
    assert made[0] not in json.dumps(served.context(ContextRequest("where did the cat sit all afternoon",
                                                                   record=False)))
    with pytest.raises(MemoryNotFound):
        served.read(ReadRequest(made[0], depth=0))


def test_service_finds_files_renamed_and_added_between_two_requests(
        service: tuple[MemoryService, list[str]]) -> None:
    served, made = service
    root = served.vault.root
    old = _file(served.vault, made[0])
    os.replace(old, old.with_name("cat-on-the-mat.md"))
    (root / "memories" / "global" / "ferry.md").write_text(NOTE, encoding="utf-8")
    hits = served.search(SearchRequest("cat mat afternoon"))["hits"]
    assert hits[0]["id"] == made[0] and hits[0]["path"].endswith("/cat-on-the-mat.md")
    assert served.read(ReadRequest(made[0], depth=0))["path"].endswith("/cat-on-the-mat.md")
    ferry = served.search(SearchRequest("when does the harbour ferry leave"))["hits"]
    assert ferry and ferry[0]["path"] == "memories/global/ferry.md"


def test_reading_an_unchanged_vault_changes_no_file(vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    vault, _made = vault_of([CAT, *OTHERS])
    state = vault.root / ".memvault"
    indexes = [state / "catalog.sqlite", state / "vectors.sqlite", state / "fulltext" / "meta.json"]
    reader = Vault(vault.root)
    reader.search(Query(PARAPHRASE))  # the files just written are checked once (their stat was recorded in their tick)
    files = {p: p.read_bytes() for p in vault.root.rglob("*.md") if ".memvault" not in p.parts}
    stamps = {p: p.stat().st_mtime_ns for p in indexes}
    for _ in range(3):
        assert reader.search(Query(PARAPHRASE)).hits
    assert {p: p.read_bytes() for p in vault.root.rglob("*.md") if ".memvault" not in p.parts} == files
    assert {p: p.stat().st_mtime_ns for p in indexes} == stamps
