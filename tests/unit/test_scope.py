"""The scope rules of search and remember, and which folders are in a project (real git repositories)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.context.project import current_project
from vault_engine.errors import InvalidInput
from vault_engine.server.project import CurrentProject
from vault_engine.server.requests import SearchRequest
from vault_engine.store import create_vault
from vault_engine.vault.scope import holds_everywhere, placement, search_project

WEB = "github.com/acme/web"


def nobody() -> str | None:
    raise AssertionError("the current project is not asked for when the request decides")


def test_search_project() -> None:
    assert search_project(None, False, lambda: WEB) == WEB
    assert search_project(None, False, lambda: None) is None
    assert search_project("github.com/acme/api", False, nobody) == "github.com/acme/api"
    assert search_project(None, True, nobody) is None
    with pytest.raises(InvalidInput, match="every project"):
        search_project("github.com/acme/api", True, nobody)


def test_a_search_request_takes_a_project_or_all_projects() -> None:
    assert SearchRequest.parse({"query": "x", "all_projects": True}).all_projects is True
    assert SearchRequest.parse({"query": "x"}).all_projects is False
    with pytest.raises(InvalidInput, match="project and all_projects exclude each other"):
        SearchRequest.parse({"query": "x", "project": WEB, "all_projects": True})


@pytest.mark.parametrize(("scope", "project", "current", "kind", "klass", "placed"), [
    (None, None, WEB, "fact", None, ("project", WEB)),
    (None, None, None, "fact", None, ("global", None)),
    ("global", None, WEB, "fact", None, ("global", None)),
    ("project", None, WEB, "fact", None, ("project", WEB)),
    (None, "github.com/acme/api", WEB, "fact", None, ("project", "github.com/acme/api")),
    ("global", "github.com/acme/api", WEB, "fact", None, ("global", "github.com/acme/api")),
    (None, None, WEB, "core-profile", None, ("global", None)),
    (None, None, WEB, "collaboration-policy", "user-preference", ("global", None)),
    (None, None, WEB, "fact", "project-convention", ("project", WEB)),
    (None, "github.com/acme/api", WEB, "core-profile", None, ("project", "github.com/acme/api")),
])
def test_placement(scope: str | None, project: str | None, current: str | None, kind: str, klass: str | None,
                   placed: tuple[str, str | None]) -> None:
    assert placement(scope, project, current, type=kind, klass=klass) == placed  # type: ignore[arg-type]


def test_scope_project_needs_a_project_somewhere() -> None:
    with pytest.raises(InvalidInput, match="--project"):
        placement("project", None, None, type="fact", klass=None)


def test_memories_about_the_user_hold_everywhere() -> None:
    assert holds_everywhere("core-profile", None) and holds_everywhere("fact", "user-preference")
    assert not holds_everywhere("fact", "user-fact") and not holds_everywhere("procedure", None)


def test_a_checkout_is_a_project_a_plain_folder_is_not(tmp_path: Path, make_checkout: Callable[..., Path]) -> None:
    web = make_checkout(tmp_path / "web")
    (web / "src").mkdir()
    assert current_project(web / "src") == WEB
    plain = tmp_path / "plain"
    plain.mkdir()
    assert current_project(plain) is None
    bare = tmp_path / "bare"  # a repository without a remote or commits: keyed by its folder, still a project
    subprocess.run(["git", "init", "-q", str(bare)], check=True, capture_output=True)
    assert current_project(bare) == f"path:{bare.resolve().as_posix()}"


def test_the_vault_folder_is_no_project(tmp_path: Path, make_checkout: Callable[..., Path]) -> None:
    vault = tmp_path / "vault"
    create_vault(vault, git=False)
    make_checkout(vault, "https://github.com/me/notes.git")  # a vault kept in git
    assert current_project(vault / "memories", vault) is None
    assert current_project(vault / "memories") == "github.com/me/notes"  # without knowing the vault: a project

    web = make_checkout(tmp_path / "web")  # a vault inside a checkout: the checkout is a project, the vault not
    inner = web / "team-vault"
    create_vault(inner, git=False)
    assert current_project(web, inner) == WEB
    assert current_project(inner / "profile", inner) is None

    home = tmp_path / "home"  # a checkout inside the vault's folder is a project of its own
    create_vault(home, git=False)
    inside = make_checkout(home / "src" / "api", "https://github.com/acme/api.git")
    assert current_project(inside, home) == "github.com/acme/api"


def test_current_project_of_a_server(tmp_path: Path, make_checkout: Callable[..., Path]) -> None:
    web = make_checkout(tmp_path / "web")
    here = CurrentProject(web, vault_root=tmp_path / "vault")
    assert here.key() == WEB and here.work_key() == WEB
    named = CurrentProject(tmp_path, key="github.com/acme/api")
    assert named.key() == named.work_key() == "github.com/acme/api"
    outside = CurrentProject(tmp_path)
    assert outside.key() == f"path:{tmp_path.resolve().as_posix()}"  # context keeps its folder key
    assert outside.work_key() is None  # search covers every project, memories are global
    assert CurrentProject(tmp_path, key="").work_key() is None
