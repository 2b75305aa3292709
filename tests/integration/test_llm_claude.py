"""ClaudeLlm against the real anthropic SDK, with canned replies through an httpx2 mock transport."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

from vault_engine.config import LlmSettings
from vault_engine.errors import LlmUnavailable
from vault_engine.llm.base import Digest, Sense, Turn
from vault_engine.llm.claude import BACKOFF_CAP, ClaudeLlm

KEY = "sk-ant-test-0123456789abcdef"
SETTINGS = LlmSettings(provider="anthropic", fast_model="fast-model", strong_model="strong-model",
                       timeout=5.0, max_retries=3)
DIGEST_INPUT: dict[str, Any] = {
    "title": "Rotating the staging deploy keys",
    "summary": "The deploy keys are rotated with the vault command, then the deploy job restarts.",
    "trigger": "When I need to rotate deploy keys on staging",
    "recall": "active",
    "tags": ["deploy", "staging"],
}
Reply = httpx2.Response | Exception


def tool_reply(name: str, value: dict[str, Any]) -> httpx2.Response:
    return message([{"type": "tool_use", "id": "toolu_1", "name": name, "input": value}], "tool_use")


def message(content: list[dict[str, Any]], stop_reason: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "fast-model", "content": content,
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
    })


def status(code: int, kind: str, headers: dict[str, str] | None = None, text: str = "no") -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": text}}
    return httpx2.Response(code, json=body, headers=headers or {})


@dataclass
class Api:
    """A scripted API: each request takes the next reply (the last one repeats) and is recorded."""

    replies: list[Reply]
    requests: list[httpx2.Request] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply

    def llm(self, settings: LlmSettings = SETTINGS) -> ClaudeLlm:
        client = httpx2.Client(transport=httpx2.MockTransport(self.handler))
        return ClaudeLlm(settings, KEY, http_client=client, sleep=self.sleeps.append)

    def body(self, n: int = -1) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.requests[n].content)
        return value


@pytest.fixture
def api() -> Callable[..., Api]:
    return lambda *replies: Api(list(replies))


def unavailable(call: Callable[[], object]) -> str:
    with pytest.raises(LlmUnavailable) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and KEY not in message and KEY[:12] not in message
    assert info.value.exit_code == 75
    return message


# ---------------------------------------------------------------- the three methods


def test_name_reports_the_fast_model(api: Callable[..., Api]) -> None:
    assert api().llm().name == "anthropic:fast-model"


def test_sense(api: Callable[..., Api]) -> None:
    server = api(tool_reply("report_topic", {"topic_shift": True, "load": 0.35}))
    buffer = [Turn("user", "How do I rotate the deploy keys?"), Turn("assistant", "With the vault command.")]
    assert server.llm().sense(buffer, Turn("user", "Any good bread recipes?")) == Sense(True, 0.35)
    body = server.body()
    assert body["model"] == "fast-model"
    assert [t["name"] for t in body["tools"]] == ["report_topic"]
    assert body["tool_choice"] == {"type": "tool", "name": "report_topic"}
    schema = body["tools"][0]["input_schema"]
    assert schema["properties"]["topic_shift"]["type"] == "boolean" and schema["required"] == ["topic_shift", "load"]
    prompt = body["messages"][0]["content"]
    assert "rotate the deploy keys" in prompt and "Any good bread recipes?" in prompt
    request = server.requests[0]
    assert request.url.path == "/v1/messages" and request.headers["authorization"] == f"Bearer {KEY}"


def test_sense_load_is_clamped(api: Callable[..., Api]) -> None:
    server = api(tool_reply("report_topic", {"topic_shift": False, "load": 1.5}))
    assert server.llm().sense([], Turn("user", "hi")) == Sense(False, 1.0)
    server = api(tool_reply("report_topic", {"topic_shift": False, "load": 0}))
    assert server.llm().sense([], Turn("user", "hi")) == Sense(False, 0.0)


def test_digest_conversation_uses_the_strong_model(api: Callable[..., Api]) -> None:
    server = api(tool_reply("write_digest", DIGEST_INPUT))
    digest = server.llm().digest("User: how do I rotate the deploy keys?", ["deploy", "staging", "python"])
    assert digest == Digest(title=DIGEST_INPUT["title"], summary=DIGEST_INPUT["summary"],
                            trigger=DIGEST_INPUT["trigger"], recall="active", tags=("deploy", "staging"))
    body = server.body()
    assert body["model"] == "strong-model"
    assert [t["name"] for t in body["tools"]] == ["write_digest"]
    assert body["tool_choice"] == {"type": "tool", "name": "write_digest"}
    schema = body["tools"][0]["input_schema"]
    assert schema["properties"]["recall"]["enum"] == ["passive", "active", "both"]
    assert schema["properties"]["tags"]["maxItems"] == 3
    prompt = body["messages"][0]["content"]
    assert "deploy, staging, python" in prompt and "reuse" in prompt
    assert "When I need" in prompt and "agent's side" in prompt
    assert "how do I rotate the deploy keys?" in prompt


def test_digest_of_a_document_uses_the_fast_model(api: Callable[..., Api]) -> None:
    server = api(tool_reply("write_digest", {**DIGEST_INPUT, "recall": "both"}))
    assert server.llm().digest("# Runbook\nRotate keys.", [], kind="document").recall == "both"
    assert server.body()["model"] == "fast-model"
    assert "(none yet)" in server.body()["messages"][0]["content"]


def test_digest_cleans_its_fields(api: Callable[..., Api]) -> None:
    reply = {**DIGEST_INPUT, "title": "T " * 200, "summary": " a\n  summary ", "trigger": "rotating keys",
             "tags": ["Deploy", "deploy", "new  tag"]}
    digest = api(tool_reply("write_digest", reply)).llm().digest("text", ["deploy"])
    assert len(digest.title) <= 120 and digest.title.endswith("…")
    assert digest.summary == "a summary"
    assert digest.trigger == "When I need rotating keys"
    assert digest.tags == ("deploy", "new tag")  # the vault's spelling, once


def test_detail(api: Callable[..., Api]) -> None:
    text = "One. Two. Three."
    server = api(tool_reply("write_detail", {"detail": text}))
    assert server.llm().detail("A long document.") == text
    body = server.body()
    assert body["model"] == "fast-model" and body["tool_choice"] == {"type": "tool", "name": "write_detail"}
    assert "3 to 8 sentences" in body["messages"][0]["content"]


# ---------------------------------------------------------------- retries


def test_rate_limit_then_success_backs_off(api: Callable[..., Api]) -> None:
    server = api(status(429, "rate_limit_error"), status(529, "overloaded_error"), status(500, "api_error"),
                 tool_reply("write_detail", {"detail": "Done."}))
    assert server.llm().detail("text") == "Done."
    assert len(server.requests) == 4 and server.sleeps == [1.0, 2.0, 4.0]


def test_retry_after_is_honoured(api: Callable[..., Api]) -> None:
    server = api(status(429, "rate_limit_error", {"retry-after": "7"}), status(429, "rate_limit_error"),
                 tool_reply("write_detail", {"detail": "Done."}))
    assert server.llm().detail("text") == "Done."
    assert server.sleeps == [7.0, 2.0]


def test_retry_after_is_capped(api: Callable[..., Api]) -> None:
    server = api(status(503, "api_error", {"retry-after": "86400"}), tool_reply("write_detail", {"detail": "Ok."}))
    assert server.llm().detail("text") == "Ok."
    assert server.sleeps == [60.0]


def test_backoff_is_capped(api: Callable[..., Api]) -> None:
    server = api(status(429, "rate_limit_error"))
    unavailable(lambda: server.llm(LlmSettings(fast_model="fast-model", max_retries=8)).detail("text"))
    assert server.sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, BACKOFF_CAP, BACKOFF_CAP, BACKOFF_CAP]


def test_persistent_rate_limit(api: Callable[..., Api]) -> None:
    server = api(status(429, "rate_limit_error"))
    message = unavailable(lambda: server.llm().sense([], Turn("user", "hi")))
    assert message == "Anthropic API rate limited (429) after 4 attempts"
    assert len(server.requests) == SETTINGS.max_retries + 1 and len(server.sleeps) == SETTINGS.max_retries


@pytest.mark.parametrize("error", [httpx2.ReadTimeout("slow"), httpx2.TimeoutException("slow")])
def test_timeouts_are_retried(api: Callable[..., Api], error: Exception) -> None:
    server = api(error, tool_reply("write_detail", {"detail": "Late."}))
    assert server.llm().detail("text") == "Late."
    server = api(error)
    assert unavailable(lambda: server.llm().detail("text")) == "Anthropic API timed out (5 s) after 4 attempts"
    assert len(server.requests) == 4


def test_connection_errors_are_retried(api: Callable[..., Api]) -> None:
    server = api(httpx2.ConnectError("refused"))
    assert "unreachable" in unavailable(lambda: server.llm().detail("text"))
    assert len(server.requests) == 4


def test_no_retries(api: Callable[..., Api]) -> None:
    server = api(status(429, "rate_limit_error"))
    settings = LlmSettings(fast_model="fast-model", max_retries=0)
    assert unavailable(lambda: server.llm(settings).detail("t")) == "Anthropic API rate limited (429) after 1 attempt"
    assert server.sleeps == []


@pytest.mark.parametrize(("code", "kind", "fragment"), [
    (401, "authentication_error", "rejected the API key (401)"),
    (403, "permission_error", "refused access (403)"),
    (404, "not_found_error", "does not know model 'fast-model' (404)"),
    (400, "invalid_request_error", "rejected the request (400): prompt is too long"),
])
def test_client_errors_are_not_retried(api: Callable[..., Api], code: int, kind: str, fragment: str) -> None:
    server = api(status(code, kind, text=f"prompt is too long {KEY}"))
    message = unavailable(lambda: server.llm().detail("text"))
    assert fragment in message
    assert len(server.requests) == 1 and server.sleeps == []


# ---------------------------------------------------------------- unusable replies


@pytest.mark.parametrize("reply", [
    message([{"type": "text", "text": "Here is my digest: ..."}], "end_turn"),
    tool_reply("write_detail", {"detail": "wrong tool"}),
    tool_reply("write_digest", {**DIGEST_INPUT, "recall": "sometimes"}),
    tool_reply("write_digest", {**DIGEST_INPUT, "tags": []}),
    tool_reply("write_digest", {**DIGEST_INPUT, "tags": ["a", "b", "c", "d"]}),
    tool_reply("write_digest", {**DIGEST_INPUT, "tags": ["a", " "]}),
    tool_reply("write_digest", {**DIGEST_INPUT, "tags": "deploy"}),
    tool_reply("write_digest", {**DIGEST_INPUT, "title": "  "}),
    tool_reply("write_digest", {**DIGEST_INPUT, "summary": 42}),
    tool_reply("write_digest", {k: v for k, v in DIGEST_INPUT.items() if k != "trigger"}),
])
def test_unusable_digest(api: Callable[..., Api], reply: httpx2.Response) -> None:
    server = api(reply)
    assert unavailable(lambda: server.llm().digest("text", ["deploy"])).startswith("Anthropic reply ")
    assert len(server.requests) == 1  # not retried


def test_no_tool_call_names_the_stop_reason(api: Callable[..., Api]) -> None:
    server = api(message([{"type": "text", "text": "..."}], "max_tokens"))
    assert "max_tokens" in unavailable(lambda: server.llm().detail("text"))


@pytest.mark.parametrize("value", [{"topic_shift": "yes", "load": 0.5}, {"topic_shift": True, "load": "high"},
                                   {"topic_shift": True, "load": True}, {"topic_shift": True}])
def test_unusable_sense(api: Callable[..., Api], value: dict[str, Any]) -> None:
    server = api(tool_reply("report_topic", value))
    assert "report_topic" in unavailable(lambda: server.llm().sense([], Turn("user", "hi")))


def test_unusable_detail(api: Callable[..., Api]) -> None:
    server = api(tool_reply("write_detail", {"detail": ""}))
    assert "write_detail detail" in unavailable(lambda: server.llm().detail("text"))


@pytest.mark.parametrize("reply", [
    httpx2.Response(200, text="<html>proxy error</html>"),
    httpx2.Response(200, json={"unexpected": True}),
    message([{"type": "tool_use", "id": "toolu_1", "name": "write_detail", "input": ["a"]}], "tool_use"),
])
def test_garbage_body(api: Callable[..., Api], reply: httpx2.Response) -> None:
    server = api(reply)
    assert unavailable(lambda: server.llm().detail("text")).startswith("Anthropic reply ")
    assert len(server.requests) == 1


def test_empty_key_is_refused() -> None:
    with pytest.raises(LlmUnavailable, match="ANTHROPIC_API_KEY"):
        ClaudeLlm(SETTINGS, " ")


# ---------------------------------------------------------------- end to end: ingestion through the SDK


def test_ingest_through_claude_keeps_turns_on_429_and_timeout_then_retries(
        api: Callable[..., Api], make_vault: Callable[..., Any]) -> None:
    """A conversation ingested while the API is rate limited or timing out loses nothing; the next call writes it."""
    from vault_engine.errors import IngestDeferred
    from vault_engine.ingest.conversation import ingest, pending_turns
    from vault_engine.llm.base import Turn

    vault = make_vault()
    turns = [Turn("user" if n % 2 == 0 else "assistant", f"Staging deploy keys, step {n}: rotate with the vault CLI.")
             for n in range(10)]
    down = api(status(429, "rate_limit_error"), httpx2.ReadTimeout("read timed out"))
    with pytest.raises(IngestDeferred) as info:
        ingest(vault, turns, session="keys", llm=down.llm())
    assert "timed out" in info.value.one_line() and KEY not in info.value.one_line()
    assert len(down.requests) == SETTINGS.max_retries + 1 and down.sleeps  # retried with backoff, then gave up
    assert pending_turns(vault, "keys") == 10  # every turn kept
    assert not [e for e in vault.scan().entries.values() if e.memory.type == "episode"]

    up = api(tool_reply("write_digest", DIGEST_INPUT))
    result = ingest(vault, [], session="keys", llm=up.llm())
    [episode] = result.episodes
    memory = vault.entry(episode.id).memory
    assert memory.title == DIGEST_INPUT["title"] and memory.trigger == DIGEST_INPUT["trigger"]
    assert all(turn.content in memory.body for turn in turns) and pending_turns(vault, "keys") == 0
    assert up.body()["model"] == SETTINGS.strong_model  # compaction uses the strong model


# ---------------------------------------------------------------- governance's questions


def test_compress_uses_the_fast_model(api: Callable[..., Api]) -> None:
    mock = api(tool_reply("write_compressed", {"text": "Run ruff and mypy before every commit."}))
    rule = "Before you commit anything at all, always run ruff, and then also run mypy, every single time."
    assert mock.llm().compress(rule) == "Run ruff and mypy before every commit."
    body = mock.body()
    assert body["model"] == "fast-model" and body["tool_choice"] == {"type": "tool", "name": "write_compressed"}
    assert rule in body["messages"][0]["content"]


@pytest.mark.parametrize(("value", "expected"), [({"answer": True, "confident": True}, True),
                                                 ({"answer": False, "confident": True}, False)])
def test_dormant_and_stale_answer_yes_or_no(api: Callable[..., Api], value: dict[str, Any], expected: bool) -> None:
    mock = api(tool_reply("report_judgement", value))
    llm = mock.llm()
    assert llm.dormant("Use the legacy VPN for the old billing host.", ["fix the signup form"]) is expected
    assert "fix the signup form" in mock.body()["messages"][0]["content"]
    assert llm.stale("In progress: migrating billing to Postgres 16.") is expected


@pytest.mark.parametrize("value", [{"answer": True, "confident": False}, {"answer": "yes", "confident": True},
                                   {"confident": True}])
def test_an_unsure_or_unusable_judgement_is_no_answer(api: Callable[..., Api], value: dict[str, Any]) -> None:
    llm = api(tool_reply("report_judgement", value)).llm()
    unavailable(lambda: llm.stale("In progress: migrating billing."))


def test_synthesize_uses_the_strong_model(api: Callable[..., Api]) -> None:
    mock = api(tool_reply("write_synthesis", {"title": "Caroline's adoption plans",
                                              "text": "Caroline researched agencies in May and applied in June."}))
    found = mock.llm().synthesize([{"id": "m-1", "title": "Agencies", "text": "Caroline looked at agencies."},
                                   {"id": "m-2", "title": "Application", "text": "Caroline applied in June."}])
    assert (found.title, found.text) == ("Caroline's adoption plans",
                                         "Caroline researched agencies in May and applied in June.")
    body = mock.body()
    assert body["model"] == "strong-model" and 'id="m-2"' in body["messages"][0]["content"]
    unavailable(lambda: api(tool_reply("write_synthesis", {"title": "x"})).llm().synthesize([]))


def test_an_unsure_judgement_is_told_from_an_unusable_one(api: Callable[..., Api]) -> None:
    from vault_engine.errors import LlmUnsure

    with pytest.raises(LlmUnsure):
        api(tool_reply("report_judgement", {"answer": True, "confident": False})).llm().dormant("A rule.", [])
    with pytest.raises(LlmUnavailable) as info:
        api(tool_reply("report_judgement", {"answer": "yes", "confident": True})).llm().stale("A note.")
    assert not isinstance(info.value, LlmUnsure)


COMMIT_RULE = ("When you write commit messages for this repository, always make sure that the subject line is "
               "written in the imperative mood and kept under 72 characters, and remember that the body should "
               "explain why the change was made rather than what it changed, because the diff already shows that.")
COMMIT_SHORT = ("Commit messages: imperative subject line under 72 characters; the body should explain why the "
                "change was made.")


def _rule_vault(make_vault: Callable[..., Any]) -> Any:
    from vault_engine.index.fakes import HashEmbedder
    from vault_engine.vault import Vault

    text = (f"---\nid: m-rule\ntitle: Commit messages\ntype: collaboration-policy\ntier: hot\n"
            f"created: 2026-04-01T09:00:00Z\n---\n{COMMIT_RULE}\n")
    return Vault(make_vault({"memories/global/commits.md": text}).root, embedder=HashEmbedder())


def test_maintain_compresses_a_hot_rule_through_the_api_once(
        api: Callable[..., Api], make_vault: Callable[..., Any]) -> None:
    from datetime import UTC, datetime

    from vault_engine.governance.classify import COMPRESSED_FROM
    from vault_engine.governance.maintain import maintain

    now = datetime(2026, 6, 1, tzinfo=UTC)
    vault = _rule_vault(make_vault)
    mock = api(tool_reply("write_compressed", {"text": COMMIT_SHORT}))
    report = maintain(vault, now=now, llm=mock.llm())
    assert [(a.kind, a.memory) for a in report.actions] == [("compress", "m-rule")]
    assert len(mock.requests) == 1 and COMMIT_RULE in mock.body()["messages"][0]["content"]
    assert mock.body()["tool_choice"] == {"type": "tool", "name": "write_compressed"}
    rule = vault.scan().get("m-rule").memory
    assert rule.body == COMMIT_SHORT + "\n"
    assert vault.scan().get(rule.extra[COMPRESSED_FROM]).memory.body == COMMIT_RULE + "\n"
    assert maintain(vault, now=now, replan=True, llm=mock.llm()).actions == [] and len(mock.requests) == 1


def test_a_rejected_or_failed_compression_through_the_api_keeps_the_rule(
        api: Callable[..., Api], make_vault: Callable[..., Any]) -> None:
    from datetime import UTC, datetime

    from vault_engine.governance.maintain import maintain

    now = datetime(2026, 6, 1, tzinfo=UTC)
    for reply in (tool_reply("write_compressed", {"text": "Write commit subjects as short orders; say why below."}),
                  status(529, "overloaded_error")):
        vault = _rule_vault(make_vault)
        before = (vault.root / "memories/global/commits.md").read_bytes()
        mock = api(reply)
        assert maintain(vault, now=now, llm=mock.llm()).actions == []
        assert (vault.root / "memories/global/commits.md").read_bytes() == before and mock.requests


def test_maintain_writes_a_synthesis_and_judges_a_stale_note_through_the_api(
        api: Callable[..., Api], make_vault: Callable[..., Any]) -> None:
    """The model's synthesis text and its stale verdict, end to end: one request each, none on the replan."""
    from datetime import UTC, datetime

    from vault_engine.format.value import SYNTHESIS_OF
    from vault_engine.governance.maintain import maintain
    from vault_engine.index.fakes import HashEmbedder
    from vault_engine.vault import Vault

    def note(memory_id: str, body: str, links: str, **keys: str) -> str:
        extra = "".join(f"{k}: {v}\n" for k, v in keys.items())
        return (f"---\nid: {memory_id}\ntitle: {json.dumps(body[:50])}\ntype: fact\nlinks: [{links}]\n{extra}"
                f"created: 2026-03-01T10:00:00Z\n---\n{body}\n")

    in_progress = ("In progress: migrating the reporting jobs from cron to the workflow scheduler, one job a week. "
                   "The invoices job moved first; the payroll and the audit exports are next, then the cleanup.")
    vault = Vault(make_vault({
        "memories/global/a.md": note("m-a", "The billing service stores invoices in Postgres 16.", "m-b"),
        "memories/global/b.md": note("m-b", "Billing backups of Postgres run nightly at 02:00 UTC.", "m-a"),
        "memories/global/c.md": note("m-c", in_progress, "", authority="inferred"),
    }).root, embedder=HashEmbedder())

    def reply(request: httpx2.Request) -> httpx2.Response:
        tool = json.loads(request.content)["tool_choice"]["name"]
        if tool == "write_synthesis":
            return tool_reply(tool, {"title": "Billing on Postgres",
                                     "text": "Billing keeps its invoices in Postgres 16 and backs them up nightly."})
        return tool_reply(tool, {"answer": True, "confident": True})

    class ByTool(Api):
        def handler(self, request: httpx2.Request) -> httpx2.Response:
            self.requests.append(request)
            return reply(request)

    mock = ByTool([])
    now = datetime(2026, 6, 1, tzinfo=UTC)
    report = maintain(vault, now=now, llm=mock.llm())
    assert sorted(a.kind for a in report.actions) == ["stale", "synthesize"]
    asked = sorted(json.loads(r.content)["tool_choice"]["name"] for r in mock.requests)
    assert asked == ["report_judgement", "write_synthesis"]
    [synthesis] = [e.memory for e in vault.scan().active() if SYNTHESIS_OF in e.memory.extra]
    assert synthesis.title == "Billing on Postgres" and synthesis.extra["synthesis_by"] == "anthropic:fast-model"
    assert synthesis.body.startswith("Billing keeps its invoices in Postgres 16 and backs them up nightly.")
    assert vault.scan().get("m-c").in_trash
    assert maintain(vault, now=now, replan=True, llm=mock.llm()).actions == [] and len(mock.requests) == 2
