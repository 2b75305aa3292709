"""``memvault serve``: the vault as a small HTTP JSON API on 127.0.0.1, for editors and scripts.

Every endpoint is one :class:`~vault_engine.server.service.MemoryService` call and
answers the same JSON the CLI prints with ``--json`` (golden copies live in
``contract/``)::

    GET  /v1/status                                   counts, hot tier, index freshness
    POST /v1/search    {"query", "limit"?, "project"?, "all_projects"?, "path"?, "types"?, "trust"?}
    POST /v1/read      {"id", "depth"?, "project"?, "all_projects"?}
    POST /v1/context   {"task", "path"?, "operation"?, "phase"?, "kind"?, "project"?, "budget"?, "record"?,
                        "overview"?, "sender"?}
    POST /v1/feedback  {"id", "outcome", "application"?}
    POST /v1/remember  {"text", "title"?, "type"?, "project"?, "scope"?, "paths"?, "tags"?, ...}
    POST /v1/correct   {"id", "text", "title"?}
    POST /v1/forget    {"id"}

Access: the server listens on a loopback address only, and every request must
carry ``Authorization: Bearer TOKEN``, the token written to
``.memvault/serve.json`` (mode 0600, so only the vault owner's processes can
read it; other local users cannot reach the vault). Requests naming another
``Host`` are refused, so a web page cannot reach the API by DNS rebinding.
Errors answer ``{"error": {"kind", "message"}}`` with a 4xx or 5xx status,
the protocol's own refusals too (a malformed request line, headers too large,
a body without a usable length); the connection is closed after any error, and
every read from a client waits at most ``READ_TIMEOUT`` seconds.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import json
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .. import errors, locks, store
from ..errors import InvalidInput, VaultError
from ..fsio import write_atomic
from ..patterns import lazy_pattern
from ..served import API_VERSION, SERVE_FILE, SERVE_LOCK, Served, alive, read_served, serve_file  # noqa: F401
from .requests import OPERATIONS
from .service import MemoryService
from .views import error_json

MAX_BODY = 1 << 20  # bytes a request body may have
READ_TIMEOUT = 10.0  # seconds one read from a client may wait (a request line, a header, the body)
LINGER_SECONDS, LINGER_BYTES = 2.0, 4 * MAX_BODY  # the most of a refused body read and dropped before closing
_LENGTH = lazy_pattern(r"[0-9]{1,19}")  # a Content-Length: digits only (no sign, no spaces inside)
LOOPBACK_NAMES = ("localhost",)


STATUS_OF: tuple[tuple[type[VaultError], int], ...] = (
    (errors.MemoryNotFound, 404),
    (errors.InvalidInput, 400),
    (errors.PathEscapeError, 400),
    (errors.ForgottenContent, 409),
    (errors.NothingToUndo, 409),
    (errors.MemoryFileError, 422),
    (errors.VaultBusy, 503),
    (errors.LlmUnavailable, 503),
    (errors.ModelUnavailable, 503),
)


def http_status(exc: VaultError) -> int:
    for kind, status in STATUS_OF:
        if isinstance(exc, kind):
            return status
    return 500


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host of a ``Host`` header: ``127.0.0.1:7788`` -> ``127.0.0.1``, ``[::1]:7788`` -> ``::1``."""
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class Refused(Exception):
    """A request refused for how it was sent, before the service sees it: an HTTP status and why."""

    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status
        self.message = message

    def answer(self) -> tuple[int, dict[str, Any]]:
        return int(self.status), _error(_kind(self.status), self.message)


# The error kinds of the protocol's refusals: their names in RFC 9110 and RFC 6585, in one word.
_KINDS = {400: "BadRequest", 408: "RequestTimeout", 411: "LengthRequired", 413: "ContentTooLarge", 414: "URITooLong",
          431: "RequestHeaderFieldsTooLarge", 501: "NotImplemented", 505: "HTTPVersionNotSupported"}


def _kind(status: HTTPStatus) -> str:
    return _KINDS.get(int(status)) or "".join(status.phrase.title().split())


