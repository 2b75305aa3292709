"""The hooks' logic with a fake vault: what a prompt is given, the fast path's command line, the log."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from vault_engine.agents import hooks
from vault_engine.config import environment


class FakeVault:
    """Answers as the HTTP API would, from canned hits and a canned manifest."""

    def __init__(self, hits: list[dict[str, Any]], manifest: dict[str, Any] | None = None):
        self.hits = hits
        self.manifest = manifest or {"resident": [], "manifest": [], "markdown": ""}
        self.asked: list[tuple[str, str | None]] = []

    def context(self, task: str, project: str | None, budget: int | None) -> dict[str, Any]:
        self.asked.append((task, project))
        return self.manifest

    def search(self, query: str, project: str | None, limit: int) -> dict[str, Any]:
        self.asked.append((query, project))
        return {"hits": self.hits[:limit]}


def hit(n: int, *, weak: bool = False, summary: str = "", conflicts: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"id": f"m-{n}", "title": f"Memory {n}", "summary": summary or f"What memory {n} says.",
            "evidence": 0.9, "weak": weak, "project": None, "conflicts": list(conflicts)}


def test_a_prompt_gets_strong_hits_it_was_not_given_with_their_reasons() -> None:
    fake = FakeVault([hit(1), hit(2, weak=True), hit(3), hit(4, conflicts=("m-9",))])
    text, ids = hooks.prompt_memories(fake, "how do we deploy", "github.com/acme/api", delivered={"m-3"})
    assert ids == ["m-1", "m-4"]
    assert text.startswith("<memory-context>\n") and text.endswith("</memory-context>\n")
    assert "- `m-1` **Memory 1**: What memory 1 says. _(why: relevant to the prompt (evidence 0.90))_" in text
    assert "conflicts with m-9" in text
    assert fake.asked == [("how do we deploy", "github.com/acme/api")]


def test_nothing_relevant_or_an_empty_prompt_gives_nothing() -> None:
    assert hooks.prompt_memories(FakeVault([hit(1, weak=True)]), "haiku", None, set()) == ("", [])
    fake = FakeVault([hit(1)])
    assert hooks.prompt_memories(fake, "   ", None, set()) == ("", []) and fake.asked == []


def test_a_prompts_memories_stay_within_the_budget() -> None:
    fake = FakeVault([hit(n, summary="x" * 400) for n in range(5)])
    text, ids = hooks.prompt_memories(fake, "q", None, set())
    assert len(text) <= hooks.PROMPT_BUDGET and 1 <= len(ids) < 5
    assert text.count("- `m-") == len(ids)


def test_session_start_gives_the_manifest_and_its_ids_or_nothing() -> None:
    manifest = {"resident": [{"id": "m-1"}], "manifest": [{"id": "m-2"}], "markdown": "<memory-context>..."}
    assert hooks.session_start(FakeVault([], manifest), "p") == ("<memory-context>...", ["m-1", "m-2"])
    empty = {"resident": [], "manifest": [], "markdown": "<memory-context>\nTask: x\n</memory-context>\n"}
    assert hooks.session_start(FakeVault([], empty), None) == ("", [])


@pytest.mark.parametrize(("argv", "vault"), [
    (["hook", "claude-code", "UserPromptSubmit"], None),
    (["--vault", "/v", "hook", "claude-code", "UserPromptSubmit"], "/v"),
    (["--vault=/v", "hook", "claude-code", "UserPromptSubmit"], "/v"),
])
def test_the_fast_path_takes_the_forms_install_writes(monkeypatch: pytest.MonkeyPatch, argv: list[str],
                                                      vault: str | None) -> None:
    seen: list[tuple[str, str, str, str | None]] = []
    monkeypatch.setattr(hooks, "run", lambda a, e, s, v, oversized: seen.append((a, e, s, v)) or "answer\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"session_id": "s"}')))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert hooks.fast_path(argv)
    assert seen == [("claude-code", "UserPromptSubmit", '{"session_id": "s"}', vault)]
    assert out.getvalue() == "answer\n"


@pytest.mark.parametrize("argv", [[], ["--help"], ["hook", "--help"], ["hook", "claude-code"],
                                  ["hook", "codex", "Stop"], ["hook", "claude-code", "Stop"],
                                  ["hook", "copilot", "sessionStart"], ["hook", "gemini", "UserPromptSubmit"],
                                  ["search", "hook"], ["--json", "hook", "claude-code", "SessionStart"]])
def test_everything_else_goes_to_the_command_line(argv: list[str]) -> None:
    assert not hooks.fast_path(argv)


def test_the_vault_is_found_as_the_command_line_finds_it(tmp_path: Path) -> None:
    home, mine = tmp_path / "home", tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / "memvault.toml").write_text("")
    env = environment({"HOME": str(home)})
    assert hooks.find_vault(str(mine), env, tmp_path) == mine.resolve()
    assert hooks.find_vault(str(tmp_path / "none"), env, tmp_path) is None
    assert hooks.find_vault(None, environment({"HOME": str(home), "MEMVAULT_DIR": str(mine)}), tmp_path) == \
        mine.resolve()
    assert hooks.find_vault(None, env, mine / "sub") == mine.resolve()
    assert hooks.find_vault(None, env, tmp_path) is None  # no default vault yet: not created by a hook
    (home / ".memvault" / "vault").mkdir(parents=True)
    (home / ".memvault" / "vault" / "memvault.toml").write_text("")
    assert hooks.find_vault(None, env, tmp_path) == home / ".memvault" / "vault"


def test_a_failure_is_one_logged_line_and_no_answer(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "memvault.toml").write_text("")
    out = hooks.run("claude-code", "SessionEnd", json.dumps({"session_id": "s", "hook_event_name": "SessionEnd"}),
                    str(vault), environ={"HOME": str(tmp_path)})
    assert out == ""
    lines = (vault / ".memvault" / "hooks.log").read_text().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith("claude-code SessionEnd: ValueError: hook input has no transcript_path")
    assert hooks.run("claude-code", "Nope", "{}", None, environ={"HOME": str(tmp_path)}) == ""
    assert "unknown hook claude-code Nope" in (tmp_path / ".memvault" / "hooks.log").read_text()


def test_the_log_is_rotated(tmp_path: Path) -> None:
    (tmp_path / ".memvault").mkdir()
    log = tmp_path / ".memvault" / "hooks.log"
    log.write_text("x" * (hooks.LOG_MAX_BYTES + 1))
    hooks.log(tmp_path, environment({}), "one line")
    assert log.read_text().endswith(" one line\n") and (tmp_path / ".memvault" / "hooks.log.1").exists()


def test_the_way_to_a_server_loads_no_model_index_or_command_line() -> None:
    """What a hook imports when a server answers: checked in a fresh interpreter."""
    import subprocess

    code = ("import sys, vault_engine.cli, vault_engine.agents.hooks, vault_engine.agents.backend, "
            "vault_engine.context.project, http.client; "
            "print(sorted(m for m in ('numpy', 'tantivy', 'click', 'yaml', 'fastembed', 'onnxruntime', "
            "'vault_engine.vault', 'vault_engine.index.catalog') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_hooks_input_is_read_up_to_its_bound_and_never_in_part() -> None:
    small = io.BytesIO('{"prompt": "déjà vu"}'.encode())
    assert hooks.read_input(small) == ('{"prompt": "déjà vu"}', False)
    big = io.BytesIO(b"x" * (hooks.MAX_INPUT + 10))
    assert hooks.read_input(big) == ("", True)
    assert big.tell() == hooks.MAX_INPUT + 1  # the rest is never read
    exact = io.BytesIO(b"y" * hooks.MAX_INPUT)
    assert hooks.read_input(exact) == ("y" * hooks.MAX_INPUT, False)


def test_an_oversized_input_is_one_logged_line_and_no_answer(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "memvault.toml").write_text("")
    assert hooks.run("claude-code", "UserPromptSubmit", "", str(vault), environ={"HOME": str(tmp_path)},
                     oversized=True) == ""
    lines = (vault / ".memvault" / "hooks.log").read_text().splitlines()
    assert len(lines) == 1
    assert lines[0].endswith(f"claude-code UserPromptSubmit: ValueError: the hook's input is larger than "
                             f"{hooks.MAX_INPUT:,} bytes; nothing was read from it")
