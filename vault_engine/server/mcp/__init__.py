"""The vault as an MCP server on stdio: seven tools over one :class:`MemoryService`.

``memvault mcp`` calls :func:`run`; tests and embedders build the server object
with :func:`build_server` and connect to it in-process.

Tools (their descriptions tell an agent when to call each one):

========================  ===============================================================
``memory_context``        the memories that apply to a task: call it first
``memory_search``         hybrid search: ids, titles, summaries and why each matched
``memory_read``           one memory at depth 0 (summary), 1 (detail, metadata) or 2 (body)
``memory_remember``       store a durable fact, preference, convention or procedure
``memory_correct``        replace a wrong memory; the old one is kept, superseded
``memory_forget``         move a memory to the trash (reversible)
``memory_feedback``       how a delivered memory worked out, for its ``application``
========================  ===============================================================

Every result carries the service's JSON view as ``structuredContent`` (each
tool declares an ``outputSchema``) and a compact text rendering for the model.
Every failure (bad arguments, an unknown id, a busy vault, a malformed file, a
bug) comes back as a tool result with ``isError`` and one line of text; the
server itself keeps running.

The package, a module per job:

==============  ==================================================================
``tools``       the tool table (:data:`TOOLS`): schemas from the request schemas
``arguments``   a call's arguments checked against its tool's input schema
``calls``       one call: check, run, render; every failure an error result
``render``      the text an agent reads for each result
``stdio``       the server object (:func:`build_server`) and :func:`run` on stdio
==============  ==================================================================

Its answer to ``initialize`` is written before this package (or the MCP library) is even imported
(:mod:`vault_engine.server.mcp_handshake`). The repository the server was started in (:class:`CurrentProject`,
shared with the HTTP API) lives in :mod:`vault_engine.server.project`. Only ``stdio`` imports the MCP library.
Logging goes to stderr; stdout is the protocol.
"""

from __future__ import annotations

from ..mcp_handshake import INSTRUCTIONS, SERVER_NAME
from ..project import CurrentProject
from .arguments import check_arguments
from .calls import Outcome, call_tool, failure
from .render import (
    render_context,
    render_correct,
    render_feedback,
    render_forget,
    render_read,
    render_remember,
    render_search,
)
from .stdio import DEBUG_ENV, SOURCE, StdinLines, StdoutLines, build_server, run, serve_stdio
from .tools import TOOLS, TOOLS_BY_NAME, ToolSpec

__all__ = [
    "DEBUG_ENV", "INSTRUCTIONS", "SERVER_NAME", "SOURCE", "TOOLS", "TOOLS_BY_NAME", "CurrentProject", "Outcome",
    "StdinLines", "StdoutLines", "ToolSpec", "build_server", "call_tool", "check_arguments", "failure",
    "render_context", "render_correct", "render_feedback", "render_forget", "render_read", "render_remember",
    "render_search", "run", "serve_stdio",
]
