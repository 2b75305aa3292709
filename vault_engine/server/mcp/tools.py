"""The seven MCP tools: what an agent sees (name, description, input and output schemas) and what each runs.

The input schemas are generated from the request schemas of
:mod:`vault_engine.server.requests`; a call's checked arguments are parsed into
that request and handed to the :class:`MemoryService` method of the same name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...format.kinds import OUTCOMES
from ..project import CurrentProject
from ..requests import (
    OPERATIONS,
    ContextRequest,
    CorrectRequest,
    FeedbackRequest,
    ForgetRequest,
    ReadRequest,
    RememberRequest,
    Request,
    SearchRequest,
    input_schema,
)
from ..service import MemoryService
from .render import (
    render_context,
    render_correct,
    render_feedback,
    render_forget,
    render_read,
    render_remember,
    render_search,
)


def _nullable(kind: str) -> dict[str, Any]:
    return {"type": [kind, "null"]}


def _output(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    """An output schema: the fields a client may rely on (more may be present)."""
    return {"type": "object", "properties": properties, "required": list(required)}


WHY = {"type": "array", "items": {"type": "string"}}

CHANGE_OUTPUT = _output({
    "action": {"type": "string"},
    "id": {"type": "string"},
    "path": _nullable("string"),
    "related": _nullable("string"),
    "event": _nullable("string"),
    "conflicts": {"type": "array"},
    "overviews": {"type": "array", "items": {"type": "string"}},
}, ["action", "id"])

Call = Callable[[MemoryService, dict[str, Any], CurrentProject], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One MCP tool: what the agent sees (name, description, schemas) and what it runs."""

    name: str
    title: str
    description: str
    request: type[Request]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    call: Call
    render: Callable[[Mapping[str, Any]], str]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


def _relative(args: dict[str, Any], here: CurrentProject) -> dict[str, Any]:
    """``args`` with an absolute ``path`` inside the current repository made relative to its root."""
    path = args.get("path")
    return {**args, "path": here.relative(path)} if isinstance(path, str) else args


