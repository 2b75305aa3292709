"""`memvault context` and `memvault export agents-md` end to end with the real model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from vault_engine.context.export import BEGIN, END

pytestmark = pytest.mark.slow
API = "github.com/acme/api"


def seed(run_cli: Callable[..., Result]) -> dict[str, str]:
    out = {}
    for name, args in {
        "profile": ["The user writes Python and prefers short answers.", "--type", "core-profile"],
        "fixtures": ["Tests use pytest fixtures from conftest.py.", "--type", "collaboration-policy",
                     "--project", API, "--path", "tests/**"],
        "other": ["The web app deploys to Vercel.", "--project", "github.com/acme/web"],
        "db": ["The API database is Postgres 16.", "--project", API],
    }.items():
        result = run_cli("add", *args, "--json")
        assert result.exit_code == 0, result.output
        out[name] = json.loads(result.output)["id"]
    return out


def test_context_markdown_and_json(run_cli: Callable[..., Result]) -> None:
    ids = seed(run_cli)
    md = run_cli("context", "--task", "add a test for the users endpoint", "--project", API,
                 "--path", "tests/test_users.py")
    assert md.exit_code == 0, md.output
    assert md.output.startswith("<memory-context>") and ids["fixtures"] in md.output
    assert ids["other"] not in md.output
    assert "memvault feedback ID --outcome used-successfully --application e-" in md.output
    js = run_cli("context", "--task", "which database does the api use", "--project", API, "--format", "json",
                 "--budget", "3000")
    data = json.loads(js.stdout)
    assert data["budget"] == 3000 and data["used"] <= 3000 and data["application"].startswith("e-")
    assert {"resident", "manifest", "task"} <= set(data)
    assert any(item["id"] == ids["db"] for item in data["manifest"] + data["resident"])
    assert all("whyApplied" in item for item in data["manifest"])
    empty_task = run_cli("context", "--task", "  ", "--project", API)
    assert empty_task.exit_code == 1 and "needs a task" in empty_task.output


def test_context_out_file_and_export_block(run_cli: Callable[..., Result], tmp_path: Path) -> None:
    ids = seed(run_cli)
    out = tmp_path / "manifest.md"
    written = run_cli("context", "--task", "add tests", "--project", API, "--out", str(out), "--no-record")
    assert written.exit_code == 0 and out.read_text().startswith("<memory-context>")
    agents = tmp_path / "AGENTS.md"
    agents.write_text("# Notes\n\nKeep this line.\n")
    first = run_cli("export", "agents-md", "--file", str(agents), "--project", API, "--path", "tests/a.py")
    assert first.exit_code == 0, first.output
    text = agents.read_text()
    assert text.startswith("# Notes\n\nKeep this line.\n") and BEGIN in text and END in text
    assert ids["fixtures"] in text and ids["other"] not in text
    again = run_cli("export", "agents-md", "--file", str(agents), "--project", API, "--path", "tests/a.py")
    assert again.exit_code == 0 and "unchanged" in again.output and agents.read_text() == text
