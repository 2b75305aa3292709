"""`memvault ingest`: files and stdin, --flush, --json, sessions, and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from vault_engine.errors import LlmUnavailable
from vault_engine.llm.base import Digest, Sense, Turn
from vault_engine.vault import Vault

CHAT = [
    {"role": "user", "content": "How do we version the public API?", "ts": "2026-05-01T09:00:00Z"},
    {"role": "assistant", "content": "Version it in the URL path: /v1, /v2.\n\n```\nGET /v2/items\n```"},
    {"role": "user", "content": "Keep the old version for six months.   "},
]


def jsonl(records: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_one_error(result: Result, *fragments: str, code: int = 1) -> str:
    """Exactly one stderr line starting with 'error: ', the exit code, and no traceback."""
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def sessions(vault: Vault) -> list[str]:
    folder = vault.root / ".memvault" / "sessions"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_ingest_a_file_then_flush(run_cli: Callable[..., Result], vault: Vault, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(jsonl(CHAT), encoding="utf-8")
    result = run_cli("ingest", str(chat), "--session", "api-design")
    assert result.exit_code == 0, result.output
    assert result.stdout == "buffered 3 turns; session 'api-design' holds 3 turns\n"
    flushed = run_cli("ingest", "--flush", "--session", "api-design")
    assert flushed.exit_code == 0, flushed.output
    first, last = flushed.stdout.splitlines()
    assert first.startswith("episode m-") and "How do we version the public API" in first and "(3 turns)" in first
    assert last == "buffered 0 turns; session 'api-design' holds 0 turns; session closed"
    episode_id = first.split()[1]
    body = vault.scan().get(episode_id).memory.body
    for record in CHAT:
        assert record["content"] in body
    shown = as_json(run_cli("show", episode_id, "--depth", "2", "--json"))
    assert CHAT[1]["content"] in shown["body"]


def test_ingest_json_output(run_cli: Callable[..., Result], tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(jsonl([*CHAT, {"role": "user", "content": "Skip the changelog, just this once."}]),
                    encoding="utf-8")
    data = as_json(run_cli("ingest", str(chat), "--flush", "--json"))
    assert set(data) == {"session", "received", "buffered", "one_off", "redacted", "episodes", "pending", "closed",
                         "warnings"}
    assert (data["session"], data["received"], data["buffered"], data["one_off"], data["pending"]) == (
        "default", 4, 3, 1, 0)
    [episode] = data["episodes"]
    assert set(episode) == {"id", "path", "title", "turns", "tags", "links", "action"}
    assert episode["turns"] == 3 and episode["action"] == "created" and episode["path"].startswith("episodes/")


def test_ingest_plain_text_from_stdin(run_cli: Callable[..., Result], vault: Vault) -> None:
    text = "User: which branch deploys?\nAssistant: main deploys to staging.\n"
    result = run_cli("ingest", "-", "--flush", "--json", input=text)
    [episode] = as_json(result)["episodes"]
    body = vault.scan().get(episode["id"]).memory.body
    assert "### user\n\nwhich branch deploys?\n" in body and "### assistant\n\nmain deploys to staging.\n" in body


def test_a_bad_jsonl_line_is_one_error_and_nothing_is_buffered(run_cli: Callable[..., Result], vault: Vault,
                                                               tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(jsonl(CHAT[:1]) + '{"role": "robot", "content": "beep"}\n' + jsonl(CHAT[1:]), encoding="utf-8")
    line = assert_one_error(run_cli("ingest", str(chat)), f"{chat}:2:", "key 'role' must be one of")
    assert "robot" in line
    assert sessions(vault) == []


def test_a_path_as_session_name_is_refused(run_cli: Callable[..., Result], vault: Vault, tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(jsonl(CHAT), encoding="utf-8")
    assert_one_error(run_cli("ingest", str(chat), "--session", "../../etc/passwd"), "invalid session name")
    assert sessions(vault) == [] and not (vault.root / "etc").exists()


def test_missing_file_and_missing_argument(run_cli: Callable[..., Result], tmp_path: Path) -> None:
    assert_one_error(run_cli("ingest", str(tmp_path / "nope.jsonl")), "nope.jsonl", "cannot read file")
    assert_one_error(run_cli("ingest"), "name a FILE", "--help", code=2)


def test_a_file_that_is_not_utf8(run_cli: Callable[..., Result], tmp_path: Path) -> None:
    chat = tmp_path / "chat.txt"
    chat.write_bytes(b"User: caf\xe9\n")
    assert_one_error(run_cli("ingest", str(chat)), "chat.txt:1:", "not valid UTF-8")


class DownLlm:
    """A model that is down until ``up`` is set."""

    up = False

    @property
    def name(self) -> str:
        return "down"

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        return Sense(False, 0.0)

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        if not DownLlm.up:
            raise LlmUnavailable("the language model did not answer (timeout)")
        return Digest("API versioning", "Versions live in the URL.", "When I need API versions", "active", ("api",))

    def detail(self, text: str) -> str:
        raise LlmUnavailable("down")


@pytest.fixture
def down_llm(monkeypatch: pytest.MonkeyPatch) -> type[DownLlm]:
    import vault_engine.llm.select as select_module

    DownLlm.up = False
    monkeypatch.setattr(select_module, "select", lambda *args, **kwargs: DownLlm())
    return DownLlm


def test_a_model_failure_is_one_line_and_the_turns_stay_buffered(run_cli: Callable[..., Result], vault: Vault,
                                                                 tmp_path: Path, down_llm: type[DownLlm]) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(jsonl(CHAT), encoding="utf-8")
    failed = run_cli("ingest", str(chat), "--flush")
    assert_one_error(failed, "did not answer", "3 turns kept in the buffer of session 'default'", "nothing lost",
                     code=75)
    assert failed.stdout == "buffered 3 turns; session 'default' holds 3 turns\n"
    assert sessions(vault) == ["default.jsonl", "default.lock"]
    assert [e for e in vault.scan().active() if e.memory.type == "episode"] == []
    down_llm.up = True
    retried = as_json(run_cli("ingest", "--flush", "--json"))
    assert [e["turns"] for e in retried["episodes"]] == [3] and retried["pending"] == 0


def test_a_model_failure_with_json_still_prints_the_document(run_cli: Callable[..., Result], tmp_path: Path,
                                                             down_llm: type[DownLlm]) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(jsonl(CHAT), encoding="utf-8")
    failed = run_cli("--json", "ingest", str(chat), "--flush")
    assert_one_error(failed, "kept in the buffer", code=75)
    data = json.loads(failed.stdout)
    assert data["pending"] == 3 and data["episodes"] == [] and "kept in the buffer" in data["error"]


def test_offline_tagging_reuses_the_vaults_tag_a_second_chat_names(run_cli: Callable[..., Result]) -> None:
    first = "User: The terraform plan fails on staging with a state lock.\nAssistant: Run terraform force-unlock.\n"
    [one] = as_json(run_cli("ingest", "-", "--flush", "--session", "one", "--json", input=first))["episodes"]
    assert "terraform" in one["tags"]
    second = ("User: Can you add an S3 bucket for the logs in Terraform?\n"
              "Assistant: I added the bucket module and a lifecycle rule.\n")
    [two] = as_json(run_cli("ingest", "-", "--flush", "--session", "two", "--json", input=second))["episodes"]
    assert "terraform" in two["tags"]  # written capitalised, still the vault's [terraform], not a person
    assert one["id"] in two["links"]  # so the two chats link through it


def test_ingest_gemini_chat_files_stores_each_message_once(run_cli: Callable[..., Result], vault: Vault) -> None:
    """Gemini CLI's own chat file (a real recording), imported in bulk: the person's words and the model's
    text, not memvault's own context or tool call; importing it again stores nothing new."""
    chat = Path(__file__).resolve().parent.parent / "fixtures" / "agents" / "gemini_chat.jsonl"
    first = as_json(run_cli("--json", "ingest", "--format", "gemini", str(chat)))["files"][0]
    assert first["new_messages"] == 7 and "error" not in first
    again = as_json(run_cli("--json", "ingest", "--format", "gemini", str(chat)))["files"][0]
    assert again["new_messages"] == 0
    bodies = "\n".join(e.memory.body for e in vault.scan().entries.values() if e.memory.type == "episode")
    assert "kilo-marker" in bodies and "The tool answered; that is all." in bodies
    assert "<hook_context>" not in bodies and "Thinking about the answer." not in bodies
