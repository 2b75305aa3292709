"""memvault mcp's early handshake: which first lines it answers, for which command lines, with what."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault_engine.server import mcp_handshake
from vault_engine.server.mcp_handshake import handshake, initialize_result, serves_mcp

HELLO = {"jsonrpc": "2.0", "id": 7, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}


def line(message: object) -> str:
    return json.dumps(message) + "\n"


def test_the_versions_are_the_mcp_librarys_handshake_versions() -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    assert tuple(HANDSHAKE_PROTOCOL_VERSIONS) == mcp_handshake.HANDSHAKE_VERSIONS
    assert mcp_handshake.HANDSHAKE_VERSIONS[-1] == LATEST_HANDSHAKE_VERSION


@pytest.mark.parametrize(("asked", "answered"), [
    ("2024-11-05", "2024-11-05"), ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
    ("1999-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25"),
])
def test_the_client_gets_its_version_when_it_is_known_else_the_newest(asked: str, answered: str) -> None:
    found = handshake(line({**HELLO, "params": {**HELLO["params"], "protocolVersion": asked}}))
    assert found is not None
    request_id, answer = found
    assert request_id == 7 and answer.endswith("\n") and "\n" not in answer[:-1]
    message = json.loads(answer)
    assert message == {"jsonrpc": "2.0", "id": 7, "result": initialize_result(asked)}
    assert message["result"]["protocolVersion"] == answered
    assert message["result"]["serverInfo"]["name"] == "memvault"


def test_a_string_id_is_echoed_as_a_string() -> None:
    found = handshake(line({**HELLO, "id": "abc"}))
    assert found is not None and json.loads(found[1])["id"] == "abc"


@pytest.mark.parametrize("first", [
    "not json\n", "[]\n", line({**HELLO, "method": "tools/list"}), line({**HELLO, "jsonrpc": "1.0"}),
    line({k: v for k, v in HELLO.items() if k != "id"}), line({**HELLO, "id": True}), line({**HELLO, "id": 1.5}),
    line({**HELLO, "params": None}), line({**HELLO, "params": {"capabilities": {}, "clientInfo": {}}}),
    line({**HELLO, "params": {**HELLO["params"], "clientInfo": {"name": "c"}}}),
    line({**HELLO, "params": {**HELLO["params"], "protocolVersion": 20250618}}),
    line({**HELLO, "params": {**HELLO["params"], "_meta": {"io.modelcontextprotocol/protocolVersion": "x"}}}),
    line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
])
def test_anything_but_a_plain_initialize_is_left_to_the_server(first: str) -> None:
    assert handshake(first) is None


@pytest.mark.parametrize(("argv", "expected"), [
    (["mcp"], True),
    (["mcp", "--no-watch", "--no-http", "--json"], True),
    (["mcp", "--project", "github.com/a/b"], True),
    (["mcp", "--project=github.com/a/b"], True),
    (["--vault", "v", "mcp"], Path("v")),
    (["--vault=v", "mcp"], Path("v")),
    (["mcp", "--vault", "v"], Path("v")),
    (["--json", "mcp"], True),
    (["mcp", "--help"], False),
    (["mcp", "-h"], False),
    (["--help"], False),
    (["serve"], False),
    (["mcp", "--vault"], False),
    (["mcp", "--unknown"], False),
    (["--project", "x", "mcp"], False),
    (["mcp", "extra"], False),
    (["hook", "claude-code", "SessionStart"], False),
    ([], False),
])
def test_only_a_command_line_it_knows_to_be_mcp_is_answered_early(argv: list[str], expected: Path | bool) -> None:
    assert serves_mcp(argv) == expected


def test_only_a_first_page_tools_list_request_is_recognised() -> None:
    from vault_engine.server.mcp_handshake import tools_request

    assert tools_request(line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})) == 2
    assert tools_request(line({"jsonrpc": "2.0", "id": "x", "method": "tools/list", "params": {}})) == "x"
    assert tools_request(line({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "c"}})) is None
    progress = {"_meta": {"progressToken": 0}}  # as Codex asks
    assert tools_request(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": progress})) == 1
    other = {"_meta": {"progressToken": 0, "x": 1}}
    assert tools_request(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": other})) is None
    assert tools_request(line({"jsonrpc": "2.0", "method": "tools/list"})) is None
    assert tools_request(line({"jsonrpc": "2.0", "id": 2, "method": "tools/call"})) is None
    assert tools_request("garbage\n") is None


def test_a_tools_list_answer_is_kept_without_its_id_and_given_back_under_the_next_one(tmp_path: Path) -> None:
    from vault_engine.server.mcp_handshake import KEPT_ID, _kept_tools, keep_tools

    answer = '{"jsonrpc":"2.0","id":"req-1","result":{"tools":[{"name":"memory_search"}]}}\n'
    path = tmp_path / "cache" / "mcp-tools-x.json"
    assert keep_tools(path, "req-1", answer)
    kept = _kept_tools(path)
    assert kept == '{"jsonrpc":"2.0",' + KEPT_ID + '"result":{"tools":[{"name":"memory_search"}]}}\n'
    assert kept.replace(KEPT_ID, '"id":"req-1",', 1) == answer
    paged = '{"jsonrpc":"2.0","id":3,"result":{"tools":[],"nextCursor":"2"}}\n'
    assert not keep_tools(tmp_path / "paged.json", 3, paged)  # a first page of several is not the list
    assert not keep_tools(tmp_path / "other.json", 4, answer)  # not the answer to that request
    path.write_text("something else\n")
    assert _kept_tools(path) is None
