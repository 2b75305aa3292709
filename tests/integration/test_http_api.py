"""memvault serve: a real socket on 127.0.0.1, the token, the host check, every endpoint and its errors."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from vault_engine.errors import InvalidInput, VaultBusy
from vault_engine.index.fakes import HashEmbedder
from vault_engine.server import http as http_api
from vault_engine.server.service import MemoryService
from vault_engine.vault import NewMemory, Vault

Call = Callable[..., tuple[int, Any]]


@pytest.fixture
def service(vault: Vault) -> Iterator[MemoryService]:
    warm = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())
    warm.add(NewMemory("Deploys go out with `make release`; never push tags by hand.", title="How to release",
                       type="procedure", tasks=("release",)))
    warm.add(NewMemory("The API rate limit is 100 requests per minute per key.", title="API rate limit",
                       project="github.com/acme/api"))
    service = MemoryService(warm, source="tool:http")
    yield service
    service.close()


@pytest.fixture
def served(service: MemoryService) -> Iterator[http_api.Served]:
    with http_api.running(service) as served:
        yield served


@pytest.fixture
def call(served: http_api.Served) -> Call:
    def request(method: str, path: str, body: Any = None, *, token: str | None = served.token,
                headers: dict[str, str] | None = None, raw: bytes | None = None) -> tuple[int, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
        sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
        payload = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        connection.request(method, path, body=payload, headers=sent)
        answer = connection.getresponse()
        data = answer.read()
        assert answer.getheader("Content-Type") == "application/json; charset=utf-8"
        connection.close()
        return answer.status, json.loads(data)

    return request


def test_serve_file_records_where_and_the_token_readable_only_by_the_owner(served: http_api.Served,
                                                                          service: MemoryService) -> None:
    path = http_api.serve_file(service.vault.root)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert data == {"version": 1, "host": "127.0.0.1", "port": served.port, "pid": os.getpid(),
                    "token": served.token}
    assert len(served.token) == 64


def test_the_token_is_required(call: Call) -> None:
    status, body = call("GET", "/v1/status", token=None)
    assert status == 401 and body["error"]["kind"] == "Unauthorized"
    status, body = call("POST", "/v1/search", {"query": "release"}, token="0" * 64)
    assert status == 401
    status, body = call("GET", "/v1/status", headers={"Authorization": "Basic abc"}, token=None)
    assert status == 401
    status, body = call("GET", "/v1/status")
    assert status == 200 and body["memories"] == 2


def test_health_answers_without_the_token_and_says_nothing_of_the_vault(call: Call) -> None:
    assert call("GET", "/v1/health", token=None) == (200, {"ok": True, "version": 1})


def test_other_host_names_are_refused(call: Call, served: http_api.Served) -> None:
    """A page on another origin that rebinds its name to 127.0.0.1 still sends its own Host."""
    status, body = call("GET", "/v1/status", headers={"Host": f"attacker.example:{served.port}"})
    assert status == 403 and "attacker.example" in body["error"]["message"]
    assert call("GET", "/v1/status", headers={"Host": f"localhost:{served.port}"})[0] == 200


def test_search_read_context_feedback(call: Call) -> None:
    status, found = call("POST", "/v1/search", {"query": "how do I release", "limit": 5})
    assert status == 200 and found["hits"][0]["title"] == "How to release"
    memory_id = found["hits"][0]["id"]
    status, shallow = call("POST", "/v1/read", {"id": memory_id, "depth": 0})
    assert status == 200 and "body" not in shallow and "metadata" not in shallow
    status, deep = call("POST", "/v1/read", {"id": memory_id, "depth": 2})
    assert status == 200 and "make release" in deep["body"] and deep["metadata"]["type"] == "procedure"
    status, manifest = call("POST", "/v1/context", {"task": "release the new version", "kind": "release",
                                                    "budget": 3000})
    assert status == 200, manifest
    assert manifest["application"].startswith("e-")
    delivered = [m["id"] for m in manifest["manifest"]] + [r["id"] for r in manifest["resident"]]
    assert memory_id in delivered and memory_id in manifest["markdown"]
    status, outcome = call("POST", "/v1/feedback", {"id": memory_id, "outcome": "used-successfully",
                                                    "application": manifest["application"]})
    assert status == 200 and outcome["applied"]["used-successfully"] == 1


def test_context_scopes_by_project(call: Call) -> None:
    status, other = call("POST", "/v1/context", {"task": "api rate limit", "record": False})
    assert status == 200 and other["application"] is None
    assert "API rate limit" not in [m["title"] for m in other["manifest"]]
    status, own = call("POST", "/v1/context", {"task": "api rate limit", "project": "github.com/acme/api",
                                               "record": False})
    assert "API rate limit" in [m["title"] for m in own["manifest"] + own["resident"]]


def test_remember_correct_forget(call: Call, service: MemoryService) -> None:
    status, added = call("POST", "/v1/remember", {"text": "Staging is at staging.acme.dev.", "title": "Staging host"})
    assert status == 200 and added["created"] is True
    assert service.vault.entry(added["id"]).memory.source == "tool:http"
    status, fixed = call("POST", "/v1/correct", {"id": added["id"], "text": "Staging is at stage.acme.dev."})
    assert status == 200 and fixed["related"] == added["id"]
    status, gone = call("POST", "/v1/forget", {"id": fixed["id"]})
    assert status == 200 and gone["path"].startswith("trash/")
    status, read = call("POST", "/v1/read", {"id": fixed["id"], "depth": 0})
    assert status == 200 and read["trashed"] is True


@pytest.mark.parametrize(("method", "path", "body", "status", "kind", "words"), [
    ("POST", "/v1/read", {"id": "m-nothing"}, 404, "MemoryNotFound", "m-nothing"),
    ("POST", "/v1/read", {"id": "m-x", "depth": 3}, 400, "InvalidInput", "depth"),
    ("POST", "/v1/search", {"qery": "typo"}, 400, "InvalidInput", "unknown field 'qery'"),
    ("POST", "/v1/search", {"query": ""}, 400, "InvalidInput", "query"),
    ("POST", "/v1/search", {"query": "x", "limit": "ten"}, 400, "InvalidInput", "limit"),
    ("POST", "/v1/search", {"query": "x", "types": ["nonsense"]}, 400, "InvalidInput", "nonsense"),
    ("POST", "/v1/feedback", {"id": "m-x", "outcome": "great"}, 400, "InvalidInput", "great"),
    ("POST", "/v1/context", {"task": "x", "budget": -1}, 400, "InvalidInput", "budget"),
    ("POST", "/v1/search", [1, 2], 400, "InvalidInput", "JSON object"),
    ("GET", "/v1/search", None, 405, "MethodNotAllowed", "POST"),
    ("POST", "/v1/status", None, 405, "MethodNotAllowed", "GET"),
    ("DELETE", "/v1/forget", None, 405, "MethodNotAllowed", "POST"),
    ("GET", "/v1/nothing", None, 404, "NotFound", "/v1/nothing"),
    ("GET", "/index.html", None, 404, "NotFound", "/index.html"),
])
def test_errors_are_one_line_with_a_status(call: Call, method: str, path: str, body: Any, status: int,
                                           kind: str, words: str) -> None:
    got, answer = call(method, path, body)
    assert got == status
    assert answer["error"]["kind"] == kind and words in answer["error"]["message"]
    assert "\n" not in answer["error"]["message"] and "Traceback" not in answer["error"]["message"]


@pytest.mark.parametrize(("raw", "words"), [(b"{not json", "not JSON"), (b"\xff\xfe{}", "not UTF-8")])
def test_bodies_that_are_not_json(call: Call, raw: bytes, words: str) -> None:
    status, answer = call("POST", "/v1/search", raw=raw)
    assert status == 400 and words in answer["error"]["message"]


def test_a_body_too_large_is_refused_unread(call: Call) -> None:
    status, answer = call("POST", "/v1/search", headers={"Content-Length": str(http_api.MAX_BODY + 1)}, raw=b"{}")
    assert status == 413 and answer["error"]["kind"] == "ContentTooLarge" and "too large" in answer["error"]["message"]


def test_an_unexpected_failure_answers_500_and_the_server_goes_on(call: Call, service: MemoryService,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(service, "status", broken)
    status, answer = call("GET", "/v1/status")
    assert status == 500 and answer["error"]["message"] == "internal error (RuntimeError: disk on fire)"
    monkeypatch.undo()
    assert call("GET", "/v1/status")[0] == 200


def test_only_loopback_addresses(service: MemoryService) -> None:
    for host in ("0.0.0.0", "192.168.1.10", "example.com", "::"):
        with pytest.raises(InvalidInput, match="loopback"):
            http_api.bind(service, host, 0)
    assert not http_api.serve_file(service.vault.root).exists()


def test_a_second_server_on_the_same_vault_is_refused(served: http_api.Served, service: MemoryService) -> None:
    with pytest.raises(VaultBusy, match=f"already served at {served.url}"):
        http_api.bind(MemoryService(service.vault), "127.0.0.1", 0)


def test_a_stale_serve_file_is_replaced(service: MemoryService) -> None:
    path = http_api.serve_file(service.vault.root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "host": "127.0.0.1", "port": 1, "pid": 2 ** 22 + 17, "token": "x"}))
    path.chmod(0o644)
    with http_api.running(service) as served:
        assert http_api.read_served(service.vault.root) == served
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not path.exists()


def test_a_taken_port_is_one_clear_error(service: MemoryService) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(VaultBusy, match=f"cannot listen on 127.0.0.1:{port}.*--port"):
            http_api.bind(service, "127.0.0.1", port)


@pytest.mark.parametrize(("header", "host"), [("127.0.0.1:7788", "127.0.0.1"), ("[::1]:7788", "::1"),
                                              ("localhost", "localhost"), ("evil.example:80", "evil.example")])
def test_host_name(header: str, host: str) -> None:
    assert http_api.host_name(header) == host


@pytest.mark.slow
def test_memvault_serve_subprocess(vault: Vault, tmp_path: Path) -> None:
    """The real command: listens, answers with the token, and on SIGTERM stops and removes serve.json."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "serve", "--vault", str(vault.root), "--port", "0",
                             "--no-watch"], stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith(f"serving {vault.root} at http://127.0.0.1:"), line
        served = http_api.read_served(vault.root)
        assert served is not None and served.pid == proc.pid
        connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
        connection.request("GET", "/v1/status", headers={"Authorization": f"Bearer {served.token}"})
        answer = connection.getresponse()
        assert answer.status == 200 and json.loads(answer.read())["index_state"] in ("missing", "current")
        connection.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=60)[1]
    assert proc.returncode == 0, rest
    assert "stopped" in rest and "Traceback" not in rest
    assert not http_api.serve_file(vault.root).exists()


