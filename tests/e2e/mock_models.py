"""Loopback stand-ins for the model APIs the agent CLIs call, recording every request.

:class:`MockModels` serves, on ``127.0.0.1`` only, both wire formats at once:

- the Anthropic Messages API (Claude Code, with ``ANTHROPIC_BASE_URL`` pointing here):
  ``POST /v1/messages`` answered as server-sent events (``message_start``,
  ``content_block_start``/``_delta``/``_stop``, ``message_delta``, ``message_stop``) when
  the request asks to stream, else as one JSON message; ``POST /v1/messages/count_tokens``;
- the OpenAI Responses API (Codex, with a ``model_provider`` whose ``base_url`` is
  ``http://127.0.0.1:PORT/v1`` and ``wire_api = "responses"``): ``POST /v1/responses``
  answered as events (``response.created``, ``response.output_item.added``/``done``,
  ``response.completed``);
- the Gemini API (Gemini CLI, with ``GOOGLE_GEMINI_BASE_URL`` pointing here):
  ``POST /v1beta/models/MODEL:generateContent`` answered as one JSON response, and
  ``:streamGenerateContent?alt=sse`` as server-sent events of such responses, a chunk each;
  ``:countTokens``;
- ``GET /v1/models`` and anything else a CLI asks at startup: an empty, well-formed answer.

What the model says is scripted: :attr:`MockModels.script` maps a request to a :class:`Reply`
(text, or a call of a tool by name).  The default script answers text that quotes the last
thing the user said, and, once a tool's result comes back, a final text.  Each request is kept
as a :class:`Recorded` (with the time it arrived), so a test reads what the agent sent the model.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REQUEST_LIMIT = 64 << 20  # bytes of one request body the mock reads at most


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model answers: ``text``, then (when ``tool`` is set) a call of that tool with ``arguments``."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    namespace: str | None = None  # Responses API: the namespace the tool is offered in (Codex's MCP servers)
    thought: str = ""  # Gemini API: a thought part (the model's reasoning) before the text


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request as it arrived."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the JSON body (None when there was none or it was not JSON)
    at: float  # time.time() when it arrived

    @property
    def api(self) -> str:
        """``anthropic``, ``openai``, ``gemini`` or ``other``."""
        if self.path.startswith("/v1/messages") and not self.path.startswith("/v1/messages/count_tokens"):
            return "anthropic"
        if self.path.startswith("/v1/responses"):
            return "openai"
        if ":generateContent" in self.path or ":streamGenerateContent" in self.path:
            return "gemini"
        return "other"

    @property
    def is_turn(self) -> bool:
        """A request for the model's answer in the conversation (tools offered), not a side request such as
        a title or a quota check."""
        return self.api != "other" and isinstance(self.body, dict) and bool(self.body.get("tools"))

    def text(self) -> str:
        """Everything the request gives the model as text (system prompt, messages, tool results), joined."""
        if not isinstance(self.body, dict):
            return ""
        parts: list[str] = []
        for key in ("system", "instructions", "messages", "input", "systemInstruction", "contents"):
            _texts(self.body.get(key), parts)
        return "\n".join(parts)

    def tool_names(self) -> list[str]:
        """The names of the tools offered to the model; a tool in a namespace (Responses API) as
        ``NAMESPACE__NAME``, the form Claude Code gives an MCP server's tools."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        names: list[str] = []
        for tool in tools or []:
            if not isinstance(tool, dict):
                continue
            if isinstance(tool.get("functionDeclarations"), list):  # Gemini: one entry holds them all
                names += [str(t["name"]) for t in tool["functionDeclarations"] if isinstance(t, dict) and t.get("name")]
            elif tool.get("type") == "namespace":
                names += [f"{tool['name']}__{t['name']}" for t in tool.get("tools") or []
                          if isinstance(t, dict) and t.get("name")]
            elif tool.get("name"):
                names.append(str(tool["name"]))
        return names

    def last_user_text(self) -> str:
        """The text of the last user message (both wire formats)."""
        items: Any = []
        if isinstance(self.body, dict):
            items = self.body.get("messages") or self.body.get("input") or self.body.get("contents") or []
        if isinstance(items, str):
            return items
        for item in reversed(items):
            if isinstance(item, dict) and item.get("role") == "user":
                parts: list[str] = []
                _texts(item.get("content") or item.get("parts"), parts, results=False)
                said = [p for p in parts if not p.lstrip().startswith("<system-reminder>")]
                if said:
                    return said[-1]  # the CLI puts its own notes in blocks before the person's words
        return ""

    def tool_results(self) -> list[str]:
        """The tool results the request carries back to the model (both wire formats)."""
        out: list[str] = []
        body = self.body if isinstance(self.body, dict) else {}
        items = body.get("messages") or body.get("input") or body.get("contents") or []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call_output":
                _texts(item.get("output"), out)
            for part in item.get("parts") or [] if isinstance(item.get("parts"), list) else []:
                if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):  # Gemini
                    out.append(json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
            for block in item.get("content") or [] if isinstance(item.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    _texts(block.get("content"), out)
        return out


def _texts(value: Any, out: list[str], results: bool = True) -> None:
    """Append the text strings found in ``value`` (a string, content blocks, messages) to ``out``."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _texts(item, out, results)
    elif isinstance(value, dict):
        if not results and (value.get("type") in ("tool_result", "function_call_output")
                            or "functionResponse" in value):
            return
        if "functionResponse" in value:  # Gemini: a tool's result is a JSON object
            out.append(json.dumps(value["functionResponse"].get("response"), ensure_ascii=False))
        for key in ("text", "content", "output", "parts"):
            if key in value:
                _texts(value[key], out, results)


_replies = itertools.count(1)


def default_script(request: Recorded) -> Reply:
    """A text of its own (``Reply number N.``, never quoting the prompt, so that a test can count where each
    prompt was stored); after a tool's result, a text saying so."""
    if request.tool_results():
        return Reply("The tool answered; that is all.")
    return Reply(f"Reply number {next(_replies)}.")


class MockModels:
    """The mock server (a context manager: started on enter, stopped on exit)."""

    def __init__(self, script: Callable[[Recorded], Reply] = default_script):
        self.script = script
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="mock-models", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> MockModels:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def turns(self, api: str | None = None) -> list[Recorded]:
        """The conversation's requests (see :attr:`Recorded.is_turn`), of ``api`` when given."""
        with self._lock:
            return [r for r in self.requests if r.is_turn and (api is None or r.api == api)]

    def since(self, start: int) -> Iterator[Recorded]:
        with self._lock:
            yield from self.requests[start:]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()


def _handler(mock: MockModels) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _read(self) -> Recorded:
            length = min(int(self.headers.get("Content-Length") or 0), REQUEST_LIMIT)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            request = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                               time.time())
            mock.record(request)
            return request

        def do_GET(self) -> None:
            request = self._read()
            if request.path.startswith("/v1/models"):
                self._json(200, {"data": [], "object": "list", "has_more": False, "models": []})
            else:
                self._json(200, {})

        def do_HEAD(self) -> None:
            self._read()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            request = self._read()
            body = request.body if isinstance(request.body, dict) else {}
            if request.path.startswith("/v1/messages/count_tokens"):
                self._json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
            elif request.api == "anthropic":
                reply = mock.script(request)
                if body.get("stream"):
                    self._events(_anthropic_events(reply, str(body.get("model") or "mock")), named=True)
                else:
                    self._json(200, _anthropic_message(reply, str(body.get("model") or "mock")))
            elif request.api == "openai":
                self._events(_openai_events(mock.script(request), str(body.get("model") or "mock")), named=True)
            elif request.api == "gemini":
                reply = _gemini_response(mock.script(request))
                if ":streamGenerateContent" in request.path:
                    self._events([("", reply)], named=False)
                else:
                    self._json(200, reply)
            elif ":countTokens" in request.path:
                self._json(200, {"totalTokens": max(1, len(json.dumps(body)) // 4)})
            else:
                self._json(200, {})

        def _json(self, status: int, data: Any) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _events(self, events: list[tuple[str, dict[str, Any]]], named: bool) -> None:
            payload = "".join((f"event: {name}\n" if named else "") + f"data: {json.dumps(data)}\n\n"
                              for name, data in events).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text or reply.tool is None:
        blocks.append({"type": "text", "text": reply.text})
    if reply.tool is not None:
        blocks.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": reply.tool,
                       "input": reply.arguments})
    return blocks


def _usage() -> dict[str, int]:
    return {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    return {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
            "content": _blocks(reply), "stop_reason": "tool_use" if reply.tool else "end_turn",
            "stop_sequence": None, "usage": _usage()}


def _anthropic_events(reply: Reply, model: str) -> list[tuple[str, dict[str, Any]]]:
    message = _anthropic_message(reply, model)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {**block, "input": {}}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _openai_events(reply: Reply, model: str) -> list[tuple[str, dict[str, Any]]]:
    rid = f"resp_{uuid.uuid4().hex[:24]}"
    items: list[dict[str, Any]] = []
    if reply.text or reply.tool is None:
        items.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:24]}", "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": reply.text, "annotations": []}]})
    if reply.tool is not None:
        items.append({"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:24]}",
                      "call_id": f"call_{uuid.uuid4().hex[:24]}", "name": reply.tool,
                      "arguments": json.dumps(reply.arguments), "status": "completed",
                      **({"namespace": reply.namespace} if reply.namespace else {})})
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress",
                                                                        "output": []}})]
    for index, item in enumerate(items):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                      "item": item}))
        if item["type"] == "message":
            events.append(("response.output_text.delta", {"type": "response.output_text.delta",
                                                          "item_id": item["id"], "output_index": index,
                                                          "content_index": 0, "delta": reply.text}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                                     "item": item}))
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    events.append(("response.completed", {"type": "response.completed",
                                          "response": {**base, "status": "completed", "output": items,
                                                       "usage": usage}}))
    return events


def _gemini_response(reply: Reply) -> dict[str, Any]:
    """One ``GenerateContentResponse``: the thought, the text, then the function call."""
    parts: list[dict[str, Any]] = [{"text": reply.thought, "thought": True}] if reply.thought else []
    if reply.text or reply.tool is None:
        parts.append({"text": reply.text})
    if reply.tool is not None:
        parts.append({"functionCall": {"name": reply.tool, "args": reply.arguments}})
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "mock", "responseId": uuid.uuid4().hex}
