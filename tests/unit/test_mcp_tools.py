"""The MCP tools without a subprocess: schemas, argument checks, renderings, error mapping, and the
server object driven in-process by the SDK's client (on a vault with the fake embedder)."""

from __future__ import annotations

import dataclasses
import subprocess
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from vault_engine.errors import InvalidInput, MemoryNotFound
from vault_engine.format.memory import AUTHORITIES, OUTCOMES, SCOPES, TRUSTS, TYPES
from vault_engine.index.fakes import HashEmbedder
from vault_engine.server import mcp as mcp_server
from vault_engine.server.mcp import (
    TOOLS,
    TOOLS_BY_NAME,
    CurrentProject,
    build_server,
    call_tool,
    check_arguments,
    failure,
    render_context,
    render_feedback,
    render_remember,
    render_search,
)
from vault_engine.server.service import MemoryService
from vault_engine.vault import Vault

PROJECT = "github.com/acme/api"


class Here(CurrentProject):
    """The current project, fixed for tests."""

    def key(self) -> str | None:
        return PROJECT


@pytest.fixture
def service(vault: Vault) -> MemoryService:
    return MemoryService(Vault(vault.root, auto_sync=True, embedder=HashEmbedder()), source="tool:mcp",
                         default_project=lambda: PROJECT)