@pytest.mark.slow
def test_serve_refuses_a_public_address_in_one_line(vault: Vault) -> None:
    proc = subprocess.run([sys.executable, "-m", "vault_engine", "serve", "--vault", str(vault.root), "--host",
                           "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "refusing to listen on '0.0.0.0'" in proc.stderr


def test_a_refused_request_with_a_body_does_not_poison_the_connection(served: http_api.Served) -> None:
    """An unread body must never be parsed as the next request on a kept-alive connection."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    connection.request("POST", "/v1/search", body=json.dumps({"query": "x" * 5000}))
    first = connection.getresponse()
    assert first.status == 401 and first.getheader("Connection") == "close"
    first.read()
    connection.request("POST", "/v1/search", body=json.dumps({"query": "release"}),
                       headers={"Authorization": f"Bearer {served.token}"})
    second = connection.getresponse()
    assert second.status == 200 and json.loads(second.read())["query"] == "release"
    connection.close()


# ---------------------------------------------------------------- the protocol's edge cases


def _raw(served: http_api.Served, data: bytes, *, wait: float = 10) -> tuple[int, dict[str, Any], bytes, float]:
    """Send ``data`` as is on a new connection; the status, JSON body and headers of the answer, and how long the
    server took to answer and close the connection (it always closes after a refusal)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", served.port), timeout=wait) as sock:
        sock.sendall(data)
        answer = b""
        while chunk := sock.recv(65536):  # a refused request ends with the server closing the connection
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body), head, time.monotonic() - started


def _post(served: http_api.Served, headers: bytes, body: bytes = b"") -> bytes:
    auth = f"Host: 127.0.0.1\r\nAuthorization: Bearer {served.token}\r\n".encode()
    return b"POST /v1/search HTTP/1.1\r\n" + auth + headers + b"\r\n" + body


@pytest.mark.parametrize(("body", "words"), [
    (b"[" * 100_000, "it is nested too deeply"),
    (b'{"query": "x", "limit": ' + b"9" * 5001 + b"}", "a number has too many digits"),
])
def test_json_that_cannot_be_read_is_bad_input_not_a_failure(served: http_api.Served, body: bytes,
                                                             words: str) -> None:
    status, answer, head, _ = _raw(served, _post(served, b"Content-Length: %d\r\n" % len(body), body))
    assert status == 400 and answer["error"]["kind"] == "InvalidInput"
    assert answer["error"]["message"] == f"request body is not usable JSON: {words}"
    assert b"Connection: close" in head


@pytest.mark.parametrize(("headers", "body", "status", "kind"), [
    (b"Content-Length: -1\r\n", b"{}", 400, "BadRequest"),
    (b"Content-Length: 2x\r\n", b"{}", 400, "BadRequest"),
    (b"Content-Length: 2\r\nContent-Length: 3\r\n", b"{}", 400, "BadRequest"),
    (b"Transfer-Encoding: chunked\r\n", b'd\r\n{"query":"x"}\r\n0\r\n\r\nGET /v1/status HTTP/1.1\r\n\r\n', 411,
     "LengthRequired"),
    (b"Transfer-Encoding: gzip\r\n", b"", 501, "NotImplemented"),
    (b"Content-Length: %d\r\n" % (http_api.MAX_BODY + 1), b"", 413, "ContentTooLarge"),
    (b"X-Padding: " + b"a" * 70_000 + b"\r\n", b"", 431, "RequestHeaderFieldsTooLarge"),
])
def test_requests_without_a_usable_length_are_refused_at_once_in_json(served: http_api.Served, headers: bytes,
                                                                     body: bytes, status: int, kind: str) -> None:
    """Each answers at once in the JSON error shape and closes the connection: nothing after it is read as a
    request, and no read waits for bytes that will never come."""
    got, answer, head, took = _raw(served, _post(served, headers, body))
    assert (got, answer["error"]["kind"]) == (status, kind), answer
    assert b"Content-Type: application/json" in head and b"Connection: close" in head
    assert "\n" not in answer["error"]["message"] and took < 5


@pytest.mark.parametrize(("request_line", "status", "kind"), [
    (b"GET /" + b"a" * 70_000 + b" HTTP/1.1", 414, "URITooLong"),
    (b"NONSENSE", 400, "BadRequest"),
    (b"PATCH /v1/status HTTP/1.1", 501, "NotImplemented"),
    (b"GET /v1/status HTTP/2.0", 505, "HTTPVersionNotSupported"),
])
def test_the_protocols_own_refusals_answer_json(served: http_api.Served, request_line: bytes, status: int,
                                                kind: str) -> None:
    got, answer, head, _ = _raw(served, request_line + b"\r\nHost: 127.0.0.1\r\n\r\n")
    assert (got, answer["error"]["kind"]) == (status, kind)
    assert b"Content-Type: application/json" in head and b"Connection: close" in head


def test_a_body_that_stops_arriving_times_out(served: http_api.Served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_api.ApiServer, "read_timeout", 0.5)
    status, answer, _, took = _raw(served, _post(served, b"Content-Length: 100\r\n", b'{"query": '))
    assert (status, answer["error"]["kind"]) == (408, "RequestTimeout") and took < 5


def test_a_silent_connection_is_closed_after_the_timeout(served: http_api.Served,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_api.ApiServer, "read_timeout", 0.5)
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the headers never end
        assert sock.recv(65536) == b""  # closed by the server, long before the client's 10 s


def test_the_connection_is_closed_after_any_refused_request(call: Call, served: http_api.Served) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    connection.request("POST", "/v1/read", body=json.dumps({"id": "m-nothing"}),
                       headers={"Authorization": f"Bearer {served.token}"})
    answer = connection.getresponse()
    assert answer.status == 404 and answer.getheader("Connection") == "close"
    answer.read()
    connection.close()


@pytest.mark.parametrize(("path", "body", "words"), [
    ("/v1/remember", {"text": "Staging is at staging.acme.dev.", "tags": "abc"},
     "tags must be a list of strings, got string 'abc'"),
    ("/v1/remember", {"text": "Just this once, skip the tests.", "force": "yes"},
     "force must be true or false, got string 'yes'"),
    ("/v1/remember", {"text": "Staging is at staging.acme.dev.", "tags": ["ok", 5]}, "tags must be a list of strings"),
    ("/v1/remember", {"text": "Staging is at staging.acme.dev.", "tags": [""]}, "tag must not be empty"),
    ("/v1/remember", {"text": "Staging is at staging.acme.dev.", "paths": ["src/**"] * 51},
     "paths has too many items (51; at most 50)"),
    ("/v1/search", {"query": "release", "types": "fact"}, "types must be a list of strings, got string 'fact'"),
    ("/v1/search", {"query": "release", "all_projects": 1}, "all_projects must be true or false, got number 1"),
    ("/v1/context", {"task": "release", "record": "false"}, "record must be true or false, got string 'false'"),
])
def test_wrong_types_are_refused_naming_the_field(call: Call, service: MemoryService, path: str,
                                                  body: dict[str, Any], words: str) -> None:
    before = service.vault.status().memories
    status, answer = call("POST", path, body)
    assert status == 400 and answer["error"]["kind"] == "InvalidInput", answer
    assert answer["error"]["message"].startswith(words)
    assert service.vault.status().memories == before


def test_null_stands_for_the_default(call: Call) -> None:
    status, found = call("POST", "/v1/search", {"query": "release", "types": None, "weak": None, "limit": None})
    assert status == 200 and found["hits"]
    assert call("POST", "/v1/read", {"id": found["hits"][0]["id"], "depth": None})[1]["depth"] == 1


def test_a_client_still_sending_a_refused_body_reads_the_answer(call: Call) -> None:
    """The server answers 413 before reading a body over the limit, then drops what still comes: the client
    gets the answer, not a connection reset."""
    status, answer = call("POST", "/v1/remember", {"text": "z" * http_api.MAX_BODY})
    assert (status, answer["error"]["kind"]) == (413, "ContentTooLarge")
