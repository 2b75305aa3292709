"""The MCP server object, and serving it on stdio: logging to stderr, background start-up, a stdin that lets go.

``memvault mcp`` calls :func:`run`; tests and embedders build the server object
with :func:`build_server` and connect to it in-process. Only this module imports ``mcp``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...captures import keep_kicking
from ...config import environment
from ...errors import VaultError
from ...patterns import lazy_pattern
from ..mcp_handshake import (
    DESCRIPTION,
    INSTRUCTIONS,
    LOG_PREFIX,
    SERVER_NAME,
    TITLE,
    Early,
    defer_signals,
    keep_tools,
    signalled,
    taken,
    version,
)
from ..project import CurrentProject
from ..service import MemoryService
from .calls import call_tool, failure
from .tools import TOOLS, TOOLS_BY_NAME

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from ...daemon.watch import WatchUpdate

log = logging.getLogger("vault_engine.mcp")

SOURCE = "tool:mcp"
DEBUG_ENV = "MEMVAULT_DEBUG"


def build_server(service: MemoryService, *, here: CurrentProject | None = None) -> Server[Any]:
    """The MCP server object for ``service`` (run it on any transport, or connect to it in-process).

    Each call is awaited in a thread, so a slow call (loading the model, a first sync) never
    stalls the protocol; the service runs its calls one at a time on its own worker thread.
    """
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    project = here or CurrentProject()
    tools = [
        types.Tool(
            name=spec.name, title=spec.title, description=spec.description, input_schema=spec.input_schema,
            output_schema=spec.output_schema,
            annotations=types.ToolAnnotations(title=spec.title, read_only_hint=spec.read_only,
                                              destructive_hint=spec.destructive, idempotent_hint=spec.idempotent,
                                              open_world_hint=False),
        )
        for spec in TOOLS
    ]

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, arguments = params.name, params.arguments
        try:
            outcome = await anyio.to_thread.run_sync(lambda: call_tool(service, name, arguments, project),
                                                     abandon_on_cancel=True)
        except Exception as exc:  # the call could not even be run: still an answer, not a crash
            log.exception("%s failed", name)
            outcome = failure(exc)
        return types.CallToolResult(content=[types.TextContent(text=outcome.text)],
                                    structured_content=outcome.structured, is_error=outcome.is_error)

    def input_schema(name: str) -> dict[str, Any] | None:
        spec = TOOLS_BY_NAME.get(name)
        return spec.input_schema if spec is not None else None

    return Server(SERVER_NAME, version=version(), title=TITLE, description=DESCRIPTION, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call, get_tool_input_schema=input_schema)


def _log_watch(update: WatchUpdate) -> None:
    if update.error is not None:
        log.warning("watch: %s; retrying in %gs", update.error.one_line(), update.retry_in or 0)
    for problem in update.new_problems:
        log.warning("watch: %s", problem.one_line())
    if update.changed:
        log.info("watch: indexes updated (%s, %d changed files, %.2fs)", update.trigger, update.changes,
                 update.seconds)


def _setup_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_PREFIX + "%(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("vault_engine").setLevel(logging.DEBUG if environment().debug else logging.INFO)


def _background(name: str, work: Callable[[], Any]) -> threading.Thread:
    """Run ``work`` in a daemon thread (never holds up the handshake or the exit); failures are logged."""

    def target() -> None:
        try:
            work()
        except VaultError as exc:
            log.warning("%s: %s", name, exc.one_line())
        except Exception:
            log.exception("%s failed", name)

    thread = threading.Thread(target=target, name=f"memvault-{name}", daemon=True)
    thread.start()
    return thread


class StdinLines:
    """The protocol's input lines, read by a daemon thread from a private copy of fd 0.

    stdio_server's own reader blocks in a worker thread that cannot be abandoned, so a
    server stopped by a signal would hang until the client closed stdin; a daemon thread
    never holds up the exit. Meanwhile fd 0 reads the null device, so no child process
    can swallow protocol bytes.
    """

    def __init__(self, first: Sequence[str] = ()) -> None:
        self._first = tuple(first)  # lines read from the wire before (see mcp_handshake), given out first
        self._wire = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)

    def restore(self) -> None:
        """Point fd 0 back at the wire (once the server is done with it)."""
        os.dup2(self._wire, 0)

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        import anyio
        import anyio.from_thread
        import anyio.lowlevel

        send, receive = anyio.create_memory_object_stream[str](16)
        token = anyio.lowlevel.current_token()
        wire = os.fdopen(self._wire, "r", encoding="utf-8", errors="replace", closefd=False)

        def pump() -> None:
            # Failing to hand a line over means the loop is gone or the stream closed: the server is stopping.
            with contextlib.suppress(Exception):
                for line in wire:
                    anyio.from_thread.run(send.send, line, token=token)
            with contextlib.suppress(Exception):
                anyio.from_thread.run_sync(send.close, token=token)

        for line in self._first:
            await send.send(line)
        threading.Thread(target=pump, name="memvault-stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line


class StdoutLines:
    """The protocol's output when the handshake was answered early (:mod:`..mcp_handshake`): the server's
    own answers to the requests answered early are left out (the client has them), every other line written;
    the server's answer to ``tools/list`` is kept for the next start.

    Like the library's own stdout, it writes to a private copy of fd 1 while fd 1 points at stderr,
    so stray output of a child process never lands in the protocol.  An answer of the server that
    is not the one sent early is logged (and a kept tools/list answer replaced): the early answers
    are meant to be the same bytes.
    """

    def __init__(self, early: Early) -> None:
        self._pending = dict(early.answers)  # request id -> the answer the client has
        self._tools_file = early.tools_file  # None once kept (or when it cannot be)
        self._wire = os.dup(1)
        os.dup2(2, 1)
        self._out = os.fdopen(self._wire, "w", encoding="utf-8", closefd=False)

    def restore(self) -> None:
        """Point fd 1 back at the wire."""
        with contextlib.suppress(OSError):
            self._out.flush()
        os.dup2(self._wire, 1)

    def _leaves_out(self, text: str) -> bool:
        if not self._pending and self._tools_file is None:
            return False
        match = _ANSWER.match(text)
        if match is None:
            return False
        request_id = json.loads(match.group(1))
        sent = self._pending.pop(request_id, None)
        if self._tools_file is not None and text.startswith(match.group(0) + '{"tools":['):
            if sent != text:  # none was kept yet, or the code changed under the same digest
                keep_tools(self._tools_file, request_id, text)
            self._tools_file = None
        if sent is None:
            return False
        if sent != text:
            log.warning("an answer given early differs from the server's: %s", text.strip()[:500])
        return True

    async def write(self, text: str) -> int:
        import anyio.to_thread

        if self._leaves_out(text):
            return len(text)
        return await anyio.to_thread.run_sync(self._out.write, text)

    async def flush(self) -> None:
        import anyio.to_thread

        await anyio.to_thread.run_sync(self._out.flush)


# A result, as the library writes it (its id: a number or a string).
_ANSWER = lazy_pattern(r'\{"jsonrpc":"2\.0","id":(-?\d+|"(?:[^"\\]|\\.)*"),"result":')


async def serve_stdio(server: Server[Any], stdin: StdinLines | None = None, stdout: StdoutLines | None = None) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes or SIGTERM/SIGINT arrives."""
    import signal
    from typing import cast

    import anyio
    from mcp.server.stdio import stdio_server

    async with anyio.create_task_group() as group:

        async def stop_on_signals() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                early = signalled()  # one that came while the vault was opened, after the early handshake
                if early is not None:
                    log.info("stopping (%s)", signal.Signals(early).name)
                    group.cancel_scope.cancel()
                    return
                async for signum in signals:
                    log.info("stopping (%s)", signal.Signals(signum).name)
                    group.cancel_scope.cancel()
                    return

        async def protocol() -> None:
            async with stdio_server(stdin=cast("anyio.AsyncFile[str] | None", stdin),
                                    stdout=cast("anyio.AsyncFile[str] | None", stdout)) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()  # stdin closed: the client is gone

        group.start_soon(stop_on_signals)
        group.start_soon(protocol)


