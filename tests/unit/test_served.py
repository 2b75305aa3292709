"""Which ``serve.json`` a client believes (served.py): only one this user's server could have written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vault_engine.served import Served, read_served, serve_file


def _write(root: Path, host: str = "127.0.0.1", port: int = 40123, mode: int = 0o600) -> Path:
    path = serve_file(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "host": host, "port": port, "pid": os.getpid(), "token": "t0k"}))
    path.chmod(mode)
    return path


def test_the_servers_own_file_is_read(tmp_path: Path) -> None:
    _write(tmp_path)
    assert read_served(tmp_path) == Served("127.0.0.1", 40123, "t0k", os.getpid())
    _write(tmp_path, host="::1")
    assert read_served(tmp_path) == Served("::1", 40123, "t0k", os.getpid())


@pytest.mark.parametrize(("host", "port", "mode"), [
    ("127.0.0.1", 40123, 0o644),  # as git checks out a committed file: another's, possibly
    ("127.0.0.1", 40123, 0o660),
    ("attacker.example", 40123, 0o600),  # the prompts would leave the machine
    ("10.0.0.7", 40123, 0o600),
    ("127.0.0.1", 0, 0o600),
    ("127.0.0.1", 70000, 0o600),
])
def test_a_file_no_server_of_this_user_wrote_is_not_believed(tmp_path: Path, host: str, port: int,
                                                              mode: int) -> None:
    _write(tmp_path, host, port, mode)
    assert read_served(tmp_path) is None


def test_a_linked_or_foreign_serve_file_is_not_believed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = _write(tmp_path / "other")
    link = serve_file(tmp_path)
    link.parent.mkdir(parents=True)
    link.symlink_to(elsewhere)
    assert read_served(tmp_path / "other") is not None and read_served(tmp_path) is None
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(elsewhere).st_uid + 1)  # another user's file
    assert read_served(tmp_path / "other") is None
