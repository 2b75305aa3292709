"""``memvault mcp``'s handshake answered before the MCP library (or the command line) is loaded.

An agent starts ``memvault mcp`` and waits for its answer to ``initialize`` before it goes
on (Claude Code and Codex show their first prompt only once their MCP servers answered).
Loading the MCP library's models takes ~0.4 s and the command line ~0.2 s, and the answer
depends on neither: it is the server's name, version, description, instructions and
capabilities (tools), and the protocol version negotiated as the library negotiates it.

So :func:`answer_early` (called by :func:`vault_engine.cli.main` before the command line
is parsed) reads the client's first line itself, and when it is an ``initialize`` request
of the handshake era answers it at once, with the bytes the library would write.  The
client's next request is ``tools/list``, whose answer depends on nothing but the code:
the library's own answer, as the previous start of this release wrote it, is kept in
memvault's cache folder (``mcp-tools-DIGEST.json``, the digest of the release, the MCP
library's version, the protocol version and the modules that define the tools), and when
it is there ``tools/list`` (and ``ping``) is answered from it as well, for as long as the
client asks nothing else.  The real server starts at the first other request (a tool
call; at once when no tool list is kept), and is handed the same lines first
(:func:`taken`): it negotiates and records the session exactly as if it had read them,
and its own answers to them, which the client already has, are left out of stdout
(:class:`~vault_engine.server.mcp.stdio.StdoutLines`; logged, and the kept answer
replaced, if one ever differs).  So an agent that calls no memvault tool never waits for
the MCP library or the vault to load, nor shares its cores with that; its hooks are then
answered by the warm server they start (:mod:`vault_engine.agents.warm`).  Anything else
(a request of the 2026-07-28 per-request era, a malformed first line, help, an option this
does not know) is only handed over, unanswered.

Nothing but the standard library and what the hooks' fast path loaded already is imported here.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.hooks import find_vault
from ..config import environment

SERVER_NAME = "memvault"
TITLE = "memvault"
DESCRIPTION = "A file-based memory vault: markdown memories, hybrid search, governed context."
# The revisions the MCP library negotiates through initialize (mcp_types.HANDSHAKE_PROTOCOL_VERSIONS,
# oldest to newest; a test keeps them equal): the client's when it is one of them, else the newest.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}
MAX_LINE = 1 << 20  # bytes of a first line read here; past it the line is handed over unanswered
TOOLS_FILE = "mcp-tools-{}.json"  # in memvault's cache folder: the library's tools/list answer, kept
# The modules whose code the tool list is made of (beside the MCP library): a change to one is a new list.
TOOL_SOURCES = ("server/mcp/tools.py", "server/mcp/stdio.py", "server/requests.py", "format/kinds.py", "limits.py")
PACKAGE = Path(__file__).resolve().parent.parent

INSTRUCTIONS = """\
memvault is the user's long-term memory: preferences, conventions, facts and procedures \
kept as markdown files across conversations and projects.

- At the start of a task, call memory_context with a one-line task description (and the \
file path you will work on, when known). Follow its "Always apply" memories; open a \
"May apply" entry with memory_read only when it looks relevant.
- To look something up, call memory_search: it returns ids, titles, one-line summaries and \
why each matched. Then read progressively with memory_read: depth 0 (summary), 1 (detail \
and metadata, the default), 2 (the full body, can be long) only when you need the exact text.
- When the user states a lasting fact, preference, convention or procedure, store it with \
memory_remember (not one-off instructions for the current task); it is kept for the \
repository the server was started in unless you set scope "global" (for what holds in every \
project, such as the user's own preferences). When a memory turns out to be wrong, fix it \
with memory_correct (the old version is kept, superseded); remove one with memory_forget (it \
goes to the trash and can be restored).
- Context and search cover that repository and the global memories; memory_search with \
all_projects true looks in every project.
- After a task in which you applied memories delivered by memory_context, report each one \
with memory_feedback, passing the manifest's application id and the outcome.
"""

_FLAGS = ("--no-watch", "--no-http", "--json")  # what `memvault [--vault DIR] mcp` may carry besides values
_VALUED = ("--vault", "--project")


@dataclass(frozen=True, slots=True)
class Early:
    """The lines read from stdin before the server started, and the answers already written to them."""

    lines: tuple[str, ...]
    answers: dict[int | str, str]  # request id -> the answer line written
    tools_file: Path | None = None  # where the server keeps its tools/list answer for the next start


_early: Early | None = None  # read by this process's main, taken once by the server it starts
_signalled: list[int] = []  # SIGTERM or SIGINT received while the server was set up (see defer_signals)
LOG_PREFIX = "memvault mcp: "  # of every line the server logs to stderr


def version() -> str:
    """memvault's version as the server reports it (the installed package's, as ``memvault --version``)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("memvault")
    except PackageNotFoundError:
        return "0"


