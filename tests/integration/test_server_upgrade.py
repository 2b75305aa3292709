"""A daemon started from one install of memvault, and that install upgraded under it (pip writes every file
anew): the hooks' warm server stops, so the next hook starts one with the new code; ``memvault serve`` started
by a person keeps serving and says once that it runs the old version; ``memvault watch`` restarts itself with
the new code in the same process.

Each runs from a copy of the package (``PYTHONPATH``), so upgrading it touches nothing of this checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.vault import NewMemory, Vault

PACKAGE = Path(__file__).resolve().parents[2] / "vault_engine"
pytestmark = pytest.mark.slow


def _poll(condition: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _reinstall(package: Path) -> None:
    """What pip does to a file it installs again: a new file with the same text, moved into place."""
    for name in ("__init__.py", "version.py"):
        target = package / name
        fresh = target.with_name(name + ".new")
        fresh.write_bytes(target.read_bytes())
        os.replace(fresh, target)


def _serve(tmp_path: Path, vault: Vault, *extra: str) -> tuple[subprocess.Popen[str], Path]:
    install = tmp_path / "install"
    shutil.copytree(PACKAGE, install / "vault_engine", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(install)}
    process = subprocess.Popen([sys.executable, "-m", "vault_engine", "--vault", str(vault.root), "serve",
                                "--port", "0", *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, cwd=str(tmp_path))
    served = vault.root / ".memvault" / "serve.json"
    _poll(lambda: served.exists() and json.loads(served.read_text()).get("pid") == process.pid)
    return process, install / "vault_engine"


def test_a_warm_server_stops_when_its_install_is_upgraded(tmp_path: Path, make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    vault.add(NewMemory("Deploys go through the staging cluster first.", title="Staging first"))
    process, package = _serve(tmp_path, vault, "--idle-exit", "600")
    try:
        time.sleep(1.0)
        assert process.poll() is None  # nothing changed: it serves on
        _reinstall(package)
        output, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, output
    assert "memvault was upgraded on disk: stopping" in output
    _poll(lambda: not (vault.root / ".memvault" / "serve.json").exists())


def test_a_server_a_person_started_keeps_serving_and_says_so_once(
        tmp_path: Path, make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    process, package = _serve(tmp_path, vault)
    try:
        _reinstall(package)
        time.sleep(2.0)  # four looks at the install
        assert process.poll() is None
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=60)
    assert output.count("memvault was upgraded on disk since this server started") == 1, output


def test_memvault_watch_restarts_itself_with_the_upgraded_install(
        tmp_path: Path, make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    install = tmp_path / "install"
    shutil.copytree(PACKAGE, install / "vault_engine", ignore=shutil.ignore_patterns("__pycache__"))
    log = tmp_path / "watch.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "vault_engine", "--vault", str(vault.root), "watch"],
                                   env={**os.environ, "PYTHONPATH": str(install)}, stdout=out,
                                   stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path))
    try:
        _poll(lambda: "watching for changes" in log.read_text())
        _reinstall(install / "vault_engine")
        _poll(lambda: log.read_text().count("watching for changes") == 2)
        assert process.poll() is None  # the same process, running the new code
        vault.add(NewMemory("Releases are cut on Thursdays.", title="Release day"))
        _poll(lambda: "1 added" in log.read_text().split("restarting with the new version")[-1])
    finally:
        process.terminate()
        process.wait(timeout=60)
    text = log.read_text()
    assert text.count("memvault was upgraded on disk: restarting with the new version") == 1, text
    assert text.rstrip().endswith("stopped"), text
