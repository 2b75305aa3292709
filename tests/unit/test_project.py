"""Project identity without git: remote URL normalisation and reading git's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.context.project import HOW_FOLDER, HOW_REMOTE, identify, normalise_remote

GITHUB = "github.com/acme/api"


@pytest.mark.parametrize(
    ("url", "key"),
    [
        # the same GitHub repository, every way it can be spelled
        ("git@github.com:acme/api.git", GITHUB),
        ("git@github.com:Acme/API.git", GITHUB),
        ("git@GitHub.COM:acme/api", GITHUB),
        ("https://github.com/acme/api", GITHUB),
        ("https://github.com/acme/api.git", GITHUB),
        ("https://github.com/acme/api.git/", GITHUB),
        ("https://github.com/acme/api/", GITHUB),
        ("https://github.com//acme//api", GITHUB),
        ("https://user:token@github.com/acme/api.git/", GITHUB),
        ("https://ghp_abcdef@github.com/acme/api", GITHUB),
        ("http://github.com:80/acme/api", GITHUB),
        ("ssh://git@github.com/acme/api.git", GITHUB),
        ("ssh://git@github.com:22/acme/api", GITHUB),
        ("ssh://git@ssh.github.com:443/acme/api.git", GITHUB),
        ("git+ssh://git@github.com/acme/api.git", GITHUB),
        ("git://github.com/acme/api.git", GITHUB),
        ("https://www.github.com/acme/api", GITHUB),
        ("  git@github.com:acme/api.git\n", GITHUB),
        # GitLab subgroups keep every level
        ("git@gitlab.com:a/b/c.git", "gitlab.com/a/b/c"),
        ("https://gitlab.com/A/B/C/", "gitlab.com/a/b/c"),
        ("ssh://git@altssh.gitlab.com:443/a/b/c.git", "gitlab.com/a/b/c"),
        # Bitbucket and Azure DevOps
        ("git@bitbucket.org:Team/Repo.git", "bitbucket.org/team/repo"),
        ("https://org@dev.azure.com/Org/Proj/_git/Repo", "dev.azure.com/org/proj/repo"),
        ("git@ssh.dev.azure.com:v3/Org/Proj/Repo", "dev.azure.com/org/proj/repo"),
        # other hosts: lowercase host, path case kept, port and credentials dropped
        ("ssh://git@Git.Example.com:2222/Team/Repo.git", "git.example.com/Team/Repo"),
        ("https://bob:secret@git.example.com:8443/Team/Repo", "git.example.com/Team/Repo"),
        ("git@git.example.com:Team/Repo.git", "git.example.com/Team/Repo"),
        ("https://git.example.com/a%20b/repo", "git.example.com/a b/repo"),
        ("ssh://git@[::1]:22/x/y.git", "[::1]/x/y"),
        ("myhost:repo", "myhost/repo"),
        # local paths
        ("/srv/repos/x.git", "file:/srv/repos/x.git"),
        ("/srv/repos/x/", "file:/srv/repos/x"),
        ("/srv/repos/./y/../x", "file:/srv/repos/x"),
        ("/srv/repos/x/.git", "file:/srv/repos/x"),
        ("file:///srv/repos/x.git", "file:/srv/repos/x.git"),
        ("file://localhost/srv/repos/x", "file:/srv/repos/x"),
        ("file:///srv/repos/with%20space", "file:/srv/repos/with space"),
        # garbage
        ("", None),
        ("   ", None),
        ("not a url", None),
        ("github.com", None),
        ("../relative/repo", None),
        ("relative/repo", None),
        ("https://", None),
        ("https://github.com", None),
        ("https://github.com/", None),
        ("https://github.com/.git", None),
        ("https://github.com:notaport/acme/api", None),
        ("https://[bad/acme/api", None),
        ("git@github.com:", None),
        ("file://otherhost/srv/x", None),
        ("persistent-https::https://github.com/acme/api", None),
        ("codecommit::us-east-1://repo", None),
        ("https://exa mple.com/x", None),
        ("https://github.com/acme/../api", None),
    ],
)
def test_normalise_remote(url: str, key: str | None) -> None:
    assert normalise_remote(url) == key


def _fake_repo(root: Path, config: str) -> Path:
    """A ``.git`` folder with just enough files for identify to read (no git needed)."""
    git_dir = root / ".git"
    (git_dir / "refs" / "heads").mkdir(parents=True)
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "config").write_text(config)
    return git_dir


@pytest.mark.parametrize(
    "config",
    [
        '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:Acme/API.git\n'
        "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        '[remote "upstream"]\n\turl = https://github.com/other/x\n[Remote "origin"]\n\tURL = "https://github.com/acme/api"\n',
        '[remote "origin"] url = https://github.com/acme/api.git ; a comment\n',
        "[remote.origin]\n\turl = https://github.com/acme/api\n",
        '[remote "origin"]\n\turl = https://github.com/acme/api\n\turl = https://example.com/mirror\n',
    ],
)
def test_identify_reads_origin_from_config(tmp_path: Path, config: str) -> None:
    _fake_repo(tmp_path, config)
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    found = identify(tmp_path / "src" / "pkg")
    assert (found.key, found.how, found.root) == (GITHUB, HOW_REMOTE, tmp_path.resolve())


def test_identify_hides_credentials_in_detail(tmp_path: Path) -> None:
    _fake_repo(tmp_path, '[remote "origin"]\n\turl = https://bob:s3cret@github.com/acme/api.git\n')
    found = identify(tmp_path)
    assert found.key == GITHUB
    assert "s3cret" not in found.detail and "bob" not in found.detail
    assert found.detail == "https://github.com/acme/api.git"


def test_identify_ignores_other_remotes(tmp_path: Path) -> None:
    _fake_repo(tmp_path, '[remote "upstream"]\n\turl = https://github.com/other/x\n')
    found = identify(tmp_path)
    assert found.how != HOW_REMOTE  # no commits and possibly no git: the folder key
    assert found.key == f"path:{tmp_path.resolve().as_posix()}"


def test_identify_outside_a_repository_is_the_folder(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("x")
    found = identify(tmp_path / "a" / "b")
    assert (found.key, found.how, found.root) == (f"path:{(tmp_path / 'a' / 'b').resolve().as_posix()}", HOW_FOLDER,
                                                  None)
    assert identify(tmp_path / "a" / "b" / "f.txt") == found


@pytest.mark.parametrize(
    "dot_git",
    [b"garbage\n", b"", b"gitdir: /does/not/exist\n", b"gitdir: \n", b"gitdir: a\x00b\n", b"\xff\xfe\x00binary"],
)
def test_identify_on_a_garbage_git_file_does_not_raise(tmp_path: Path, dot_git: bytes) -> None:
    (tmp_path / ".git").write_bytes(dot_git)
    (tmp_path / "sub").mkdir()
    found = identify(tmp_path / "sub")
    assert (found.key, found.how, found.root) == (f"path:{tmp_path.resolve().as_posix()}", HOW_FOLDER,
                                                  tmp_path.resolve())


def test_identify_on_a_garbage_git_folder_does_not_raise(tmp_path: Path) -> None:
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    (git_dir / "config").write_bytes(b"\xff[[[remote \"origin\"\n url")
    (git_dir / "commondir").write_bytes(b"\x00\x00")
    found = identify(tmp_path)
    assert (found.key, found.how) == (f"path:{tmp_path.resolve().as_posix()}", HOW_FOLDER)


def test_identify_missing_path_does_not_raise(tmp_path: Path) -> None:
    found = identify(tmp_path / "nope" / "deeper")
    assert found.how == HOW_FOLDER
