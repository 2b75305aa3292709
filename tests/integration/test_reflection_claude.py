"""ClaudeLlm.reflect against the real anthropic SDK, with canned replies through an httpx2 mock transport."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest

from vault_engine.config import LlmSettings
from vault_engine.errors import LlmUnavailable, ReflectionFailed
from vault_engine.ingest.reflection import reflect
from vault_engine.llm.base import Delta
from vault_engine.llm.claude import ClaudeLlm
from vault_engine.vault import NewMemory, Vault

KEY = "sk-ant-test-0123456789abcdef"
SETTINGS = LlmSettings(provider="anthropic", fast_model="fast-model", strong_model="strong-model",
                       timeout=5.0, max_retries=0)
T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
EVIDENCE = [{"kind": "feedback", "memory": "m-1", "payload": {"outcome": "overridden"}, "ts": "2030-01-01T11:00:00Z"}]
MEMORIES = [{"id": "m-1", "title": "Port", "text": "Staging runs on port 5433.", "authority": "inferred",
             "lifecycle": "trial", "applied": {"overridden": 1}}]


def tool_reply(value: dict[str, Any], name: str = "propose_deltas") -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "strong-model",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": value}],
        "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
    })


@dataclass
class Api:
    reply: httpx2.Response
    requests: list[httpx2.Request] = field(default_factory=list)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.reply

    def llm(self) -> ClaudeLlm:
        client = httpx2.Client(transport=httpx2.MockTransport(self.handler))
        return ClaudeLlm(SETTINGS, KEY, http_client=client, sleep=lambda _: None)

    def body(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.requests[-1].content)
        return value


def test_reflect_proposes_deltas_through_the_tool() -> None:
    api = Api(tool_reply({"deltas": [
        {"op": "update", "target": "m-1", "title": "Staging port", "text": "Staging runs on port 6543.",
         "reason": "The agent was overridden: the port moved."},
        {"op": "create", "target": "", "title": "Ask first", "text": "Ask before changing ports.",
         "reason": "  Overrides   show it. "},
        {"op": "noop", "reason": "nothing else"},
    ]}))
    deltas = api.llm().reflect(EVIDENCE, MEMORIES)
    assert deltas == [
        Delta("update", "m-1", "Staging port", "Staging runs on port 6543.",
              "The agent was overridden: the port moved."),
        Delta("create", None, "Ask first", "Ask before changing ports.", "Overrides show it."),
        Delta("noop", None, "", "", "nothing else"),
    ]
    body = api.body()
    assert body["model"] == "strong-model"
    assert [t["name"] for t in body["tools"]] == ["propose_deltas"]
    assert body["tool_choice"] == {"type": "tool", "name": "propose_deltas"}
    item = body["tools"][0]["input_schema"]["properties"]["deltas"]["items"]
    assert item["properties"]["op"]["enum"] == ["create", "update", "supersede", "forget", "noop"]
    prompt = body["messages"][0]["content"]
    assert "Staging runs on port 5433." in prompt and "overridden" in prompt and "explicit" in prompt


def test_an_empty_list_is_nothing_to_learn() -> None:
    assert Api(tool_reply({"deltas": []})).llm().reflect(EVIDENCE, MEMORIES) == []


@pytest.mark.parametrize(("reply", "why"), [
    ({"deltas": [{"op": "rewrite", "target": "m-1", "text": "x", "reason": "r"}]}, "op is not one of"),
    ({"deltas": [{"op": "update", "text": "x", "reason": "r"}]}, "(update) has no target"),
    ({"deltas": [{"op": "forget", "target": "  ", "reason": "r"}]}, "(forget) has no target"),
    ({"deltas": [{"op": "create", "text": " ", "reason": "r"}]}, "(create) has no text"),
    ({"deltas": [{"op": "update", "target": "m-1", "reason": "r"}]}, "(update) has no text"),
    ({"deltas": [{"op": "noop", "reason": 3}]}, "reason is not a string"),
    ({"deltas": ["forget m-1"]}, "is not an object"),
    ({"deltas": "none"}, "deltas is not a list"),
    ({}, "deltas is not a list"),
])
def test_a_malformed_reply_is_unusable(reply: dict[str, Any], why: str) -> None:
    with pytest.raises(LlmUnavailable) as info:
        Api(tool_reply(reply)).llm().reflect(EVIDENCE, MEMORIES)
    assert why in str(info.value) and "propose_deltas" in str(info.value)
    assert KEY not in str(info.value) and info.value.exit_code == 75


def test_reflection_with_claude_end_to_end(vault: Vault) -> None:
    old = vault.add(NewMemory(text="Staging runs on port 5433.", authority="inferred")).id
    vault.feedback(old, "overridden")
    api = Api(tool_reply({"deltas": [{"op": "update", "target": old, "title": "Staging port",
                                      "text": "Staging runs on port 6543.", "reason": "overridden"}]}))
    [outcome] = reflect(vault, llm=api.llm(), now=T0).outcomes
    new = vault.entry(str(outcome.id)).memory
    assert (new.authority, new.lifecycle, new.supersedes, new.title) == ("inferred", "trial", old, "Staging port")
    assert vault.entry(old).memory.superseded_by == new.id
    assert vault.replay_diff() == []
    assert old in api.body()["messages"][0]["content"]


def test_a_malformed_reply_is_a_failed_reflection_kept_for_retry(vault: Vault) -> None:
    old = vault.add(NewMemory(text="Staging runs on port 5433.", authority="inferred")).id
    vault.feedback(old, "overridden")
    api = Api(tool_reply({"deltas": [{"op": "rewrite", "target": old, "reason": "r"}]}))
    with pytest.raises(ReflectionFailed) as info:
        reflect(vault, llm=api.llm(), now=T0)
    assert info.value.attempt == 1 and "unusable" in str(info.value)
    assert [e.payload["attempt"] for e in vault.journal.events(("reflection-failed",))] == [1]
    assert vault.entry(old).memory.lifecycle == "trial"