def _call(operation: str, relative: bool = False) -> Call:
    """The MCP call of one operation: its request parsed from the tool's arguments (a ``path`` inside the
    current repository made relative first, where the request has one) and the service's method run."""
    request = OPERATIONS[operation]

    def run(service: MemoryService, args: dict[str, Any], here: CurrentProject) -> dict[str, Any]:
        method: Callable[[Any], dict[str, Any]] = getattr(service, operation)
        return method(request.parse(_relative(args, here) if relative else args))

    return run


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memory_context", "Memories for a task",
        "Get the memories that apply to the task you are starting. Call it at the START of every non-trivial "
        "task (before planning or editing) with a one-line description of the task and, when known, the file "
        "you will work on. Returns markdown with two parts: 'Always apply' (the user's profile, standing "
        "policies and matching conventions, in full: follow them) and 'May apply' (id, title and a one-line "
        "abstract: open one with memory_read only if it looks relevant). Also returns an `application` id: "
        "after the task, call memory_feedback for each memory you applied, with that id. The project defaults "
        "to the repository the server was started in.",
        ContextRequest, input_schema(ContextRequest),
        _output({
            "task": {"type": "string"},
            "project": _nullable("string"),
            "budget": {"type": "integer"},
            "used": {"type": "integer"},
            "application": _nullable("string"),
            "resident": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "text": {"type": "string"}, "why": WHY,
            }, "required": ["id", "title", "text"]}},
            "manifest": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "abstract": {"type": "string"},
                "whyApplied": WHY,
            }, "required": ["id", "title"]}},
            "omitted": {"type": "integer"},
            "note": _nullable("string"),
            "markdown": {"type": "string"},
        }, ["task", "application", "resident", "manifest", "markdown"]),
        _call("context", relative=True), render_context,
    ),
    ToolSpec(
        "memory_search", "Search memories",
        "Search the vault (full text and meaning) when you need something memory_context did not deliver: "
        "'how do we deploy', 'what did the user say about logging', a name or an error message. Returns, for "
        "each hit, its id, title, one-line summary, score and why it matched, not the content: open the "
        "promising ones with memory_read (depth 0 to check, 1 or 2 to use). Two hits that say the same thing "
        "with different values (a number, a name, a path) come side by side and name each other in conflicts: "
        "check which one holds before relying on either. When nothing in the vault matches closely it answers no "
        "hits and a notice (weak: true lists the closest, marked weak). Also lists relevant memories that are in "
        "the trash, which the user can restore. Like memory_context, it covers the repository the server was "
        "started in and the global memories (the result's `project` says which); all_projects: true searches "
        "every project.",
        SearchRequest, input_schema(SearchRequest),
        _output({
            "query": {"type": "string"},
            "project": _nullable("string"),
            "hits": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "score": {"type": "number"},
                "summary": _nullable("string"), "trigger": _nullable("string"), "type": {"type": "string"},
                "path": {"type": "string"}, "why": WHY, "evidence": {"type": "number"}, "weak": {"type": "boolean"},
                "duplicates": {"type": "array", "items": {"type": "string"}},
                "conflicts": {"type": "array", "items": {"type": "string"}},
            }, "required": ["id", "title", "score"]}},
            "revivable": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "score": {"type": "number"},
                "restore": {"type": "string"},
            }, "required": ["id", "title"]}},
            "notice": _nullable("string"), "weak_left_out": {"type": "integer"},
        }, ["query", "hits", "revivable"]),
        _call("search", relative=True), render_search, read_only=True, idempotent=True,
    ),
    ToolSpec(
        "memory_read", "Read a memory",
        "Read one memory by id, progressively. depth 0: title, one-line summary and trigger (cheap: enough to "
        "judge relevance). depth 1 (default): adds a detailed summary, the metadata (type, scope, trust, "
        "lifecycle, paths, tags, history) and links. depth 2: adds the full body, which can be long: ask for it "
        "only when you need the exact text (a procedure's steps, a document). A memory in the trash or "
        "superseded by a newer version can still be read and says so.",
        ReadRequest, input_schema(ReadRequest),
        _output({
            "id": {"type": "string"},
            "title": {"type": "string"},
            "depth": {"type": "integer", "enum": [0, 1, 2]},
            "summary": _nullable("string"),
            "trigger": _nullable("string"),
            "path": {"type": "string"},
            "trashed": {"type": "boolean"},
            "detail": _nullable("string"),
            "metadata": {"type": "object"},
            "links": {"type": "array"},
            "body": {"type": "string"},
            "text": {"type": "string"},
            "warning": {"type": "string"},
        }, ["id", "title", "depth", "text"]),
        _call("read"), render_read, read_only=True,
    ),
    ToolSpec(
        "memory_remember", "Remember",
        "Store a durable memory: a fact about the user or a project, a preference, a convention or a procedure "
        "that the user states or confirms ('we always use pytest fixtures', 'the staging database is "
        "read-only', 'I prefer short answers'). Write it as a self-contained statement that will make sense in "
        "a later conversation. Do not store instructions for the current task only ('rename this file', "
        "'skip the tests just this once'), secrets, or what the repository already says; the vault refuses "
        "text marked as one-off ('just this once', 'for this task only') unless force is true. The same text "
        "stored again adds evidence to the existing "
        "memory instead of a duplicate. A memory belongs to the repository the server was started in (and, if "
        "it concerns some files, set paths); for something true in every project (the user's own preferences, "
        "habits and facts about them) set scope 'global'. core-profile memories are "
        "global unless a project is given.",
        # The tool has always listed scope before project; the request (and the HTTP API) the other way round.
        RememberRequest, input_schema(RememberRequest, first=("text", "title", "type", "scope")),
        _output({
            "id": {"type": "string"},
            "path": {"type": "string"},
            "created": {"type": "boolean"},
            "notice": _nullable("string"),
            "scope": {"type": "string", "enum": ["global", "project"]},
            "project": _nullable("string"),
        }, ["id", "path", "created"]),
        _call("remember"), render_remember,
    ),
    ToolSpec(
        "memory_correct", "Correct a memory",
        "Replace a memory that is wrong or outdated with a corrected version, e.g. when the user says 'no, we "
        "moved to uv'. The text becomes a new memory with a new id; the old one stays in the vault, marked "
        "superseded and out of search and context (undo: memvault rollback OLD_ID). Use it instead of "
        "remember + forget when fixing an existing memory.",
        CorrectRequest, input_schema(CorrectRequest),
        CHANGE_OUTPUT,
        _call("correct"), render_correct,
    ),
    ToolSpec(
        "memory_forget", "Forget a memory",
        "Forget a memory that should no longer be used (the user asks to, or it is obsolete with nothing to "
        "replace it; to fix a memory use memory_correct). It moves to the trash, leaves search and context, "
        "and can be restored by the user (memvault trash restore ID, or memvault rollback ID).",
        ForgetRequest, input_schema(ForgetRequest),
        CHANGE_OUTPUT,
        _call("forget"), render_forget, destructive=True,
    ),
    ToolSpec(
        "memory_feedback", "Report how a memory worked out",
        "After a task, report how a memory delivered by memory_context worked out, once per memory you "
        "applied or deliberately did not: used-successfully (it helped), ignored (not relevant), overridden "
        "(the user or the situation asked otherwise), corrected (it was wrong; fix it with memory_correct "
        "too), contributed-to-failure (following it caused a problem). Pass the application id from "
        "memory_context's result: the same report for one application counts once. used-successfully "
        "promotes a trial memory to proven; corrected and contributed-to-failure retire an inferred one.",
        FeedbackRequest, input_schema(FeedbackRequest),
        _output({
            "action": {"type": "string"},
            "id": {"type": "string"},
            "path": {"type": "string"},
            "outcome": {"type": "string", "enum": list(OUTCOMES)},
            "old_lifecycle": {"type": "string"},
            "lifecycle": {"type": "string"},
            "applied": {"type": "object"},
            "last_applied": _nullable("string"),
            "application": _nullable("string"),
            "event": {"type": "string"},
        }, ["action", "id", "outcome", "lifecycle"]),
        _call("feedback"), render_feedback, idempotent=True,
    ),
)

TOOLS_BY_NAME = {spec.name: spec for spec in TOOLS}
