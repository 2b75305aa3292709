"""Shared fixtures: isolated environment and a vault factory."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from vault_engine.cli import cli
from vault_engine.index import notices
from vault_engine.store import create_vault
from vault_engine.vault import NewMemory, Vault

REPO = Path(__file__).resolve().parent.parent


_FAILED = pytest.StashKey[bool]()
_ENVS = itertools.count()
_MONOTONIC, _SLEEP = time.monotonic, time.sleep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Marks a test whose setup or call failed (its folders are then kept, see :func:`isolated_env`)."""
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


@pytest.fixture(autouse=True)
def isolated_env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private HOME (and embedding cache), temporary folder (TMPDIR, for the test's subprocesses too), no
    MEMVAULT_* / ANTHROPIC_* variables and a working folder in no project for every test.

    Search and remember default to the project of the working folder; the memvault checkout the tests
    start in is a project of its own. A test that needs a project makes a repository and works in it.

    The three folders are removed after a test that passed, as ``tmp_path`` is (``tmp_path_retention_policy``
    in pyproject.toml): a run leaves nothing in the temporary folder but what its failed tests had. Each test's
    folder has a name of its own (no numbering that a removed folder would hand to the next test).
    """
    env = tmp_path_factory.getbasetemp() / "env" / str(next(_ENVS))
    env.mkdir(parents=True)
    home, cwd, temp = env / "home", env / "cwd", env / "tmp"
    for folder in (home, cwd, temp):
        folder.mkdir()
    for name in list(os.environ):
        if name.startswith(("MEMVAULT_", "ANTHROPIC_")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    # No hook starts a warm server that outlives its test; the tests of that server turn it back on.
    monkeypatch.setenv("MEMVAULT_SERVER_WARM_MINUTES", "0")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)  # the embedding cache lives in the private HOME too
    # The embedding model's int8 graph is derived once per run, not once per private HOME.
    graphs = tmp_path_factory.getbasetemp() / "model-graphs"
    graphs.mkdir(exist_ok=True)
    (home / ".cache" / "memvault").mkdir(parents=True)
    (home / ".cache" / "memvault" / "models").symlink_to(graphs, target_is_directory=True)
    monkeypatch.chdir(cwd)
    # Subprocesses (python -m vault_engine) then no longer find this checkout through the working folder.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    # What the test and its subprocesses (git, node, servers) leave in the temporary folder goes with the test.
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    notices.forget_all()  # each test is a process of its own for the caches' once-per-process notices
    yield home
    folders = [env, *(path for path in [request.node.funcargs.get("tmp_path")] if isinstance(path, Path))]
    _stop_processes_in(folders)
    if not request.node.stash.get(_FAILED, False) and request.config.getini("tmp_path_retention_policy") != "all":
        monkeypatch.undo()  # out of the working folder before it goes
        shutil.rmtree(env, ignore_errors=True)


def _stop_processes_in(folders: Sequence[Path]) -> None:
    """Stops what a test left running in its folders (a warm server an agent's hook started, a worker): any
    process of this user whose command line names one of them gets SIGTERM, then SIGKILL after 5 s."""
    names = [str(folder) for folder in folders]
    found: list[int] = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().decode("utf-8", "replace")
            if int(entry.name) != os.getpid() and any(name in argv for name in names):
                found.append(int(entry.name))
    if not found:
        return
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = _MONOTONIC() + 5  # the clock as it is, not as a test may have replaced it
    while found and _MONOTONIC() < deadline:
        found = [pid for pid in found if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
        _SLEEP(0.05)
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _zombie(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return ") Z" in Path(f"/proc/{pid}/stat").read_text()
    return True


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[..., Vault]:
    """Create a vault from the template, optionally with extra files ({relative path: text})."""

    counter = iter(range(1000))

    def factory(files: dict[str, str | bytes] | None = None, name: str | None = None) -> Vault:
        root = tmp_path / (name or f"vault{next(counter)}")
        create_vault(root, git=False)
        for rel, content in (files or {}).items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_bytes(content.encode("utf-8"))
        return Vault(root)

    return factory


@pytest.fixture
def vault_of(make_vault: Callable[..., Vault]) -> Callable[[Sequence[str]], tuple[Vault, list[str]]]:
    """``vault_of(texts)``: a fresh vault that syncs itself, holding one memory per text, and their ids."""

    def build(texts: Sequence[str]) -> tuple[Vault, list[str]]:
        vault = Vault(make_vault().root, auto_sync=True)
        made = [vault.add(NewMemory(text)).id for text in texts]
        assert vault.index_warning is None
        return vault, made

    return build


@pytest.fixture
def vault(make_vault: Callable[..., Vault]) -> Vault:
    return make_vault()


@pytest.fixture
def run_cli(vault: Vault) -> Callable[..., Result]:
    """Run the CLI in-process against the ``vault`` fixture (``--vault`` is added)."""
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(cli, ["--vault", str(vault.root), *args], input=input, catch_exceptions=False)

    return invoke


def _make_checkout(folder: Path, origin: str = "https://github.com/acme/web.git") -> Path:
    """A git repository at ``folder`` whose ``origin`` is ``origin`` (project key github.com/acme/web)."""
    if shutil.which("git") is None:
        pytest.fail("these tests run real git: install git and put it on PATH")
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", origin], check=True, capture_output=True)
    return folder


@pytest.fixture
def make_checkout() -> Callable[..., Path]:
    """``make_checkout(folder, origin=...)``: a git repository with that origin remote."""
    return _make_checkout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout of github.com/acme/web in ``tmp_path/web`` (the working folder stays where it is)."""
    return _make_checkout(tmp_path / "web")


def run_memvault(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                 input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the real ``memvault`` console entry point in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "vault_engine", *args], cwd=cwd, env=full_env, input=input,
        capture_output=True, text=True, timeout=timeout,
    )


@pytest.fixture
def memvault_proc() -> Callable[..., subprocess.CompletedProcess[str]]:
    """:func:`run_memvault` as a fixture (a real ``python -m vault_engine`` subprocess)."""
    return run_memvault


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """After pytest removed a passing run's folder: its ``pytest-of-<user>`` folder too, when nothing else
    is in it (not on an xdist worker, whose folder is inside the main process's, nor with ``--basetemp``)."""
    basetemp = getattr(getattr(session.config, "_tmp_path_factory", None), "_basetemp", None)
    if basetemp is None or hasattr(session.config, "workerinput") or session.config.option.basetemp:
        return
    root = Path(basetemp).parent
    if root.name.startswith("pytest-of-"):
        with contextlib.suppress(OSError):  # not empty: a failed run's folders, or another run's
            root.rmdir()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-contract", action="store_true", default=False,
                     help="Rewrite the golden JSON files in contract/ from the live HTTP API.")