def call(service: MemoryService, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """Run one operation with the fields of a request body."""
    request = OPERATIONS[operation]  # a body may carry the request's fields only (a typo must not pass)
    allowed = request.specs()
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise InvalidInput(f"unknown field '{unknown[0]}' for {operation}; expected {', '.join(allowed)}")
    run: Callable[[Any], dict[str, Any]] = getattr(service, operation)
    return run(request.parse(body))


class Handler(BaseHTTPRequestHandler):
    """One request: check the host and the token, parse the body, call the service, answer JSON."""

    server: ApiServer
    _length = 0  # the body's length in bytes, once _body_length has checked it
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms wait for a delayed ACK
    server_version = "memvault"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request is written by _answer

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.read_timeout)  # every read and write waits at most this long

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (a request line or header too long, too many headers, a
        malformed request line, an unknown method or version) in the JSON error shape, closing the connection."""
        status = HTTPStatus(code)
        self.close_connection = True
        self.request_version = self.protocol_version  # a status line and headers, whatever the request line said
        self._answer(code, _error(_kind(status), message or status.description))
        self.server.log(f"{getattr(self, 'command', '') or '-'} {getattr(self, 'path', '') or '-'} {code}")

    def _handle(self, method: str) -> None:
        started = time.perf_counter()
        self.server.last_request = time.monotonic()
        self._body_read = False
        try:
            if self.request_version == "HTTP/0.9":
                self.request_version = self.protocol_version  # answered with a status line and headers: refused
                raise Refused(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/0.9 is not supported; send HTTP/1.1")
            self._length = self._body_length()
            status, data = self._route(method)
        except Refused as refused:
            status, data = refused.answer()
        if status >= 400 or (not self._body_read and self.headers.get("Content-Length", "0") not in ("", "0")):
            self.close_connection = True  # after a refusal, and so that an unread body is never the next request
        self._answer(status, data)
        self.server.log(f"{method} {self.path} {status} {(time.perf_counter() - started) * 1000:.0f}ms")

    def _body_length(self) -> int:
        """The length of the request's body in bytes (0 without a Content-Length), checked before anything else.

        Raises:
            Refused: a Transfer-Encoding (411 for chunked, 501 for any other coding), a Content-Length that is not
                one whole number (400), or one over ``MAX_BODY`` (413).
        """
        codings = [c.strip().lower() for value in self.headers.get_all("Transfer-Encoding") or ()
                   for c in value.split(",") if c.strip()]
        if codings and codings[-1] == "chunked":
            raise Refused(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length header; chunked transfer "
                                                      "encoding is not supported")
        if codings:
            raise Refused(HTTPStatus.NOT_IMPLEMENTED, f"transfer coding '{codings[-1]}' is not supported; send the "
                                                      "body as is, with a Content-Length header")
        values = {value.strip() for value in self.headers.get_all("Content-Length") or ()}
        if not values:
            return 0
        if len(values) > 1 or not _LENGTH.fullmatch(next(iter(values))):
            raise Refused(HTTPStatus.BAD_REQUEST, "Content-Length must be one whole number of bytes, got "
                                                  f"{', '.join(sorted(values))[:60]!r}")
        length = int(next(iter(values)))
        if length > MAX_BODY:
            raise Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                          f"request body too large ({length} bytes; at most {MAX_BODY})")
        return length

    def _route(self, method: str) -> tuple[int, dict[str, Any]]:
        if not is_loopback(host_name(self.headers.get("Host") or "")):
            return 403, _error("Forbidden", f"host '{self.headers.get('Host')}' is not this machine's loopback")
        path = self.path.split("?", 1)[0]
        if path == "/v1/health":
            return 200, {"ok": True, "version": API_VERSION}
        if not self._authorized():
            return 401, _error("Unauthorized", "send 'Authorization: Bearer TOKEN' with the token from "
                                               ".memvault/serve.json")
        name = path.removeprefix("/v1/")
        if not path.startswith("/v1/") or (name not in OPERATIONS and name != "status"):
            return 404, _error("NotFound", f"no endpoint {path}; see GET /v1/status and POST /v1/<operation>")
        expected = "GET" if name == "status" else "POST"
        if method != expected:
            return 405, _error("MethodNotAllowed", f"{path} takes {expected}, not {method}")
        try:
            if name == "status":
                return 200, self.server.service.status()
            return 200, call(self.server.service, name, self._body())
        except Refused as refused:
            return refused.answer()
        except VaultError as exc:
            return http_status(exc), error_json(exc)
        except Exception as exc:  # a bug: answered, logged, and the server keeps serving
            return 500, _error("InternalError", f"internal error ({type(exc).__name__}: {exc})")

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization") or ""
        scheme, _, token = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), self.server.token.encode())

    def _body(self) -> dict[str, Any]:
        length = self._length
        try:
            raw = self.rfile.read(length) if length else b"{}"
        except OSError:  # TimeoutError among them: the client stopped sending
            raise Refused(HTTPStatus.REQUEST_TIMEOUT, f"the request body ({length} bytes) did not arrive within "
                                                      f"{self.server.read_timeout:g} s") from None
        if len(raw) < length:
            raise Refused(HTTPStatus.BAD_REQUEST, f"the connection ended after {len(raw)} of the body's {length} bytes")
        self._body_read = True
        try:
            body = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise InvalidInput("request body is not UTF-8") from None
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"request body is not JSON ({exc.msg}, line {exc.lineno} column {exc.colno})") from None
        except RecursionError:  # thousands of nested arrays or objects
            raise InvalidInput("request body is not usable JSON: it is nested too deeply") from None
        except ValueError:  # a number of thousands of digits
            raise InvalidInput("request body is not usable JSON: a number has too many digits") from None
        if not isinstance(body, dict):
            raise InvalidInput("request body must be a JSON object")
        return body

    def _answer(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message}}


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    read_timeout = READ_TIMEOUT

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection that failed (the client went away mid-answer): one line, not a traceback."""
        import sys

        failure = sys.exc_info()[1]
        self.log(f"connection from {client_address[0]} ended: {type(failure).__name__}: {failure}")

    def shutdown_request(self, request: Any) -> None:
        """Close a connection gently: stop writing, then drop what the client still sends (a body that was
        refused unread) for a moment, so that it reads the answer instead of a connection reset."""
        with contextlib.suppress(OSError):
            request.shutdown(socket.SHUT_WR)
            request.settimeout(LINGER_SECONDS)
            deadline, dropped = time.monotonic() + LINGER_SECONDS, 0
            while dropped < LINGER_BYTES and time.monotonic() < deadline and (chunk := request.recv(1 << 16)):
                dropped += len(chunk)
        self.close_request(request)

    def __init__(self, address: tuple[str, int], service: MemoryService, token: str,
                 log: Callable[[str], None] = lambda _line: None):
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.service = service
        self.token = token
        self.log = log
        self.last_request = time.monotonic()  # when a request last came (an idle server may exit)
        self.lock: int | None = None  # serve.lock's descriptor, locked while this server serves the vault
        super().__init__(address, Handler)


