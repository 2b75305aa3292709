"""Projects are walls: what one repository remembers, reads and folds never crosses into another's.

Each test works in real git checkouts (the project is the one of the working folder, as for a person
typing ``memvault`` in a repository) and runs the CLI through click's CliRunner.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from test_cli import as_json, assert_one_error  # the CLI suite's helpers, same folder

from vault_engine.index.fakes import HashEmbedder
from vault_engine.vault import Vault

RunCli = Callable[..., Result]
LINT = "Run make lint before every push"
PROJECT_A, PROJECT_B = "github.com/acme/proja", "github.com/acme/projb"


@pytest.fixture(autouse=True)
def fake_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every vault the CLI opens embeds with the bag-of-words fake (no model to load)."""
    model = HashEmbedder()
    monkeypatch.setattr(Vault, "embedder", lambda self: model)


@pytest.fixture
def projects(tmp_path: Path, make_checkout: Callable[..., Path]) -> dict[str, Path]:
    """Two checkouts: project A and project B."""
    return {
        "a": make_checkout(tmp_path / "proja", origin="https://github.com/acme/proja.git"),
        "b": make_checkout(tmp_path / "projb", origin="https://github.com/acme/projb.git"),
    }


def test_the_same_text_in_another_project_is_a_memory_of_its_own(
        run_cli: RunCli, projects: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(projects["a"])
    first = as_json(run_cli("add", LINT, "--json"))
    assert first["project"] == PROJECT_A
    monkeypatch.chdir(projects["b"])
    second = as_json(run_cli("add", LINT, "--json"))
    assert second["created"] is True and second["id"] != first["id"]
    assert second["project"] == PROJECT_B and "proja" not in second["path"]
    hits = as_json(run_cli("search", "make lint before every push", "--json"))["hits"]
    assert [hit["id"] for hit in hits] == [second["id"]]
    shown = as_json(run_cli("show", first["id"], "--json", "--all-projects"))
    assert shown["metadata"]["proof_count"] == 1  # A's memory gained no evidence from B
    again = as_json(run_cli("add", LINT, "--json"))  # the same text twice within B folds, as ever
    assert (again["created"], again["id"]) == (False, second["id"])


def test_a_project_folds_into_a_global_memory_never_the_reverse(
        run_cli: RunCli, projects: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(projects["a"])
    everywhere = as_json(run_cli("add", "Commit messages say why, not what", "--scope", "global", "--json"))
    folded = as_json(run_cli("add", "Commit messages say why, not what", "--json"))
    assert (folded["created"], folded["id"], folded["scope"]) == (False, everywhere["id"], "global")
    own = as_json(run_cli("add", "Tabs, not spaces, in the Makefile", "--json"))
    widened = as_json(run_cli("add", "Tabs, not spaces, in the Makefile", "--scope", "global", "--json"))
    assert widened["created"] is True and widened["id"] != own["id"] and widened["scope"] == "global"


def test_import_folds_only_within_a_project(run_cli: RunCli, tmp_path: Path) -> None:
    lines = tmp_path / "records.jsonl"
    lines.write_text(
        f'{{"body": "{LINT}", "project": "{PROJECT_A}"}}\n'
        f'{{"body": "{LINT}", "project": "{PROJECT_B}"}}\n'
        f'{{"body": "{LINT}", "project": "{PROJECT_B}", "tags": ["lint"]}}\n', encoding="utf-8")
    result = as_json(run_cli("import", str(lines), "--json"))
    assert len(result["imported"]) == 2 and len(result["merged"]) == 1
    assert result["merged"][0] == result["imported"][1]  # B's second record folded into B's, not A's


def test_show_by_id_stays_within_the_project(
        run_cli: RunCli, projects: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(projects["a"])
    secret = as_json(run_cli("add", "The staging database password rotates on Fridays", "--json"))
    monkeypatch.chdir(projects["b"])
    line = assert_one_error(run_cli("show", secret["id"]), secret["id"], PROJECT_B)
    assert "proja" not in line and "memories/" not in line
    assert_one_error(run_cli("show", secret["id"], "--project", PROJECT_B), PROJECT_B)
    assert as_json(run_cli("show", secret["id"], "--all-projects", "--json"))["id"] == secret["id"]
    assert as_json(run_cli("show", secret["id"], "--project", PROJECT_A, "--json"))["id"] == secret["id"]
    shared = as_json(run_cli("add", "Reviews need one approval", "--scope", "global", "--json"))
    assert as_json(run_cli("show", shared["id"], "--json"))["id"] == shared["id"]  # global: seen everywhere