def initialize_result(requested: object) -> dict[str, Any]:
    """The ``initialize`` result for a client asking for protocol version ``requested``."""
    negotiated = requested if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS, "protocolVersion": negotiated,
            "serverInfo": {"description": DESCRIPTION, "name": SERVER_NAME, "title": TITLE, "version": version()}}


def response_line(request_id: int | str, result: dict[str, Any]) -> str:
    """A JSON-RPC response as the MCP library writes it on stdio: compact, non-ASCII as it is, the keys in
    the order given (:func:`initialize_result` gives them in the library's order)."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":"),
                      ensure_ascii=False) + "\n"


def handshake(line: str) -> tuple[int | str, str] | None:
    """The request id and the answer line for a first line that is a well-formed ``initialize`` of the
    handshake era; None for anything else (the server answers it, or refuses it, itself)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not isinstance(params, dict):
        return None
    client = params.get("clientInfo")
    if (not isinstance(params.get("protocolVersion"), str) or not isinstance(params.get("capabilities"), dict)
            or not isinstance(client, dict) or not isinstance(client.get("name"), str)
            or not isinstance(client.get("version"), str) or "_meta" in params):
        return None
    return request_id, response_line(request_id, initialize_result(params["protocolVersion"]))


def serves_mcp(argv: list[str]) -> Path | bool:
    """Whether ``argv`` is ``[--vault DIR] mcp [OPTIONS]`` with only options this knows: the explicit vault
    folder (a Path), True without one, False for anything else."""
    args, vault, seen_mcp = list(argv), None, False
    while args:
        arg = args.pop(0)
        name, has_value, value = arg.partition("=")
        if arg == "mcp" and not seen_mcp:
            seen_mcp = True
        elif name in _VALUED and (seen_mcp or name == "--vault"):
            if not has_value:
                if not args:
                    return False
                value = args.pop(0)
            if name == "--vault":
                vault = Path(value).expanduser()
        elif arg in _FLAGS and (seen_mcp or arg == "--json"):
            continue
        else:
            return False
    if not seen_mcp:
        return False
    return vault if vault is not None else True


def answer_early(argv: list[str]) -> None:
    """For ``memvault mcp`` with a vault there already, with a client on stdin (not a terminal): read the
    client's first line and answer it when it is the handshake; then, when the tool list is kept, answer
    ``tools/list`` and ``ping`` until the client asks for anything else, and return (the caller then loads
    the command line and the server, which :func:`taken` hands the lines read).  A client gone before that
    ends the process here (exit 0)."""
    global _early
    served = serves_mcp(argv)
    if served is False or os.isatty(0):
        return
    root = find_vault(str(served) if isinstance(served, Path) else None, environment(), Path.cwd())
    if root is None:
        return  # no such vault yet: the command line creates it, or says what is wrong, before any answer
    line = _read_line(0)
    found = handshake(line) if line.endswith("\n") else None
    if found is None:
        _early = Early((line,), {})
        return
    request_id, answer = found
    # The client may stop the server as soon as it has the answers, while the server still loads: it then
    # stops at once, saying so as it would have (nothing was started yet; see also defer_signals).
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _stop_now)
    _write(answer)
    lines, answers = [line], {request_id: answer}
    tools_file = _tools_file(root, json.loads(answer)["result"]["protocolVersion"])
    kept = _kept_tools(tools_file) if tools_file is not None else None
    # With the tool list known, the server is needed only for a request these answers do not cover (a tool
    # call): until then nothing is loaded, and an agent that calls no memvault tool never waits for it.
    while kept is not None:
        line = _read_line(0)
        if not line:  # the client is gone, having asked for nothing the server was needed for
            os.write(2, f"{LOG_PREFIX}INFO: stopped\n".encode())
            raise SystemExit(0)
        lines.append(line)
        listed, pinged = tools_request(line), ping_request(line)
        if listed is not None:
            answers[listed] = kept.replace(KEPT_ID, f'"id":{json.dumps(listed, ensure_ascii=False)},', 1)
            _write(answers[listed])
        elif pinged is not None:
            answers[pinged] = response_line(pinged, {})
            _write(answers[pinged])
        elif not line.endswith("\n") or _method(line) != "notifications/initialized":
            break
    _early = Early(tuple(lines), answers, tools_file)


KEPT_ID = '"id":0,'  # the request id in a kept tools/list answer