def bind(service: MemoryService, host: str = "127.0.0.1", port: int = 0, *,
         log: Callable[[str], None] = lambda _line: None) -> tuple[ApiServer, Served]:
    """Bind the API on a loopback address and record it (with a new token) in ``.memvault/serve.json``.

    Raises:
        InvalidInput: ``host`` is not a loopback address.
        VaultBusy: another server already serves this vault, or the port is taken.
    """
    if not is_loopback(host):
        raise InvalidInput(f"refusing to listen on '{host}': memvault serve binds loopback addresses only "
                           "(127.0.0.1 or ::1), so only this machine can reach it")
    root = service.vault.root
    running = read_served(root)
    if running is not None and alive(running.pid):
        raise errors.VaultBusy(f"this vault is already served at {running.url} (process {running.pid})")
    # Two servers started at once (two hooks, a hook and `memvault mcp`) both pass the check above: the
    # lock, held as long as the server serves and released by the kernel however it ends, lets one win.
    try:
        lock = locks.lock_held_open(root / store.STATE_DIR / SERVE_LOCK)
    except BlockingIOError:
        raise errors.VaultBusy("this vault is already served (another server is starting)") from None
    token = secrets.token_hex(32)
    try:
        server = ApiServer(("127.0.0.1" if host == "localhost" else host, port), service, token, log)
    except OSError as exc:
        os.close(lock)  # and so unlocked
        raise errors.VaultBusy(f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
                               "choose another with --port, or --port 0 for any free one") from None
    server.lock = lock
    served = Served(host if host != "localhost" else "127.0.0.1", int(server.server_address[1]), token, os.getpid())
    write_atomic(serve_file(root), json.dumps(served.to_json(), indent=2) + "\n", mode=0o600)
    os.chmod(serve_file(root), 0o600)  # an older file keeps its mode through the rename: set it again
    return server, served


