"""Project identity: one stable key per repository, whatever folder or worktree it is opened from.

:func:`identify` finds the git repository around a folder and keys it by, in order:

1. ``origin remote``: the ``origin`` URL from the repository's ``config``,
   normalised by :func:`normalise_remote` (``git@github.com:Acme/API.git`` ->
   ``github.com/acme/api``); a local-path remote gives ``file:<path>``.
2. ``first commit``: the root commit of ``HEAD`` -> ``git:<first 12 hex digits>``.
3. ``folder``: the repository root, or the folder itself outside a repository
   -> ``path:<absolute posix path>``.

Git's files are read directly (a few file reads, no subprocess) for the
repository and its remote; only rule 2 runs ``git`` (with a short timeout).
Without git installed, on a broken repository or on a timeout, the next rule
applies: :func:`identify` never raises.  Linked worktrees and the main checkout
read the same common git folder, so they get the same key.

Remote normalisation rule (:func:`normalise_remote`):

* the key is ``<host>/<path>``; the scheme, credentials (user and password),
  port, a ``.git`` suffix, duplicate, leading and trailing slashes are dropped;
  ``%``-escapes in the path are decoded;
* the host is lowercased; ``www.``, ``ssh.`` and ``altssh.`` aliases of GitHub,
  GitLab and Bitbucket become the plain host;
* on hosts known to treat paths case-insensitively (GitHub, GitLab, Bitbucket,
  Azure DevOps) the whole key is lowercased; elsewhere the path keeps its case,
  since a self-hosted server may be case-sensitive;
* Azure DevOps' https (``dev.azure.com/o/p/_git/r``) and ssh
  (``ssh.dev.azure.com:v3/o/p/r``) forms both become ``dev.azure.com/o/p/r``;
* an absolute local path or ``file://`` URL becomes ``file:<normalised path>``
  (a trailing ``/.git`` folder is dropped, a ``.git`` suffix is kept: on disk
  ``x`` and ``x.git`` are different folders);
* anything else (relative paths, ``transport::address`` helpers, URLs without a
  host or path) is not a usable key: ``None``.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..patterns import lazy_pattern

log = logging.getLogger(__name__)

HOW_REMOTE = "origin remote"
HOW_COMMIT = "first commit"
HOW_FOLDER = "folder"

GIT_TIMEOUT = 2.0  # seconds; a slower git falls back to the folder key
COMMIT_KEY_DIGITS = 12

# Hosts that match repository paths case-insensitively, and their aliases.
_CASELESS_HOSTS = {"github.com", "gitlab.com", "bitbucket.org", "dev.azure.com"}
_HOST_ALIASES = {
    "www.github.com": "github.com",
    "ssh.github.com": "github.com",  # ssh over port 443
    "www.gitlab.com": "gitlab.com",
    "altssh.gitlab.com": "gitlab.com",
    "www.bitbucket.org": "bitbucket.org",
    "altssh.bitbucket.org": "bitbucket.org",
    "ssh.dev.azure.com": "dev.azure.com",
}
_HOST_CHARS = lazy_pattern(r"^(?:[a-z0-9._-]+|\[[0-9a-f:.]+\])$")
_SCP_LIKE = lazy_pattern(r"^(?:(?P<user>[^@/]*)@)?(?P<host>\[[^\]/]*\]|[^:/\[\]]+):(?P<path>.*)$")
_HEX = lazy_pattern(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_SECTION = lazy_pattern(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')


@dataclass(frozen=True, slots=True)
class ProjectIdentity:
    """The key of the project a folder belongs to, and how it was found."""

    key: str
    how: str  # "origin remote", "first commit" or "folder"
    root: Path | None  # the repository's top folder; None outside a repository
    detail: str  # the remote URL (without credentials), the commit hash or the folder


# --- remote URLs ---------------------------------------------------------------


def normalise_remote(url: str) -> str | None:
    """The project key for a git remote URL, or ``None`` when it names no usable repository.

    See the module docstring for the rule.  Examples::

        git@github.com:Acme/API.git                 -> github.com/acme/api
        https://user:token@github.com/acme/api.git/ -> github.com/acme/api
        ssh://git@git.example.com:2222/Team/Repo    -> git.example.com/Team/Repo
        /srv/repos/x.git                            -> file:/srv/repos/x.git
    """
    url = url.strip()
    if not url or any(ch.isspace() or ord(ch) < 32 for ch in url):
        return None
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*::", url):  # a remote helper (transport::address): no host to key by
        return None
    if "://" in url:
        try:
            parts = urlsplit(url)
            hostname = parts.hostname
            _ = parts.port  # a malformed port raises ValueError
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                return None
            return _local_key(unquote(parts.path))
        if not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme) or not hostname:
            return None
        host = hostname if ":" not in hostname else f"[{hostname}]"  # IPv6 literal
        return _hosted_key(host, unquote(parts.path))
    if url.startswith("/"):
        return _local_key(url)
    match = _SCP_LIKE.match(url)
    if match is None:  # a relative path: relative to what git's cwd happened to be
        return None
    return _hosted_key(match["host"], match["path"])


def _hosted_key(host: str, path: str) -> str | None:
    host = host.lower().rstrip(".")
    host = _HOST_ALIASES.get(host, host)
    if not _HOST_CHARS.match(host):
        return None
    segments = [s for s in path.split("/") if s]
    if segments and segments[-1].endswith(".git"):
        segments[-1] = segments[-1][: -len(".git")]
        if not segments[-1]:
            segments.pop()
    if host == "dev.azure.com":
        if segments and segments[0].lower() == "v3":  # ssh form: v3/org/project/repo
            segments = segments[1:]
        segments = [s for s in segments if s != "_git"]  # https form: org/project/_git/repo
    if not segments or any(s in (".", "..") for s in segments):
        return None
    key = host + "/" + "/".join(segments)
    return key.lower() if host in _CASELESS_HOSTS else key


def _local_key(path: str) -> str | None:
    if not path.startswith("/"):
        return None
    path = posixpath.normpath(path)
    if path.startswith("//"):  # normpath keeps a leading double slash (POSIX allows it)
        path = "/" + path.lstrip("/")
    if path.endswith("/.git") and path != "/.git":
        path = path[: -len("/.git")]
    return "file:" + path


def _without_credentials(url: str) -> str:
    """``url`` as safe to print: a password, or a token used as an https user name, removed."""
    if "://" not in url:
        return url
    scheme, rest = url.split("://", 1)
    netloc, sep, tail = rest.partition("/")
    if "@" not in netloc:
        return url
    userinfo, host = netloc.rsplit("@", 1)
    keep_user = scheme.lower() in ("ssh", "git+ssh", "ssh+git") and ":" not in userinfo
    return f"{scheme}://{userinfo + '@' if keep_user else ''}{host}{sep}{tail}"


# --- git's files ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Repository:
    root: Path  # the working tree's top folder (holds ``.git``)
    git_dir: Path | None  # this checkout's git folder; None when ``.git`` is unusable
    common_dir: Path | None  # shared by all worktrees: config, objects, refs


def _find_repository(start: Path) -> _Repository | None:
    """The repository around ``start``: the nearest folder upwards that holds ``.git``."""
    for candidate in (start, *start.parents):
        dot_git = candidate / ".git"
        try:
            if dot_git.is_dir():
                git_dir: Path | None = dot_git
            elif dot_git.is_file():
                git_dir = _read_gitfile(dot_git)
            else:
                continue
        except (OSError, ValueError):
            continue
        common = _common_dir(git_dir) if git_dir is not None else None
        return _Repository(root=candidate, git_dir=git_dir, common_dir=common)
    return None


def _read_gitfile(dot_git: Path) -> Path | None:
    """The folder a ``.git`` file (linked worktree, submodule) points at, if it is valid."""
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0:1]
        if not first or not first[0].startswith("gitdir:"):
            return None
        named = first[0][len("gitdir:"):].strip()
        if not named:
            return None
        target = Path(named)
        target = target if target.is_absolute() else dot_git.parent / target
        return target if (target / "HEAD").is_file() else None
    except (OSError, ValueError):  # unreadable, or a path with a NUL byte
        return None


def _common_dir(git_dir: Path) -> Path:
    """The folder shared by every worktree of the repository (``git_dir`` itself for the main one)."""
    try:
        text = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        if not text:
            return git_dir
        common = Path(text)
        common = common if common.is_absolute() else git_dir / common
        return common if common.is_dir() else git_dir
    except (OSError, ValueError):  # no commondir file (the main checkout), or a garbage one
        return git_dir


def _origin_url(common_dir: Path) -> tuple[str | None, bool]:
    """The first ``remote.origin.url`` in the repository config, and whether the config includes others."""
    try:
        text = (common_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None, False
    in_origin = False
    has_include = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            match = _SECTION.match(line)
            name = match[1].lower() if match else ""
            sub = match[2] if match else None
            has_include = has_include or name in ("include", "includeif")
            in_origin = (name == "remote" and sub is not None and _unescape(sub) == "origin") or (
                name == "remote.origin" and sub is None  # the deprecated [remote.origin] spelling
            )
            line = line[match.end():].strip() if match else ""
            if not line:
                continue
        if in_origin and "=" in line:
            key, value = line.split("=", 1)
            if key.strip().lower() == "url":
                return _config_value(value), has_include
    return None, has_include


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _config_value(raw: str) -> str:
    """A git config value: quotes removed, escapes decoded, a trailing comment cut."""
    out: list[str] = []
    quoted = False
    chars = iter(raw.strip())
    for ch in chars:
        if ch == "\\":
            nxt = next(chars, "")
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(nxt, nxt))
        elif ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
    return "".join(out).strip()


def _git(args: list[str], git_dir: Path) -> str | None:
    """Run ``git --git-dir GIT_DIR ARGS``; its stdout, or None on any failure (no git, timeout, error)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k == "GIT_EXEC_PATH"}
    env["GIT_TERMINAL_PROMPT"] = "0"
    try:
        done = subprocess.run(
            ["git", "--git-dir", str(git_dir), "-c", "core.fsmonitor=false", *args],
            capture_output=True, text=True, timeout=GIT_TIMEOUT, env=env, stdin=subprocess.DEVNULL, cwd=git_dir,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("git %s failed: %s", " ".join(args), exc)
        return None
    if done.returncode != 0:
        log.debug("git %s exited %d: %s", " ".join(args), done.returncode, done.stderr.strip())
        return None
    return done.stdout


def _root_commit(repo: _Repository) -> str | None:
    """The root commit of ``HEAD`` (the smallest hash if there are several); None if there is none."""
    if repo.common_dir is None or repo.git_dir is None:
        return None
    if (repo.common_dir / "shallow").exists():
        return None  # the boundary of a shallow clone moves with every fetch
    # The main checkout's HEAD first, so that every worktree names the same history.
    for git_dir in dict.fromkeys([repo.common_dir, repo.git_dir]):
        out = _git(["rev-list", "--max-parents=0", "HEAD"], git_dir)
        hashes = sorted(h for h in (out or "").split() if _HEX.match(h))
        if hashes:
            return hashes[0]
    return None


# --- identity -------------------------------------------------------------------


def identify(start: Path) -> ProjectIdentity:
    """The project key for the folder (or file) ``start``: origin remote, else first commit, else folder.

    Never raises: a repository that cannot be read falls through to the next rule.
    """
    folder = _folder_of(start)
    try:
        repo = _find_repository(folder)
        if repo is None:
            return ProjectIdentity(key=f"path:{folder.as_posix()}", how=HOW_FOLDER, root=None, detail=str(folder))
        found = _from_git(repo)
    except (OSError, ValueError) as exc:  # belt and braces: the helpers already fall through on these
        log.debug("cannot read the repository around %s: %s", folder, exc)
        repo, found = None, None
    if found is not None:
        return found
    root = repo.root if repo is not None else None
    where = root or folder
    return ProjectIdentity(key=f"path:{where.as_posix()}", how=HOW_FOLDER, root=root, detail=str(where))


def work_key(identity: ProjectIdentity, start: Path, vault_root: Path | None = None) -> str | None:
    """The project work in ``start`` (identified as ``identity``) is for, as search and remember see it.

    ``identity``'s key inside a git repository; None outside any repository, and in
    the vault's own folder (a vault is not a project: its own repository, or one
    that holds the vault, is left out when the folder is inside the vault).
    """
    if identity.root is None:
        return None
    if vault_root is not None:
        vault, folder, root = _folder_of(vault_root), _folder_of(start), _folder_of(identity.root)
        if folder.is_relative_to(vault) and not (root != vault and root.is_relative_to(vault)):
            return None
    return identity.key


def current_project(start: Path, vault_root: Path | None = None) -> str | None:
    """:func:`work_key` of ``identify(start)``: the project search and remember default to."""
    return work_key(identify(start), start, vault_root)


def _folder_of(start: Path) -> Path:
    """``start`` as an absolute, resolved folder (a file's parent; a missing path is taken as is)."""
    path = Path(os.path.abspath(start.expanduser()))
    try:
        path = path.resolve()
        return path.parent if path.is_file() else path
    except (OSError, RuntimeError, ValueError):
        return path


def _from_git(repo: _Repository) -> ProjectIdentity | None:
    """Rules 1 and 2 for a repository; None when neither applies."""
    if repo.common_dir is None:
        return None
    url, has_include = _origin_url(repo.common_dir)
    if url is None and has_include:  # an included file may hold the remote: ask git
        url = (_git(["config", "--local", "--get", "remote.origin.url"], repo.common_dir) or "").strip() or None
    key = normalise_remote(url) if url else None
    if url and key:
        return ProjectIdentity(key=key, how=HOW_REMOTE, root=repo.root, detail=_without_credentials(url))
    commit = _root_commit(repo)
    if commit is not None:
        return ProjectIdentity(key=f"git:{commit[:COMMIT_KEY_DIGITS]}", how=HOW_COMMIT, root=repo.root,
                               detail=commit)
    return None