def keep_tool_list(command: list[str], protocol: str, cwd: Path, timeout: float) -> bool:
    """Start the server (``command`` without ``mcp``) as a client asking for ``protocol`` does, ask for its tool
    list and stop it: the server keeps its answer, so that client's next start is answered at once (an agent that
    gives its servers a short grace before the first turn, Codex, offers the tools from that turn on); whether an
    answer came within ``timeout`` seconds.  Nothing is raised: without the answer the server keeps it at its own
    first start."""
    import subprocess
    import threading

    lines = (hello_request(0, protocol), {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    try:
        proc = subprocess.Popen([*command, "mcp", "--no-watch", "--no-http"], cwd=cwd, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return False
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    listed = False
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines).encode())
        proc.stdin.flush()
        for answer in proc.stdout:  # the answer to tools/list is written once it is kept
            listed = answer.startswith(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[')
            if listed:
                break
        proc.stdin.close()
        proc.wait()
    except OSError:
        listed = False
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return listed


def hello_request(request_id: int | str, protocol: str) -> dict[str, Any]:
    """An ``initialize`` request of the handshake era from a client asking for ``protocol``."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize",
            "params": {"protocolVersion": protocol, "capabilities": {},
                       "clientInfo": {"name": SERVER_NAME, "version": version()}}}


def ping_request(line: str) -> int | str | None:
    """The id of a ``ping`` request (answered with an empty result); None for any other line."""
    message = _message(line)
    if message is None or message.get("method") != "ping" or message.get("params") not in (None, {}):
        return None
    request_id = message.get("id")
    return request_id if isinstance(request_id, int | str) and not isinstance(request_id, bool) else None


def _message(line: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else None


def tools_request(line: str) -> int | str | None:
    """The id of a ``tools/list`` request for the first page; None for any other line."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or message.get("method") != "tools/list":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not _first_page(params):
        return None
    return request_id


def _first_page(params: object) -> bool:
    """No params, or only a progress token (Codex sends one; the list reports no progress)."""
    if params is None or params == {}:
        return True
    meta = params.get("_meta") if isinstance(params, dict) and set(params) == {"_meta"} else None
    return (isinstance(meta, dict) and set(meta) == {"progressToken"}
            and isinstance(meta["progressToken"], int | str) and not isinstance(meta["progressToken"], bool))


def keep_tools(path: Path, request_id: int | str, line: str) -> bool:
    """Keep the library's answer ``line`` to ``tools/list`` request ``request_id`` for the next start; whether it
    was kept (only a complete first page is)."""
    head = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id, ensure_ascii=False)},"result":{{"tools":['
    if not line.startswith(head) or not line.endswith("\n") or "nextCursor" in json.loads(line)["result"]:
        return False
    from ..fsio import write_atomic

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, '{"jsonrpc":"2.0",' + KEPT_ID + line[len(head) - len('"result":{"tools":['):])
    except OSError:
        return False
    return True


def _kept_tools(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if text.startswith('{"jsonrpc":"2.0",' + KEPT_ID) and text.endswith("\n") else None


def _tools_file(root: Path, protocol: str) -> Path | None:
    """Where the tools/list answer of this code and this protocol version is kept (None: cannot tell)."""
    import hashlib
    from importlib.metadata import version as installed

    from ..config import cache_folder, load

    try:
        digest = hashlib.sha256(f"{version()}\0{installed('mcp')}\0{protocol}".encode())
        for name in TOOL_SOURCES:
            digest.update((PACKAGE / name).read_bytes())
        return cache_folder(load(root).cache, vault=root) / TOOLS_FILE.format(digest.hexdigest()[:16])
    except Exception:  # a missing file or package, or a config error (the server's to report): nothing kept
        return None


def _method(line: str) -> object:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


def _write(line: str) -> None:
    data = line.encode("utf-8")
    while data:
        data = data[os.write(1, data):]


def taken() -> Early | None:
    """The first line read (and maybe answered) by :func:`answer_early`, given once to the server."""
    global _early
    early, _early = _early, None
    return early


def signalled() -> int | None:
    """The stopping signal received while the server was being set up, if any (see :func:`defer_signals`)."""
    return _signalled[0] if _signalled else None


def defer_signals() -> None:
    """From here until the server listens for signals itself, a stopping signal is kept for it (it then stops
    as it would have): the vault is being opened and the server set up, which an exit must not cut short.
    Only after an early answer: otherwise the client is still waiting for one, as before."""
    if signal.getsignal(signal.SIGTERM) is _stop_now:
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda received, _frame: _signalled.append(received))


def _stop_now(received: int, _frame: object) -> None:
    """A stopping signal after the early answers, before the server is set up: exit now, as the server would."""
    name = signal.Signals(received).name
    os.write(2, f"{LOG_PREFIX}INFO: stopping ({name})\n{LOG_PREFIX}INFO: stopped\n".encode())
    raise SystemExit(0)


def _read_line(fd: int) -> str:
    """One line from ``fd``, a byte at a time: nothing after its newline is taken from the server's reader."""
    data = bytearray()
    while len(data) < MAX_LINE:
        byte = os.read(fd, 1)
        if not byte:
            break
        data += byte
        if byte == b"\n":
            break
    return data.decode("utf-8", errors="replace")
