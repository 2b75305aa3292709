"""Project identity against real git repositories (``git init``, commits, linked worktrees)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.context.project import HOW_COMMIT, HOW_FOLDER, HOW_REMOTE, identify

pytestmark = pytest.mark.slow  # git is a test requirement: `memvault init` runs it too

Git = Callable[..., str]


@pytest.fixture
def git(tmp_path_factory: pytest.TempPathFactory) -> Git:
    """Run git in a folder with no user or system config, and a fixed author."""
    home = tmp_path_factory.mktemp("git-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", HOME=str(home),
               GIT_AUTHOR_NAME="x", GIT_AUTHOR_EMAIL="x@example.invalid",
               GIT_COMMITTER_NAME="x", GIT_COMMITTER_EMAIL="x@example.invalid")

    def run(cwd: Path, *args: str) -> str:
        done = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=30, check=True)
        return done.stdout.strip()

    return run


def make_repo(git: Git, root: Path, *, commit: str | None = "first", origin: str | None = None) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q")
    if origin is not None:
        git(root, "remote", "add", "origin", origin)
    if commit is not None:
        (root / "README.md").write_text(commit + "\n")
        git(root, "add", "README.md")
        git(root, "commit", "-q", "-m", commit)
    return root


def test_origin_remote_gives_the_key(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "api", origin="git@github.com:Acme/API.git")
    found = identify(repo)
    assert (found.key, found.how, found.root, found.detail) == (
        "github.com/acme/api", HOW_REMOTE, repo.resolve(), "git@github.com:Acme/API.git")


def test_origin_remote_works_without_commits(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "api", commit=None, origin="https://github.com/acme/api.git")
    assert identify(repo).key == "github.com/acme/api"


def test_local_path_remote(git: Git, tmp_path: Path) -> None:
    upstream = tmp_path / "srv" / "x.git"
    upstream.mkdir(parents=True)
    git(upstream, "init", "-q", "--bare")
    repo = make_repo(git, tmp_path / "x", origin=str(upstream) + "/")
    assert identify(repo).key == f"file:{upstream.as_posix()}"


def test_first_commit_without_remote(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "repo")
    root_commit = git(repo, "rev-list", "--max-parents=0", "HEAD")
    (repo / "more.txt").write_text("more\n")
    git(repo, "add", "more.txt")
    git(repo, "commit", "-q", "-m", "second")
    found = identify(repo)
    assert (found.key, found.how, found.root, found.detail) == (
        f"git:{root_commit[:12]}", HOW_COMMIT, repo.resolve(), root_commit)


def test_linked_worktree_shares_the_key(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "repo")
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    (tmp_path / "wt" / "sub").mkdir()
    main, linked = identify(repo), identify(tmp_path / "wt" / "sub")
    assert (tmp_path / "wt" / ".git").is_file()
    assert main.key == linked.key and main.how == linked.how == HOW_COMMIT
    assert linked.root == (tmp_path / "wt").resolve()


def test_linked_worktree_shares_the_origin_key(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "repo", origin="https://github.com/acme/api")
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"))
    assert identify(tmp_path / "wt").key == identify(repo).key == "github.com/acme/api"


def test_different_repositories_get_different_keys(git: Git, tmp_path: Path) -> None:
    one = make_repo(git, tmp_path / "one", commit="same message")
    two = make_repo(git, tmp_path / "two", commit="another message")
    assert identify(one).how == identify(two).how == HOW_COMMIT
    assert identify(one).key != identify(two).key


def test_empty_repository_is_the_folder(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "empty", commit=None)
    (repo / "src").mkdir()
    found = identify(repo / "src")
    assert (found.key, found.how, found.root) == (f"path:{repo.resolve().as_posix()}", HOW_FOLDER, repo.resolve())


def test_not_a_repository_is_the_folder(tmp_path: Path) -> None:
    found = identify(tmp_path)
    assert (found.key, found.how, found.root) == (f"path:{tmp_path.resolve().as_posix()}", HOW_FOLDER, None)


def test_subfolder_has_the_root_key(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "repo")
    deep = repo / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "file.py").write_text("")
    assert identify(deep) == identify(deep / "file.py") == identify(repo)


def test_nested_repository_is_its_own_project(git: Git, tmp_path: Path) -> None:
    outer = make_repo(git, tmp_path / "outer", commit="outer")
    inner = make_repo(git, outer / "vendor" / "inner", commit="inner")
    assert identify(inner).root == inner.resolve()
    assert identify(inner).key != identify(outer).key


def test_garbage_git_file_in_a_repository_does_not_raise(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "repo")
    broken = repo / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: ../nowhere\n")
    found = identify(broken)
    assert (found.key, found.how) == (f"path:{broken.resolve().as_posix()}", HOW_FOLDER)


def test_without_git_installed_the_commit_rule_is_skipped(git: Git, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with_origin = make_repo(git, tmp_path / "a", origin="git@github.com:acme/api.git")
    without = make_repo(git, tmp_path / "b")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert identify(with_origin).key == "github.com/acme/api"
    assert identify(without).key == f"path:{without.resolve().as_posix()}"


def test_cli_json_in_process(git: Git, tmp_path: Path) -> None:
    repo = make_repo(git, tmp_path / "api", origin="https://bob:s3cret@GitHub.com/Acme/API.git/")
    result = CliRunner().invoke(cli, ["project", "--json", str(repo)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"key": "github.com/acme/api", "how": HOW_REMOTE,
                                         "detail": "https://GitHub.com/Acme/API.git/", "root": str(repo.resolve())}


def test_cli_subprocess_defaults_to_the_current_folder(
    git: Git, tmp_path: Path, memvault_proc: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    repo = make_repo(git, tmp_path / "repo")
    (repo / "sub").mkdir()
    done = memvault_proc("project", cwd=repo / "sub")
    assert done.returncode == 0, done.stderr
    root_commit = git(repo, "rev-list", "--max-parents=0", "HEAD")
    assert done.stdout.strip() == f"git:{root_commit[:12]}  (first commit: {root_commit})"
    done = memvault_proc("--json", "project", cwd=tmp_path)
    assert json.loads(done.stdout)["how"] == HOW_FOLDER