def _serve_http(service: MemoryService) -> tuple[Any, Any, threading.Thread] | None:
    """The HTTP API on a free loopback port for the agent's hooks; None when the vault is served already."""
    from .. import http

    try:
        api, served = http.bind(service, "127.0.0.1", 0, log=lambda line: log.info("%s", line))
    except VaultError as exc:
        log.info("no HTTP API for hooks: %s", exc.one_line())
        return None
    thread = threading.Thread(target=api.serve_forever, name="memvault-hooks-api", daemon=True)
    thread.start()
    log.info("HTTP API for hooks at %s", served.url)
    return api, served, thread


def _stop_http(api: Any, served: Any, thread: threading.Thread) -> None:
    from .. import http

    api.shutdown()
    thread.join(10)
    http.unbind(api, served)


def run(vault_path: str | None, *, watch: bool = True, project: str | None = None, http: bool = True) -> None:
    """``memvault mcp``: open the vault, serve it over MCP on stdio, close it on exit.

    The handshake never waits for the model: it loads when the first call needs it (a
    load in the background would slow the handshake down on a small machine), and the
    watcher (``watch``) starts in the background.  The capture queue of the agent's
    hooks is drained while it serves (:mod:`vault_engine.captures`).  ``project``
    names the project tool calls default to (else the repository of the working folder).
    With ``http`` (and no server of the vault running yet), the same open vault also
    answers the HTTP API on a free loopback port, recorded in ``.memvault/serve.json``:
    the agent's hooks then ask this warm process instead of loading the model each time.  Run by
    ``memvault mcp``, this is called only once the client asked for more than the answers given before the
    command line loaded (:mod:`..mcp_handshake`): its first tool call.

    Raises:
        VaultError: the vault cannot be opened (the CLI prints it as one line).
    """
    defer_signals()
    _setup_logging()
    service, here = MemoryService.here(Path(vault_path).expanduser() if vault_path else None, project=project,
                                       source=SOURCE)
    import anyio

    server = build_server(service, here=here)
    log.info("serving %s over MCP on stdio%s", service.vault.root, "" if watch else " (not watching)")
    service.follow_changes()
    starter = _background("watch", lambda: service.watch(on_report=_log_watch)) if watch else None
    api = _serve_http(service) if http else None
    stop_kicking = threading.Event()
    keep_kicking(service.vault.root, stop_kicking)
    early = taken()
    stdin = StdinLines(early.lines if early is not None else ())
    stdout = StdoutLines(early) if early is not None and early.answers else None
    try:
        anyio.run(serve_stdio, server, stdin, stdout)
    finally:
        stop_kicking.set()
        stdin.restore()
        if stdout is not None:
            stdout.restore()
        if api is not None:
            _stop_http(*api)
        if starter is not None:
            starter.join(10)
        try:
            service.close()
        except VaultError as exc:
            log.warning("%s", exc.one_line())
        log.info("stopped")