def ok(service: MemoryService, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    outcome = call_tool(service, tool, arguments, Here())
    assert not outcome.is_error, outcome.text
    return outcome.text, outcome.structured


def error(service: MemoryService, tool: str, **arguments: Any) -> str:
    outcome = call_tool(service, tool, arguments, Here())
    assert outcome.is_error and outcome.text.startswith("error: ") and "\n" not in outcome.text
    assert outcome.structured["error"]["message"] in outcome.text
    return outcome.text


# ---------------------------------------------------------------- schemas


def test_schemas_are_valid_and_match_the_vocabularies() -> None:
    from jsonschema import Draft202012Validator

    assert [spec.name for spec in TOOLS] == ["memory_context", "memory_search", "memory_read", "memory_remember",
                                             "memory_correct", "memory_forget", "memory_feedback"]
    for spec in TOOLS:
        Draft202012Validator.check_schema(spec.input_schema)
        Draft202012Validator.check_schema(spec.output_schema)
        assert set(spec.input_schema["required"]) <= set(spec.input_schema["properties"])
        assert len(spec.description) > 200 and len(spec.title) < 40
    props = {spec.name: spec.input_schema["properties"] for spec in TOOLS}
    assert props["memory_remember"]["type"]["enum"] == list(TYPES)
    assert props["memory_remember"]["scope"]["enum"] == list(SCOPES)
    assert props["memory_remember"]["authority"]["enum"] == list(AUTHORITIES)
    assert props["memory_search"]["trust"]["items"]["enum"] == [*TRUSTS, "any"]
    assert props["memory_feedback"]["outcome"]["enum"] == list(OUTCOMES)
    assert props["memory_read"]["depth"] == {**props["memory_read"]["depth"], "enum": [0, 1, 2], "default": 1}


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("memory_read", {}, "id is required"),
    ("memory_read", {"id": None}, "id is required"),
    ("memory_read", {"id": "m-1", "depth": 3}, "depth must be one of 0, 1, 2, got 3"),
    ("memory_read", {"id": "m-1", "depth": True}, "depth must be a whole number, got True"),
    ("memory_read", {"id": "m-1", "depth": "deep"}, "depth must be a whole number, got 'deep'"),
    ("memory_read", {"id": "m-1", "detail": 1}, "unknown argument 'detail' for memory_read; it takes id, depth"),
    ("memory_search", {"query": ["a"]}, "query must be a string, got ['a']"),
    ("memory_search", {"query": "a", "limit": 101}, "limit must be from 1 to 100, got 101"),
    ("memory_search", {"query": "a", "types": ["fact", "bogus"]}, "unknown type 'bogus'; expected one of "),
    ("memory_search", {"query": "a", "trust": ["high"]}, "unknown trust level 'high'; expected one of "),
    ("memory_search", {"query": "a", "trust": "high"}, "trust must be a list, got 'high'"),
    ("memory_search", {"query": "a", "types": {"fact": 1}}, "types must be a list, got {'fact': 1}"),
    ("memory_context", {"task": ""}, "task must not be empty"),
    ("memory_context", {"task": "t", "budget": -1}, "budget must be from 0 to 200000, got -1"),
    ("memory_context", {"task": "t", "record": "maybe"}, "record must be true or false, got 'maybe'"),
    ("memory_feedback", {"id": "m-1", "outcome": "great"}, "unknown outcome 'great'; expected one of "
                                                            "used-successfully, ignored"),
    ("memory_remember", {"text": "x" * 200_001}, "text is too long (200001 characters; at most 200000)"),
    ("memory_remember", {"text": "x", "tags": ["t"] * 51}, "tags has too many items (51; at most 50)"),
])
def test_bad_arguments_are_named(tool: str, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_arguments(TOOLS_BY_NAME[tool], arguments)
    assert caught.value.one_line().startswith(message)


def test_harmless_mismatches_are_mended() -> None:
    spec = TOOLS_BY_NAME["memory_search"]
    assert check_arguments(spec, {"query": "q", "limit": 5.0, "types": ["fact"], "path": None}) == \
        {"query": "q", "limit": 5, "types": ["fact"]}
    assert check_arguments(TOOLS_BY_NAME["memory_read"], {"id": "m-1", "depth": "2"}) == {"id": "m-1", "depth": 2}
    assert check_arguments(TOOLS_BY_NAME["memory_remember"], {"text": "t", "force": "true"})["force"] is True


# ---------------------------------------------------------------- renderings


def test_search_rendering_lists_hits_reasons_and_the_trash() -> None:
    result = {
        "query": "deploy", "notice": "notice: built the search indexes (3 added)",
        "hits": [{"id": "m-1", "title": "Deploys", "score": 1.23456, "summary": "Use the pipeline.", "type": "fact",
                  "scope": "project", "project": PROJECT, "lifecycle": "trial",
                  "why": ["full text: rank 1", "vector trigger: not in the top candidates", "full text: no match",
                          "fused: fts #1 x1", "boosts: recency x1.1"]}],
        "revivable": [{"id": "m-2", "title": "Old deploys", "score": 0.7, "path": "trash/x.md",
                       "restore": "memvault trash restore m-2"}],
    }
    assert render_search(result).splitlines() == [
        "notice: built the search indexes (3 added)",
        '1 memory match "deploy" (open one with memory_read):',
        f"- m-1  Deploys  (score 1.235; fact, project {PROJECT}, trial): Use the pipeline. [why: full text: rank 1]",
        "In the trash but relevant (the user can restore one with `memvault trash restore ID`):",
        "- m-2  Old deploys  (score 0.700)",
    ]
    assert render_search({"query": "nothing", "hits": [], "revivable": []}) == 'No memory matches "nothing".'


def test_search_and_remember_renderings_name_the_project() -> None:
    hit = {"id": "m-1", "title": "Deploys", "score": 1.0, "type": "fact", "why": []}
    narrowed = render_search({"query": "deploy", "project": PROJECT, "hits": [hit], "revivable": []})
    assert narrowed.splitlines()[0] == (f'1 memory match "deploy" in {PROJECT} and the global memories (open one '
                                        "with memory_read; all_projects: true searches every project):")
    assert render_search({"query": "x", "project": PROJECT, "hits": [], "revivable": []}) == (
        f'No memory matches "x" in {PROJECT} and the global memories (all_projects: true searches every project).')
    assert render_remember({"id": "m-1", "path": "memories/projects/a/x.md", "created": True, "project": PROJECT}) \
        == f"Remembered m-1 in project {PROJECT} (memories/projects/a/x.md)."
    assert render_remember({"id": "m-1", "path": "memories/global/x.md", "created": True, "project": None}) \
        == "Remembered m-1 (memories/global/x.md)."


def test_the_service_scopes_search_and_remember_to_its_project(service: MemoryService) -> None:
    _, added = ok(service, "memory_remember", text="The API keys rotate monthly.")
    assert (added["scope"], added["project"]) == ("project", PROJECT)
    _, other = ok(service, "memory_remember", text="The web keys rotate weekly.", project="github.com/acme/web")
    _, found = ok(service, "memory_search", query="keys rotate")
    ids = [hit["id"] for hit in found["hits"]]
    assert found["project"] == PROJECT and added["id"] in ids and other["id"] not in ids
    _, wide = ok(service, "memory_search", query="keys rotate", all_projects=True)
    assert wide["project"] is None and other["id"] in [hit["id"] for hit in wide["hits"]]
    assert "exclude each other" in error(service, "memory_search", query="x", project=PROJECT, all_projects=True)


def test_context_rendering_speaks_in_tools() -> None:
    markdown = ("<memory-context>\nTask: t\n\n## May apply (open one with `memvault show ID --depth 2`)\n\n"
                "- `m-1` **A**\n\nAfter the task, report what helped: `memvault feedback ID --outcome "
                "used-successfully --application e-9` (or ignored).\n</memory-context>\n")
    text = render_context({"markdown": markdown, "application": "e-9", "note": None})
    assert "memvault" not in text.replace("<memory-context>", "").replace("</memory-context>", "")
    assert "open one with memory_read, depth 1 or 2" in text
    assert "memory_feedback with each applied id, outcome used-successfully and application e-9" in text
    cut = render_context({"markdown": "<memory-context>\n</memory-context>\n", "application": "e-7", "note": None})
    assert cut.endswith("Application id: e-7 (pass it to memory_feedback for each memory you applied).\n")
    assert render_context({"markdown": "", "application": None, "note": "retrieval is off"}) == \
        "No memories apply to this task.\n(retrieval is off)\n"


def test_feedback_rendering() -> None:
    base = {"id": "m-1", "outcome": "used-successfully", "old_lifecycle": "trial", "lifecycle": "proven",
            "application": "e-1"}
    assert render_feedback({**base, "action": "promoted"}) == \
        "Recorded used-successfully for m-1: promoted from trial to proven."
    assert render_feedback({**base, "action": "already-recorded"}).startswith("Already recorded used-successfully")
    assert render_feedback({**base, "action": "recorded", "old_lifecycle": "proven"}) == \
        "Recorded used-successfully for m-1 (lifecycle proven)."


# ---------------------------------------------------------------- calls on a real vault


def test_tools_round_trip(service: MemoryService) -> None:
    text, added = ok(service, "memory_remember", text="Integration tests need the docker compose stack running.",
                     scope="project", paths=["tests/integration/**"], type="procedure")
    assert added["created"] and text.startswith(f"Remembered {added['id']}")
    _, found = ok(service, "memory_search", query="docker compose integration tests")
    assert found["hits"][0]["id"] == added["id"]
    _, view = ok(service, "memory_read", id=added["id"], depth=2)
    assert view["body"].startswith("Integration tests need") and view["depth"] == 2
    _, view = ok(service, "memory_read", id=added["id"], depth=1)
    assert (view["metadata"]["project"], view["metadata"]["source"]) == (PROJECT, "tool:mcp")

    text, manifest = ok(service, "memory_context", task="run the integration tests",
                        path="tests/integration/test_api.py")
    delivered = [item["id"] for item in manifest["resident"] + manifest["manifest"]]
    assert manifest["project"] == PROJECT and added["id"] in delivered
    assert manifest["application"] in text
    _, feedback = ok(service, "memory_feedback", id=added["id"], outcome="ignored",
                     application=manifest["application"])
    assert feedback["applied"]["ignored"] == 1

    _, new = ok(service, "memory_correct", id=added["id"], text="Integration tests start their own containers.")
    assert new["related"] == added["id"]
    text, gone = ok(service, "memory_forget", id=new["id"])
    assert gone["path"].startswith("trash/") and "memvault trash restore" in text


def test_wrong_types_are_refused_and_only_a_models_plain_slips_mended(service: MemoryService) -> None:
    for arguments, words in (
        ({"text": "Just this once, skip the e2e tests.", "force": "yes"}, "force must be true or false, got 'yes'"),
        ({"text": "Staging is at staging.acme.dev.", "tags": 5}, "tags must be a list, got 5"),
        ({"text": "Staging is at staging.acme.dev.", "tags": [5]}, "tag must be a string, got 5"),
        ({"text": "Staging is at staging.acme.dev.", "tags": [""]}, "tag must not be empty"),
        ({"text": "Staging is at staging.acme.dev.", "tags": "abc"}, "tags must be a list, got 'abc'"),
    ):
        assert error(service, "memory_remember", **arguments) == f"error: {words}"
    assert service.vault.status().memories == 0
    assert error(service, "memory_search", query="staging", types="fact") == "error: types must be a list, got 'fact'"
    refused = call_tool(service, "memory_search", {"query": "staging", "types": "fact"}, Here())
    assert refused.structured["error"]["kind"] == "InvalidInput"
    _, added = ok(service, "memory_remember", text="Staging is at staging.acme.dev.", tags=["staging"], force="true")
    assert service.vault.entry(added["id"]).memory.tags == ("staging",)


def test_the_text_an_agent_reads_runs_no_terminal_sequence(service: MemoryService) -> None:
    """The agent's client shows tool results in a terminal: a control character in a title is shown, not run."""
    _, added = ok(service, "memory_remember", text="Deploys need the release checklist.",
                  title="Deploy \x9b31mchecklist\x9b0m \x7f")
    for tool, arguments in (("memory_search", {"query": "deploy release checklist"}),
                            ("memory_read", {"id": added["id"], "depth": 2}),
                            ("memory_context", {"task": "deploy with the release checklist", "overview": True})):
        text, structured = ok(service, tool, **arguments)
        assert "Deploy \\x9b31mchecklist\\x9b0m \\x7f" in text, tool
        assert not any("\x7f" <= char <= "\x9f" or char == "\x1b" for char in text), tool
    assert structured["manifest"][0]["title"] == "Deploy \x9b31mchecklist\x9b0m \x7f"  # the JSON stays exact


def test_failures_become_one_line_errors(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    assert error(service, "memory_read", id="m-01zzzzzzzzzzzzzzzzzzzzzzzz") == \
        "error: no memory with id 'm-01zzzzzzzzzzzzzzzzzzzzzzzz'"
    assert error(service, "memory_forget", id="Robert'); DROP TABLE").startswith("error: not a memory id")
    assert error(service, "memory_unknown").startswith("error: unknown tool 'memory_unknown'")

    def boom(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("index exploded\non two lines")

    monkeypatch.setattr(service, "search", boom)
    outcome = call_tool(service, "memory_search", {"query": "x"}, Here())
    assert outcome.is_error and outcome.text == "error: internal error (RuntimeError: index exploded on two lines)"
    assert outcome.structured == {"error": {"kind": "InternalError",
                                            "message": "internal error (RuntimeError: index exploded on two lines)"}}
    assert failure(MemoryNotFound("no memory with id 'm-1'")).structured == \
        {"error": {"kind": "MemoryNotFound", "message": "no memory with id 'm-1'"}}


def test_a_rendering_bug_does_not_fail_a_done_call(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_result: Any) -> str:
        raise KeyError("gone")

    spec = dataclasses.replace(TOOLS_BY_NAME["memory_remember"], render=broken)
    monkeypatch.setitem(mcp_server.TOOLS_BY_NAME, "memory_remember", spec)
    outcome = call_tool(service, "memory_remember", {"text": "Lint with ruff."}, Here())
    assert not outcome.is_error and outcome.structured["created"] and f'"{outcome.structured["id"]}"' in outcome.text


def test_absolute_paths_become_relative_to_the_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    here = CurrentProject(tmp_path)
    assert here.relative(str(tmp_path / "src" / "app.py")) == "src/app.py"
    assert here.relative("src/app.py") == "src/app.py"
    assert here.relative("/elsewhere/app.py") == "/elsewhere/app.py"
    assert here.key() is not None and here.key() == here.key()


def test_service_calls_share_one_thread(service: MemoryService) -> None:
    """The open indexes hold SQLite connections, which belong to one thread: every call runs on the service's."""
    first = service._run(threading.get_ident)
    second = anyio.run(anyio.to_thread.run_sync, lambda: service._run(threading.get_ident))
    assert first == second != threading.get_ident()
    with pytest.raises(ZeroDivisionError):
        service._run(lambda: 1 / 0)


def test_the_server_in_process(service: MemoryService) -> None:
    """The SDK's client against the server object (the modern protocol, no handshake), output schemas checked."""
    from mcp import Client

    async def session() -> None:
        async with Client(build_server(service, here=Here())) as client:
            assert "memory_context" in (client.instructions or "")
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == [spec.name for spec in TOOLS]
            added = await client.call_tool("memory_remember", {"text": "Releases are tagged vX.Y.Z."})
            assert not added.is_error and added.structured_content["created"] is True
            memory_id = added.structured_content["id"]
            for depth in (0, 1, 2):
                view = await client.call_tool("memory_read", {"id": memory_id, "depth": depth})
                assert not view.is_error and view.structured_content["depth"] == depth
            for tool, arguments in (("memory_search", {"query": "release tags"}),
                                    ("memory_context", {"task": "cut a release"})):
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, result.content
            failed = await client.call_tool("memory_read", {"id": memory_id, "depth": 7})
            assert failed.is_error
            assert getattr(failed.content[0], "text", None) == "error: depth must be one of 0, 1, 2, got 7"

    anyio.run(session)
