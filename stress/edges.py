"""The edges of every interface, for ``python -m stress``: sizes past the limits, HTTP requests no client should
send, and values of the wrong type.

- Size limits on every interface: 5 MB given to every command that reads
  text (standard input and files: add, correct, import, ingest, ingest-doc,
  remember-output) and texts one character past the limit to the HTTP API
  and the MCP tools. Each must be refused in one line, quickly, writing
  nothing; a text exactly at the limit must be taken.
- HTTP protocol cases: malformed JSON (deep nesting, huge numbers, NaN),
  bodies without a usable length (negative, doubled, chunked, too large, cut
  short), oversized headers and request lines, unknown methods and versions,
  silent connections. None may answer 500, none may hang, every answer is
  the JSON error shape and the connection is closed after it.
- Wrong types: every field of every request, over HTTP and through the MCP
  tools, given values of other JSON types ("yes" for a flag, a string for a
  list). None may be accepted (the MCP tools mend only a number or true/false
  written as a string).

    .venv/bin/python -m stress.edges      # this part alone
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from vault_engine.index.fakes import HashEmbedder
from vault_engine.limits import MAX_DOCUMENT, MAX_TEXT
from vault_engine.served import Served
from vault_engine.server import http as http_api
from vault_engine.server import requests as schemas
from vault_engine.server.mcp import TOOLS_BY_NAME, call_tool
from vault_engine.server.service import MemoryService
from vault_engine.vault import NewMemory, Vault

REPO = Path(__file__).resolve().parent.parent

BIG = 5_000_000  # bytes given to each command that reads text
READ_TIMEOUT = 1.0  # the server's, for this run: a hang is no answer within READ_TIMEOUT + HANG_SLACK
HANG_SLACK = 10.0


def _cli(vault: Path, *args: str, stdin: bytes = b"") -> tuple[subprocess.CompletedProcess[bytes], float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("ANTHROPIC_API_KEY", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(vault), *args], input=stdin,
                          capture_output=True, timeout=300, env=env)
    return done, time.perf_counter() - started


def _snapshot(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}


@contextmanager
def _served(vault: Path) -> Iterator[tuple[MemoryService, Served]]:
    service = MemoryService(Vault(vault, auto_sync=True, embedder=HashEmbedder()), source="tool:http")
    previous = http_api.ApiServer.read_timeout
    http_api.ApiServer.read_timeout = READ_TIMEOUT
    try:
        with http_api.running(service) as served:
            yield service, served
    finally:
        http_api.ApiServer.read_timeout = previous
        service.close()


def _post(served: Served, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    try:
        connection.request("POST", path, body=json.dumps(body),
                           headers={"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


# ---------------------------------------------------------------- size limits


def size_limits(vault: Path, workdir: Path) -> dict[str, Any]:
    """Each way text comes in, given more than its limit: refused in one line, writing nothing."""
    added, _ = _cli(vault, "add", "Staging runs Postgres 16.", "--json")  # the indexes current, as in use
    memory_id = json.loads(added.stdout)["id"]
    big = b"x" * BIG
    document = workdir / "big.txt"
    document.write_bytes(big)
    cases: list[tuple[str, tuple[str, ...], bytes]] = [
        ("add -", ("add", "-"), big),
        ("correct ID -", ("correct", memory_id, "-"), big),
        ("import - (a 5 MB line)", ("import", "-"), json.dumps({"body": "x" * BIG}).encode()),
        ("import - (a body past the limit)", ("import", "-"), json.dumps({"body": "x" * (MAX_TEXT + 1)}).encode()),
        ("ingest -", ("ingest", "-", "--session", "edges"), big),
        ("ingest FILE", ("ingest", str(document), "--session", "edges"), b""),
        ("ingest-doc -", ("ingest-doc", "-"), big),
        ("ingest-doc FILE", ("ingest-doc", str(document)), b""),
        ("remember-output", ("remember-output", "--source", "tool:cat"), big),
    ]
    refused: list[str] = []
    accepted: list[str] = []
    written: list[str] = []
    slowest = 0.0
    for name, args, stdin in cases:
        before = _snapshot(vault)
        done, seconds = _cli(vault, *args, stdin=stdin)
        lines = done.stderr.decode("utf-8", "replace").splitlines()
        if done.returncode == 1 and len(lines) == 1 and "too long" in lines[0]:
            refused.append(name)
        else:
            accepted.append(f"{name} (exit {done.returncode}: {' / '.join(lines)[:120]})")
        if _snapshot(vault) != before:
            written.append(name)
        slowest = max(slowest, seconds)
    with _served(vault) as (service, served):
        over = "y" * (MAX_TEXT + 1)
        remote: list[tuple[str, Callable[[], bool]]] = [
            ("HTTP remember", lambda: _post(served, "/v1/remember", {"text": over})[0] == 400),
            ("HTTP correct", lambda: _post(served, "/v1/correct", {"id": memory_id, "text": over})[0] == 400),
            ("HTTP body past 1 MiB", lambda: _post(served, "/v1/remember", {"text": "z" * (1 << 20)})[0] == 413),
            ("MCP memory_remember", lambda: call_tool(service, "memory_remember", {"text": over}).is_error),
            ("MCP memory_correct",
             lambda: call_tool(service, "memory_correct", {"id": memory_id, "text": over}).is_error),
        ]
        for name, refuses in remote:
            before = _snapshot(vault)
            started = time.perf_counter()
            (refused if refuses() else accepted).append(name)
            slowest = max(slowest, time.perf_counter() - started)
            if _snapshot(vault) != before:
                written.append(name)
        at_limit = ("Deploys go out with make release. " * (MAX_TEXT // 34 + 1))[:MAX_TEXT]
        taken = _post(served, "/v1/remember", {"text": at_limit})[0] == 200
    return {"tried": len(cases) + len(remote), "refused": len(refused), "accepted": accepted, "written": written,
            "slowest_s": round(slowest, 2), "at_limit_taken": taken,
            "limits": {"text": MAX_TEXT, "document": MAX_DOCUMENT}}


# ---------------------------------------------------------------- HTTP protocol cases


def _exchange(served: Served, data: bytes) -> dict[str, Any]:
    """Send ``data``; what came back: status (None: nothing), JSON or not, closed by the server, seconds."""
    started = time.monotonic()
    answer = b""
    closed = False
    with socket.create_connection(("127.0.0.1", served.port), timeout=READ_TIMEOUT + HANG_SLACK) as sock:
        with suppress(OSError):  # the server may refuse (and close) before all of it is sent
            sock.sendall(data)
        try:
            while chunk := sock.recv(65536):
                answer += chunk
            closed = True
        except TimeoutError:
            pass
        except OSError:
            closed = True
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else None
    try:
        shape = set(json.loads(body)["error"]) == {"kind", "message"}
    except (ValueError, KeyError, TypeError):
        shape = False
    return {"status": status, "json": shape, "closed": closed, "seconds": time.monotonic() - started}


def _cases(token: str) -> list[tuple[str, bytes, bool]]:
    """(name, raw request, whether an answer is expected: a connection that never completes a request is
    closed without one)."""
    auth = f"Host: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n".encode()

    def post(body: bytes, headers: bytes | None = None, path: bytes = b"/v1/search") -> bytes:
        length = b"Content-Length: %d\r\n" % len(body) if headers is None else headers
        return b"POST " + path + b" HTTP/1.1\r\n" + auth + length + b"\r\n" + body

    deep_objects = b'{"a": ' * 100_000 + b"1" + b"}" * 100_000
    return [
        ("100,000 nested arrays", post(b"[" * 100_000), True),
        ("100,000 nested objects", post(deep_objects), True),
        ("a 5,001-digit integer", post(b'{"query": "x", "limit": ' + b"9" * 5001 + b"}"), True),
        ("NaN for a number", post(b'{"query": "x", "limit": NaN}'), True),
        ("Infinity for a number", post(b'{"query": "x", "limit": Infinity}'), True),
        ("a lone surrogate in a text", post(b'{"text": "half \\ud800 a pair"}', path=b"/v1/remember"), True),
        ("not UTF-8", post(b'{"query": "\xff\xfe"}'), True),
        ("a JSON array, not an object", post(b"[1, 2, 3]"), True),
        ("5,000 unknown fields", post(json.dumps({f"f{n}": n for n in range(5000)}).encode()), True),
        ("Content-Length: -1", post(b"{}", b"Content-Length: -1\r\n"), True),
        ("Content-Length: abc", post(b"{}", b"Content-Length: abc\r\n"), True),
        ("Content-Length: +2", post(b"{}", b"Content-Length: +2\r\n"), True),
        ("two different Content-Lengths", post(b"{}", b"Content-Length: 2\r\nContent-Length: 3\r\n"), True),
        ("Transfer-Encoding: chunked", post(b'2\r\n{}\r\n0\r\n\r\nGET /v1/status HTTP/1.1\r\n\r\n',
                                           b"Transfer-Encoding: chunked\r\n"), True),
        ("chunked and a Content-Length", post(b"0\r\n\r\n", b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"),
         True),
        ("Transfer-Encoding: gzip", post(b"", b"Transfer-Encoding: gzip\r\n"), True),
        ("a body past 1 MiB", post(b"", b"Content-Length: %d\r\n" % (http_api.MAX_BODY + 1)), True),
        ("a body that stops arriving", post(b'{"query": ', b"Content-Length: 100\r\n"), True),
        ("a 70 KB header", b"GET /v1/status HTTP/1.1\r\n" + auth + b"X-Pad: " + b"a" * 70_000 + b"\r\n\r\n", True),
        ("101 headers", b"GET /v1/status HTTP/1.1\r\n" + auth + b"".join(b"X-%d: 1\r\n" % n for n in range(101))
         + b"\r\n", True),
        ("a 70 KB request line", b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", True),
        ("a garbage request line", b"NONSENSE\r\n\r\n", True),
        ("HTTP/2.0", b"GET /v1/status HTTP/2.0\r\n" + auth + b"\r\n", True),
        ("an unknown method", b"PATCH /v1/status HTTP/1.1\r\n" + auth + b"\r\n", True),
        ("headers that never end", b"GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n", False),
        ("nothing at all", b"", False),
    ]


def protocol_cases(vault: Path) -> dict[str, Any]:
    """Requests no client should send: none answers 500 or hangs; every answer is JSON and closes."""
    bad: dict[str, list[str]] = {"500": [], "hang": [], "not_json": [], "left_open": []}
    with _served(vault) as (_service, served):
        cases = _cases(served.token)
        for name, data, answered in cases:
            got = _exchange(served, data)
            if got["status"] is not None and got["status"] >= 500 and got["status"] not in (501, 505):
                bad["500"].append(f"{name}: {got['status']}")
            if not got["closed"] or (answered and got["status"] is None):
                bad["hang"].append(name)
            if answered and got["status"] is not None and not got["json"]:
                bad["not_json"].append(name)
            if answered and got["status"] is not None and got["status"] >= 400 and not got["closed"]:
                bad["left_open"].append(name)
        alive = _exchange(served, b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    return {"tried": len(cases), **{k: v for k, v in bad.items()}, "still_serving": alive["status"] == 200}


# ---------------------------------------------------------------- wrong types


WRONG: dict[type, list[Any]] = {
    schemas.Flag: ["yes", "true", "false", 1, 0, [], {}],
    schemas.Strings: ["abc", 5, True, {"a": 1}, ["ok", 5], [None], [[]]],
    schemas.Whole: ["5", 5.5, True, [], {}, "ten"],
    schemas.Text: [5, 5.5, True, [], {}, ["x"]],
    schemas.Choice: [5, True, ["fact"], {}, "nonsense"],
}
MENDED_BY_MCP = ("true", "false", "5")  # the slips the MCP tools mend on purpose (documented)


def _valid(request: type[schemas.Request], memory_id: str) -> dict[str, Any]:
    values = {"id": memory_id, "outcome": "ignored", "text": "Staging runs Postgres 16.", "query": "postgres",
              "task": "upgrade postgres"}
    return {name: values[name] for name, (_spec, default) in request.specs().items() if default is dataclasses.MISSING}


def wrong_types(vault: Path) -> dict[str, Any]:
    """Every field of every request given values of other types, over HTTP and MCP: none may be accepted."""
    accepted: dict[str, list[str]] = {"http": [], "mcp": []}
    tried = 0
    with _served(vault) as (service, served):
        memory_id = service.vault.add(NewMemory("Staging runs Postgres 16.", title="Staging database")).id
        for operation, request in schemas.OPERATIONS.items():
            tool = TOOLS_BY_NAME[f"memory_{operation}"]
            for name, (spec, _default) in request.specs().items():
                for value in WRONG[type(spec)]:
                    body = {**_valid(request, memory_id), name: value}
                    tried += 1
                    status, _answer = _post(served, f"/v1/{operation}", body)
                    if status == 200:
                        accepted["http"].append(f"{operation}.{name}={value!r}")
                    if value in MENDED_BY_MCP or (isinstance(value, float) and value.is_integer()):
                        continue
                    tried += 1
                    if not call_tool(service, tool.name, body).is_error:
                        accepted["mcp"].append(f"{tool.name}.{name}={value!r}")
    return {"tried": tried, "accepted": accepted}


# ---------------------------------------------------------------- the run


def run(workdir: Path) -> dict[str, Any]:
    vault = workdir / "vault"
    done, _ = _cli(vault, "init", str(vault), "--no-git")
    done.check_returncode()
    started = time.perf_counter()
    result: dict[str, Any] = {"sizes": size_limits(vault, workdir), "protocol": protocol_cases(vault),
                              "types": wrong_types(vault)}
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def failures(result: dict[str, Any]) -> int:
    """What must be 0: inputs past a limit taken, files written by a refusal, 500s, hangs, answers that are not
    JSON or leave the connection open, wrong types accepted, and a text at the limit refused."""
    sizes, protocol, types = result["sizes"], result["protocol"], result["types"]
    return (len(sizes["accepted"]) + len(sizes["written"]) + (not sizes["at_limit_taken"])
            + sum(len(protocol[k]) for k in ("500", "hang", "not_json", "left_open")) + (not protocol["still_serving"])
            + sum(len(v) for v in types["accepted"].values()))


def rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The table rows: (measure, result, detail)."""
    sizes, protocol, types = result["sizes"], result["protocol"], result["types"]
    over = sizes["accepted"] + sizes["written"]
    return [
        ("size limits on every interface", f"{sizes['refused']}/{sizes['tried']} refused",
         f"5 MB to every command reading text, one character past the limit over HTTP and MCP; accepted "
         f"{len(sizes['accepted'])}, files written {len(sizes['written'])}, slowest refusal {sizes['slowest_s']} s, "
         f"a text at the limit {'taken' if sizes['at_limit_taken'] else 'REFUSED'}"
         + (f": {json.dumps(over)}" if over else "")),
        ("HTTP protocol cases", f"{protocol['tried']}",
         f"500s on bad input: {len(protocol['500'])}; hangs: {len(protocol['hang'])}; not JSON: "
         f"{len(protocol['not_json'])}; left open: {len(protocol['left_open'])}"
         + ("" if protocol["still_serving"] else "; the server STOPPED serving")
         + "".join(f"; {k}: {', '.join(v)}" for k, v in protocol.items() if isinstance(v, list) and v)),
        ("wrong types", f"{types['tried']} values",
         f"accepted: {sum(len(v) for v in types['accepted'].values())} (HTTP {len(types['accepted']['http'])}, "
         f"MCP {len(types['accepted']['mcp'])}); must be 0"
         + "".join(f"; {', '.join(v[:5])}" for v in types["accepted"].values() if v)),
    ]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memvault-edges-") as temp:
        result = run(Path(temp))
    print("| measure | result | detail |")
    print("|---|---|---|")
    for measure, value, detail in rows(result):
        print(f"| {measure} | {value} | {detail} |")
    return 1 if failures(result) else 0


if __name__ == "__main__":
    sys.exit(main())