def unbind(server: ApiServer, served: Served) -> None:
    """Close the socket and remove ``serve.json`` if it is still ours."""
    server.server_close()
    root = server.service.vault.root
    current = read_served(root)
    if current is not None and current.token == served.token:
        with contextlib.suppress(OSError):
            serve_file(root).unlink()
    if server.lock is not None:
        os.close(server.lock)  # and so unlocked
        server.lock = None


@contextlib.contextmanager
def running(service: MemoryService, host: str = "127.0.0.1", port: int = 0,
            log: Callable[[str], None] = lambda _line: None) -> Iterator[Served]:
    """Serve in a background thread for the length of the block (for tests and scripts)."""
    server, served = bind(service, host, port, log=log)
    thread = threading.Thread(target=server.serve_forever, name="memvault-serve", daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        thread.join(10)
        unbind(server, served)


def run(vault_path: str | None, *, host: str = "127.0.0.1", port: int | None = None, watch: bool = True,
        announce: Callable[[str], None] = print, project: str | None = None, idle_exit: float | None = None) -> None:
    """``memvault serve``: serve until SIGINT or SIGTERM, keeping the model and the indexes warm.

    Requests that name no project are about ``project``, else the repository the server was started in
    (context, search and remember default to it, as for ``memvault mcp``).  With ``idle_exit``, also when
    no request came for that many seconds (the warm server the agent's hooks start, :mod:`vault_engine.agents.warm`).
    The capture queue of the agents' hooks is drained while it serves (:mod:`vault_engine.captures`).
    """
    from ..captures import keep_kicking
    from ..invocation import AT_IMPORT  # noqa: F401 (read now: what this process runs, before anything is loaded)

    if not is_loopback(host):  # checked before anything is opened or loaded
        raise InvalidInput(f"refusing to listen on '{host}': memvault serve binds loopback addresses only "
                           "(127.0.0.1 or ::1), so only this machine can reach it")
    service, here = MemoryService.here(Path(vault_path) if vault_path else None, project=project,
                                       source="tool:http")
    try:
        chosen = service.vault.config.server.port if port is None else port
        server, served = bind(service, host, chosen, log=announce)
        try:
            service.follow_changes()
            if watch:
                service.watch()
            threading.Thread(target=_warm_up, args=(service, announce), name="memvault-warm-up", daemon=True).start()
            announce(f"serving {service.vault.root} at {served.url} (token in {serve_file(service.vault.root)}); "
                     "Ctrl-C stops")
            announce(_scope_line(here.work_key()))
            stop = threading.Event()
            keep_kicking(service.vault.root, stop)
            try:
                _serve_until_signal(server, idle_exit)
            finally:
                stop.set()
        finally:
            unbind(server, served)
    finally:
        service.close()
    announce("stopped")


def _scope_line(project: str | None) -> str:
    """What requests that name no project cover."""
    if project is None:
        return "no current project: searches cover every project, new memories are global (serve --project KEY)"
    return (f"current project: {project} (searches cover it and the global memories unless all_projects is true; "
            "new memories go to it unless scope is global)")


def _warm_up(service: MemoryService, announce: Callable[[str], None]) -> None:
    try:
        service.warm_up()
    except VaultError as exc:
        announce(f"warning: {exc.one_line()}")


def _serve_until_signal(server: ApiServer, idle_exit: float | None = None) -> None:
    """Serve until a signal; with ``idle_exit`` (a hooks' warm server), also until no request came for
    that long or memvault was upgraded on disk since the process started (the next hook starts a server
    with the new code)."""
    from ..invocation import upgraded_since_start

    stop = threading.Event()
    upgraded = False

    def handler(_signum: int, _frame: object) -> None:
        stop.set()

    previous = {number: signal.signal(number, handler) for number in (signal.SIGINT, signal.SIGTERM)}
    thread = threading.Thread(target=server.serve_forever, name="memvault-serve", daemon=True)
    thread.start()
    try:
        while not stop.wait(0.5):
            if not thread.is_alive():
                break
            if idle_exit is not None and time.monotonic() - server.last_request > idle_exit:
                server.log(f"no request for {idle_exit:g}s: stopping")
                break
            if not upgraded and upgraded_since_start():
                upgraded = True
                if idle_exit is not None:
                    server.log("memvault was upgraded on disk: stopping (the next hook starts the new one)")
                    break
                server.log("warning: memvault was upgraded on disk since this server started; "
                           "restart it to run the new version")
    finally:
        server.shutdown()
        thread.join(10)
        for number, old in previous.items():
            signal.signal(number, old)
