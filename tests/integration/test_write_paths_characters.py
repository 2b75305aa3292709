"""Nothing is acknowledged that cannot be read back: NUL, other control characters, lone surrogates and
noncharacters on every write path are refused (naming the field and position) or stored readable (and then
found by search); a write whose file would not read back is refused, never acknowledged."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vault_engine import store
from vault_engine.agents.capture import capture_files
from vault_engine.cli import cli
from vault_engine.errors import InvalidInput, UnreadableWrite
from vault_engine.format.characters import unescape
from vault_engine.index.fakes import HashEmbedder
from vault_engine.ingest.conversation import ingest
from vault_engine.ingest.documents import ingest_document, remember_output
from vault_engine.ingest.transcripts import Turn
from vault_engine.llm.offline import OfflineLlm
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.server import http as http_api
from vault_engine.server.mcp import CurrentProject, call_tool
from vault_engine.server.service import MemoryService
from vault_engine.vault import NewMemory, Vault

# Each as JSON carries it (a lone surrogate only arrives through a JSON escape).
BAD = {"NUL": "\x00", "ESC": "\x1b", "VT": "\x0b", "lone surrogate": "\ud800", "U+FFFE": "\ufffe",
       "U+FFFF": "\uffff"}
TRUSTS = ("system", "learned", "external")


@pytest.fixture
def vault(make_vault: Any) -> Vault:
    return Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())


def readable(vault: Vault) -> None:
    """Every file parses; the indexes hold exactly what the files hold."""
    scan = store.scan(vault.root)
    assert scan.problems == []
    report = vault.sync()
    assert report.problems == [] and report.plan.empty


def found(vault: Vault, query: str, memory_id: str) -> bool:
    return memory_id in [h.id for h in vault.search(SearchQuery(query, limit=20, weak=True, trust=TRUSTS)).hits]


def nothing_written(vault: Vault, before: set[str]) -> None:
    assert files(vault) == before
    assert not [p for p in vault.root.rglob("*.tmp")]


def files(vault: Vault) -> set[str]:
    """The memory files of ``vault`` (relative paths)."""
    return {rel for rel, _, _ in store.iter_markdown(vault.root)}


# ---------------------------------------------------------------- refused: text a caller gives


@pytest.mark.parametrize("name", BAD)
@pytest.mark.parametrize("field", ["text", "title", "summary", "trigger", "tags"])
def test_add_refuses_naming_the_field_and_place(vault: Vault, name: str, field: str) -> None:
    bad = f"deploys use the {BAD[name]} pipeline"
    request = NewMemory(**{"text": "Deploys go through the blue-green pipeline.",  # type: ignore[arg-type]
                           field: (bad,) if field == "tags" else bad})
    before = files(vault)
    with pytest.raises(InvalidInput) as caught:
        vault.add(request)
    where = "tags[0]" if field == "tags" else field
    assert caught.value.one_line().startswith(f"{where}: U+{ord(BAD[name]):04X} (")
    assert "at character 17 (line 1, column 17)" in caught.value.one_line()
    nothing_written(vault, before)


@pytest.mark.parametrize("name", BAD)
def test_correct_refuses_and_leaves_the_memory(vault: Vault, name: str) -> None:
    memory_id = vault.add(NewMemory("The staging database is db-7.")).id
    with pytest.raises(InvalidInput, match=r"^text: U\+"):
        vault.correct(memory_id, f"The staging database is db-8{BAD[name]}.")
    with pytest.raises(InvalidInput, match=r"^title: U\+"):
        vault.correct(memory_id, "The staging database is db-8.", title=f"Staging {BAD[name]}")
    assert vault.entry(memory_id).memory.lifecycle != "superseded"
    readable(vault)


def test_import_keeps_every_line_with_escapes_that_read_back_as_the_text_given(vault: Vault) -> None:
    bodies = ["Builds run on the self-hosted runners.", "NUL \x00 here", "x", "ok",
              "Releases are cut on Tuesdays.", "A literal \u27e8U+0041\u27e9 and a VT \x0b between columns"]
    lines = [json.dumps({"body": bodies[0]}),
             '{"body": "NUL \\u0000 here"}',
             '{"title": "surrogate \\ud800", "body": "x"}',
             json.dumps({"body": "ok", "tags": ["fine", "bell \x07"]}),
             json.dumps({"body": bodies[4], "extra": {"k": ["a", "\uffff"]}}),
             json.dumps({"body": bodies[5]}),
             json.dumps({"body": "a bad key", "k\x0b": 1})]
    result = vault.import_jsonl(lines, "in.jsonl")
    assert len(result.added) == 6
    assert [e.one_line() for e in result.errors] == [  # a key is a name, not text: refused as before
        "in.jsonl:7: a key: U+000B (VT, a control character) at character 2 (line 1, column 2) cannot be stored "
        "in a memory; remove it"]
    assert [e.one_line() for e in result.escaped] == [
        "line 2 (body: U+0000)", "line 3 (title: U+D800)", "line 4 (tags[1]: U+0007)", "line 5 (extra.k[1]: U+FFFF)",
        "line 6 (body: U+27E8, U+000B)"]
    readable(vault)
    memories = [vault.entry(memory_id).memory for memory_id in result.added]
    assert [unescape(m.body).rstrip("\n") for m in memories] == bodies
    assert memories[1].body == "NUL \u27e8U+0000\u27e9 here\n"  # stored visibly, and read back as stored
    assert memories[2].title == "surrogate \u27e8U+D800\u27e9" and unescape(memories[2].title) == "surrogate \ud800"
    assert memories[3].tags == ("fine", "bell \u27e8U+0007\u27e9")
    assert memories[5].body.startswith("A literal \u27e8U+27E8\u27e9U+0041\u27e9 and a VT \u27e8U+000B\u27e9")
    assert found(vault, "self-hosted runners", result.added[0])
    assert found(vault, "between columns", result.added[5])
    again = vault.import_jsonl(lines, "in.jsonl")  # the same file again changes nothing
    assert again.added == [] and sorted(again.unchanged) == sorted(result.added) and again.escaped == []


def test_the_command_line_refuses_an_argument_and_stdin_and_escapes_an_import_file(vault: Vault, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Vault, "embedder", lambda self: HashEmbedder())
    runner = CliRunner()
    before = files(vault)
    done = runner.invoke(cli, ["--vault", str(vault.root), "add", "a\x00b"])
    assert done.exit_code == 1 and "text: U+0000 (NUL, a control character) at character 2" in done.stderr
    done = runner.invoke(cli, ["--vault", str(vault.root), "add", "-"], input="line one\nline \x1b[31mtwo\n")
    assert done.exit_code == 1 and "text: U+001B (ESC, a control character) at character 15 (line 2, column 6)" \
        in done.stderr
    nothing_written(vault, before)
    source = tmp_path / "in.jsonl"
    source.write_text('{"body": "kept"}\n{"body": "column one\\u000bcolumn two"}\n', encoding="utf-8")
    done = runner.invoke(cli, ["--vault", str(vault.root), "import", str(source)])
    assert done.exit_code == 0 and "imported 2 memories" in done.stdout
    assert done.stderr.splitlines()[0] == (
        f"notice: 1 record of {source} stored with \u27e8U+XXXX\u27e9 escapes (for characters a memory file "
        "cannot hold, or a \u27e8 that begins such a form): line 2 (body: U+000B)")
    readable(vault)
    source.write_text('{"body": "\\u0000", "k\\u0000": 1}\n', encoding="utf-8")
    done = runner.invoke(cli, ["--vault", str(vault.root), "import", str(source), "--json"])
    assert done.exit_code == 1 and f"{source}:1: a key: U+0000" in done.stderr


def test_a_crlf_and_a_byte_order_mark_are_stored_readable_and_found(vault: Vault) -> None:
    memory_id = vault.add(NewMemory("\ufeffLine one of the runbook\r\nline two\rline three quokka\n")).id
    memory = vault.entry(memory_id).memory
    assert memory.body == "Line one of the runbook\r\nline two\rline three quokka\n"
    readable(vault)
    assert found(vault, "quokka runbook", memory_id)


# ---------------------------------------------------------------- stored readable: captured text


def test_ingested_turns_keep_their_controls_visible_and_are_found(vault: Vault) -> None:
    turns = [Turn("user", "the build log says \x1b[31mFAILED\x1b[0m at step\x00 four"),
             Turn("assistant", "half a pair \ud83d and \ufffe: the wombat cache is stale"),
             Turn("user", "thanks, clearing the wombat cache")]
    result = ingest(vault, turns, session="s1", llm=OfflineLlm(), flush=True)
    assert result.episodes
    readable(vault)
    body = vault.entry(result.episodes[0].id).memory.body
    assert "\u241b[31mFAILED\u241b[0m at step\u2400 four" in body and "half a pair \ufffd and \ufffd" in body
    assert found(vault, "wombat cache stale", result.episodes[0].id)


def test_documents_and_tool_outputs_keep_their_controls_visible_and_are_found(vault: Vault) -> None:
    text = "Capybara deployment notes\x0c\n\nStep one\x00 then step two \x1b[1mbold\x1b[0m.\n" * 3
    result = ingest_document(vault, text, source="document:notes", llm=OfflineLlm())
    readable(vault)
    assert "\u240c" in vault.entry(result.ids[0]).memory.body
    assert found(vault, "capybara deployment", result.ids[0])
    output = "pytest \x1b[32mpassed\x1b[0m\x00 for the narwhal module\n" * 200
    kept = remember_output(vault, output, source="tool:Bash", llm=OfflineLlm(), min_chars=10)
    assert kept.stored and kept.text == output  # the caller still gets its output as it was
    readable(vault)
    assert found(vault, "narwhal module passed", kept.ids[0])
    with pytest.raises(InvalidInput, match=r"^source: U\+0000"):
        ingest_document(vault, "text", source="document:\x00", llm=OfflineLlm())


def test_the_command_line_ingests_a_document_and_an_output_readable(vault: Vault, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Vault, "embedder", lambda self: HashEmbedder())
    runner = CliRunner()
    document = tmp_path / "doc.txt"
    document.write_bytes(b"Axolotl care sheet\x00 with\x1b[0m colours\n" * 20)
    done = runner.invoke(cli, ["--vault", str(vault.root), "ingest-doc", str(document)])
    assert done.exit_code == 0, done.stderr
    done = runner.invoke(cli, ["--vault", str(vault.root), "remember-output", "--source", "tool:Bash",
                               "--min-chars", "10"], input="Okapi build output\x00\x1b[31m red\n" * 50)
    assert done.exit_code == 0, done.stderr
    readable(vault)
    assert vault.search(SearchQuery("axolotl care sheet", limit=5, weak=True, trust=TRUSTS)).hits
    assert vault.search(SearchQuery("okapi build output", limit=5, weak=True, trust=TRUSTS)).hits


def test_a_captured_agent_session_is_stored_readable(vault: Vault, tmp_path: Path) -> None:
    def line(kind: str, n: int, content: Any) -> str:
        return json.dumps({"type": kind, "uuid": f"00000000-0000-0000-0000-00000000000{n}", "sessionId": "s-bad",
                           "cwd": str(tmp_path / "gone"), "isSidechain": False,
                           "timestamp": f"2026-05-04T10:0{n}:00.000Z", "message": {"role": kind, "content": content}})

    output = "\x1b[31mE\x1b[0m assertion\x00 failed in the pangolin suite\n" * 100
    transcript = tmp_path / "s-bad.jsonl"
    transcript.write_text("\n".join([
        line("user", 1, "why does the pangolin suite fail \x00 with \ud800 and \uffff?"),
        line("assistant", 2, [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest"}}]),
        line("user", 3, [{"type": "tool_result", "tool_use_id": "t1", "content": output, "is_error": True}]),
        line("assistant", 4, [{"type": "text", "text": "The pangolin fixture\x07 leaks state."}]),
    ]) + "\n")
    [captured] = capture_files(vault, [transcript], "claude-code")
    assert captured.error is None, captured.error
    readable(vault)
    hits = vault.search(SearchQuery("pangolin suite fail", limit=10, weak=True, trust=TRUSTS)).hits
    assert hits
    bodies = "".join(vault.entry(h.id).memory.body for h in hits)
    assert "\u2400" in bodies and "\x00" not in bodies


# ---------------------------------------------------------------- the servers


@pytest.fixture
def service(vault: Vault) -> Iterator[MemoryService]:
    service = MemoryService(vault, source="tool:test")
    yield service
    service.close()


def post(served: http_api.Served, operation: str, body: bytes) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    connection.request("POST", f"/v1/{operation}", body=body,
                       headers={"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"})
    answer = connection.getresponse()
    data = json.loads(answer.read())
    connection.close()
    return answer.status, data


@pytest.mark.parametrize("escape", ["\\u0000", "\\u001b", "\\ud800", "\\uffff"])
def test_http_refuses_with_a_json_error_naming_the_field(service: MemoryService, escape: str) -> None:
    before = files(service.vault)
    memory_id = service.vault.add(NewMemory("The cache TTL is 300 seconds.")).id
    with http_api.running(service) as served:
        status, data = post(served, "remember", f'{{"text": "the TTL{escape} is 60"}}'.encode())
        assert status == 400 and data["error"]["kind"] == "InvalidInput"
        assert data["error"]["message"].startswith("text: U+") and "at character 8 (line 1, column 8)" in \
            data["error"]["message"]
        status, data = post(served, "remember", f'{{"text": "ok", "tags": ["a", "b{escape}"]}}'.encode())
        assert status == 400 and data["error"]["message"].startswith("tags[1]: U+")
        status, data = post(served, "correct", f'{{"id": "{memory_id}", "text": "TTL {escape}"}}'.encode())
        assert status == 400 and data["error"]["message"].startswith("text: U+")
    assert len(files(service.vault) - before) == 1
    readable(service.vault)


def test_mcp_refuses_with_a_one_line_tool_error(service: MemoryService) -> None:
    here = CurrentProject(key="github.com/acme/api")
    outcome = call_tool(service, "memory_remember", {"text": "the queue \x00 is sqs"}, here)
    assert outcome.is_error and outcome.text.startswith("error: text: U+0000 (NUL") and "\n" not in outcome.text
    outcome = call_tool(service, "memory_remember", {"text": "the queue is sqs", "title": "Queue \ud800"}, here)
    assert outcome.is_error and "title: U+D800" in outcome.text
    memory_id = call_tool(service, "memory_remember", {"text": "The queue is SQS."}, here).structured["id"]
    outcome = call_tool(service, "memory_correct", {"id": memory_id, "text": "The queue is \x1b Kafka."}, here)
    assert outcome.is_error and "text: U+001B (ESC" in outcome.text
    readable(service.vault)


# ---------------------------------------------------------------- a file that would not read back


@pytest.fixture
def broken_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The renderer puts a NUL into every body: what it would write no longer reads back."""
    real = store.render
    monkeypatch.setattr(store, "render", lambda memory, original=None: real(memory, original) + "\x00")


def test_a_write_that_would_not_read_back_is_not_acknowledged(vault: Vault, broken_writer: None) -> None:
    before = files(vault)
    events = len(list(vault.journal.events()))
    with pytest.raises(UnreadableWrite, match=r"would not read back .*NUL byte"):
        vault.add(NewMemory("Backups run nightly at 02:00."))
    with pytest.raises(UnreadableWrite):
        vault.import_jsonl([json.dumps({"body": "Backups are kept for 30 days."})])
    nothing_written(vault, before)
    assert len(list(vault.journal.events())) == events


def test_the_servers_answer_an_error_for_a_write_that_would_not_read_back(service: MemoryService,
                                                                          broken_writer: None) -> None:
    before = files(service.vault)
    with http_api.running(service) as served:
        status, data = post(served, "remember", b'{"text": "Backups run nightly."}')
    assert status == 500 and data["error"]["kind"] == "UnreadableWrite" and "created" not in data
    outcome = call_tool(service, "memory_remember", {"text": "Backups run nightly."}, CurrentProject(key="p"))
    assert outcome.is_error and "would not read back" in outcome.text
    nothing_written(service.vault, before)
