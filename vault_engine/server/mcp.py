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

The tool table (:data:`TOOLS`), the argument checks and the renderings need no
MCP library: only :func:`build_server` and :func:`run` import ``mcp``.
Logging goes to stderr; stdout is the protocol.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import environment
from ..errors import InvalidInput, VaultError
from ..format.memory import AUTHORITIES, OUTCOMES, SCOPES, TRUSTS, TYPES
from .service import MAX_LIMIT, MAX_TEXT, MemoryService
from .views import error_json

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from ..context.project import ProjectIdentity
    from ..index.watch import WatchUpdate

log = logging.getLogger("vault_engine.mcp")

SERVER_NAME = "memvault"
SOURCE = "tool:mcp"
DEBUG_ENV = "MEMVAULT_DEBUG"

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
memory_remember (not one-off instructions for the current task). When a memory turns out to \
be wrong, fix it with memory_correct (the old version is kept, superseded); remove one with \
memory_forget (it goes to the trash and can be restored).
- After a task in which you applied memories delivered by memory_context, report each one \
with memory_feedback, passing the manifest's application id and the outcome.
"""


# ---------------------------------------------------------------- schemas


def _nullable(kind: str) -> dict[str, Any]:
    return {"type": [kind, "null"]}


def _string(description: str, *, max_length: int, min_length: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description, "maxLength": max_length}
    if min_length is not None:
        schema["minLength"] = min_length
    return schema


def _choice(description: str, choices: Sequence[str], default: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "enum": list(choices), "description": description}
    if default is not None:
        schema["default"] = default
    return schema


def _list(description: str, item: dict[str, Any], max_items: int = 50) -> dict[str, Any]:
    return {"type": "array", "items": item, "maxItems": max_items, "description": description}


def _object(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


def _output(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    """An output schema: the fields a client may rely on (more may be present)."""
    return {"type": "object", "properties": properties, "required": list(required)}


ID = _string("A memory id as returned by the other tools, e.g. m-01j9z3k4q8r2s5t7v9w1x3y5z7.",
             max_length=200, min_length=1)
PROJECT = _string("Project key, e.g. github.com/acme/api (see the `project` field of memory_context's result). "
                  "Default: the repository the server was started in.", max_length=500)
PATH = _string("The file or folder the work is about, relative to the repository root (e.g. src/auth/login.py); "
               "matched against the memories' path selectors such as tests/**.", max_length=1000)
STRINGS = {"type": "string", "maxLength": 1000}
WHY = {"type": "array", "items": {"type": "string"}}

CHANGE_OUTPUT = _output({
    "action": {"type": "string"},
    "id": {"type": "string"},
    "path": _nullable("string"),
    "related": _nullable("string"),
    "event": _nullable("string"),
    "conflicts": {"type": "array"},
}, ["action", "id"])


# ---------------------------------------------------------------- text renderings


def _clip(text: str | None, size: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def _reasons(why: Sequence[str]) -> str:
    """The reasons a hit matched, without the arithmetic of fusion and boosts."""
    return "; ".join(w for w in why if not w.startswith(("fused:", "boosts:"))
                     and not w.endswith(("no match", "not in the top candidates")))


def render_search(result: Mapping[str, Any]) -> str:
    hits = result.get("hits") or []
    lines: list[str] = []
    if result.get("notice"):
        lines.append(str(result["notice"]))
    if hits:
        lines.append(f'{len(hits)} memor{"y" if len(hits) == 1 else "ies"} match "{_clip(result.get("query"), 80)}" '
                     "(open one with memory_read):")
        for hit in hits:
            where = hit.get("type") or "memory"
            if hit.get("scope") == "project" and hit.get("project"):
                where += f", project {hit['project']}"
            if hit.get("lifecycle") == "trial":
                where += ", trial"
            line = f"- {hit['id']}  {hit['title']}  (score {float(hit.get('score') or 0):.3f}; {where})"
            summary = _clip(hit.get("summary") or hit.get("snippet"), 240)
            if summary:
                line += f": {summary}"
            reasons = _reasons(hit.get("why") or [])
            if reasons:
                line += f" [why: {reasons}]"
            lines.append(line)
    else:
        lines.append(f'No memory matches "{_clip(result.get("query"), 80)}".')
    revivable = result.get("revivable") or []
    if revivable:
        lines.append("In the trash but relevant (the user can restore one with `memvault trash restore ID`):")
        lines += [f"- {item['id']}  {item['title']}  (score {float(item.get('score') or 0):.3f})"
                  for item in revivable]
    return "\n".join(lines)


def render_read(view: Mapping[str, Any]) -> str:
    text = str(view.get("text") or "").replace("read it with --depth 2", "read it with memory_read depth 2")
    if view.get("warning"):
        text = text.rstrip("\n") + f"\n({view['warning']})\n"
    return text


def render_remember(result: Mapping[str, Any]) -> str:
    if result.get("created"):
        text = f"Remembered {result['id']} ({result['path']})."
    else:
        text = f"Already remembered: added evidence to {result['id']} ({result['path']})."
    if result.get("notice"):
        text += f" {result['notice']}"
    return text


def _conflicts(result: Mapping[str, Any]) -> str:
    conflicts = result.get("conflicts") or []
    return f" Conflicts: {'; '.join(map(str, conflicts))}." if conflicts else ""


def render_correct(result: Mapping[str, Any]) -> str:
    old = result.get("related")
    return (f"Corrected {old}: the new version is {result['id']} ({result['path']}); {old} is kept as superseded "
            f"(undo: memvault rollback {old})." + _conflicts(result))


def render_forget(result: Mapping[str, Any]) -> str:
    return (f"Moved {result['id']} to the trash ({result['path']}); it can be restored with "
            f"`memvault trash restore {result['id']}`." + _conflicts(result))


_SHOW_HINT = re.compile(r"`memvault show ID --depth 2`")
_FEEDBACK_HINT = re.compile(r"`memvault feedback ID --outcome used-successfully --application (\S+)`")


def render_context(manifest: Mapping[str, Any]) -> str:
    text = str(manifest.get("markdown") or "")
    text = _SHOW_HINT.sub("memory_read, depth 1 or 2", text)
    text = _FEEDBACK_HINT.sub(r"memory_feedback with each applied id, outcome used-successfully and application \1",
                              text)
    if not text.strip():
        text = "No memories apply to this task."
    if manifest.get("note"):
        text = text.rstrip("\n") + f"\n({manifest['note']})\n"
    application = manifest.get("application")
    if application and str(application) not in text:
        text = text.rstrip("\n") + (f"\nApplication id: {application} (pass it to memory_feedback for each memory "
                                    "you applied).\n")
    return text


def render_feedback(result: Mapping[str, Any]) -> str:
    action, ident, outcome = result.get("action"), result["id"], result["outcome"]
    if action == "already-recorded":
        return f"Already recorded {outcome} for {ident} in application {result.get('application')}; it counts once."
    text = f"Recorded {outcome} for {ident}"
    if action == "promoted":
        text += f": promoted from {result['old_lifecycle']} to {result['lifecycle']}"
    elif action == "superseded":
        text += f": it is now superseded (undo: memvault rollback {ident})"
    else:
        text += f" (lifecycle {result['lifecycle']})"
    return text + "."


# ---------------------------------------------------------------- the project the server was started in


class CurrentProject:
    """The repository around the working folder: its key (for defaults) and root (to relativise paths).

    Identified on first use, once.
    """

    def __init__(self, folder: Path | None = None):
        self._folder = folder
        self._lock = threading.Lock()
        self._identity: ProjectIdentity | None = None
        self._done = False

    def identity(self) -> ProjectIdentity | None:
        with self._lock:
            if not self._done:
                from ..context.project import identify

                try:
                    self._identity = identify(self._folder or Path.cwd())
                except (OSError, VaultError) as exc:
                    log.warning("cannot identify the current project: %s", exc)
                self._done = True
                if self._identity is not None:
                    log.info("current project: %s (%s)", self._identity.key, self._identity.how)
            return self._identity

    def key(self) -> str | None:
        identity = self.identity()
        return identity.key if identity is not None else None

    def relative(self, path: str) -> str:
        """``path`` relative to the repository root when it is an absolute path inside it."""
        if not os.path.isabs(path):
            return path
        identity = self.identity()
        if identity is None or identity.root is None:
            return path
        for base, target in ((identity.root, Path(path)), (identity.root.resolve(), Path(path).resolve())):
            with contextlib.suppress(ValueError, OSError):
                return target.relative_to(base).as_posix()
        return path


# ---------------------------------------------------------------- the tools


Call = Callable[[MemoryService, dict[str, Any], CurrentProject], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One MCP tool: what the agent sees (name, description, schemas) and what it runs."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    call: Call
    render: Callable[[Mapping[str, Any]], str]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


def _search(service: MemoryService, args: dict[str, Any], here: CurrentProject) -> dict[str, Any]:
    path = args.get("path")
    return service.search(args["query"], limit=args.get("limit"), project=args.get("project"),
                          path=here.relative(path) if isinstance(path, str) else path,
                          types=args.get("types"), trust=args.get("trust"))


def _read(service: MemoryService, args: dict[str, Any], _here: CurrentProject) -> dict[str, Any]:
    return service.read(args["id"], depth=args.get("depth", 1))


def _remember(service: MemoryService, args: dict[str, Any], _here: CurrentProject) -> dict[str, Any]:
    return service.remember(
        args["text"], title=args.get("title"), type=args.get("type", "fact"), project=args.get("project"),
        scope=args.get("scope"), paths=args.get("paths"), tags=args.get("tags"), summary=args.get("summary"),
        trigger=args.get("trigger"), authority=args.get("authority", "explicit"), force=bool(args.get("force")),
    )


def _correct(service: MemoryService, args: dict[str, Any], _here: CurrentProject) -> dict[str, Any]:
    return service.correct(args["id"], args["text"], title=args.get("title"))


def _forget(service: MemoryService, args: dict[str, Any], _here: CurrentProject) -> dict[str, Any]:
    return service.forget(args["id"])


def _context(service: MemoryService, args: dict[str, Any], here: CurrentProject) -> dict[str, Any]:
    path = args.get("path")
    return service.context(args["task"], path=here.relative(path) if isinstance(path, str) else path,
                           operation=args.get("operation"), phase=args.get("phase"), kind=args.get("kind"),
                           project=args.get("project"), budget=args.get("budget"), record=args.get("record", True))


def _feedback(service: MemoryService, args: dict[str, Any], _here: CurrentProject) -> dict[str, Any]:
    return service.feedback(args["id"], args["outcome"], application=args.get("application"))


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
        _object({
            "task": _string("What you are about to do, in one line, e.g. 'add a rate limit to the login "
                            "endpoint'.", max_length=4000, min_length=1),
            "path": PATH,
            "operation": _string("The operation, e.g. edit, commit, review, deploy (matched against the "
                                 "memories' operation selectors).", max_length=200),
            "phase": _string("The phase, e.g. plan, implement, verify.", max_length=200),
            "kind": _string("The task kind, e.g. test, refactor, docs (matched against task selectors).",
                            max_length=200),
            "project": PROJECT,
            "budget": {"type": "integer", "minimum": 0, "maximum": 200_000,
                       "description": "Most characters of memory to deliver (default: the vault's "
                                      "context.budget_chars, 6000)."},
            "record": {"type": "boolean", "default": True,
                       "description": "false: preview only, not journalled and without an application id. "
                                      "Leave it out normally."},
        }, ["task"]),
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
        _context, render_context,
    ),
    ToolSpec(
        "memory_search", "Search memories",
        "Search the vault (full text and meaning) when you need something memory_context did not deliver: "
        "'how do we deploy', 'what did the user say about logging', a name or an error message. Returns, for "
        "each hit, its id, title, one-line summary, score and why it matched, not the content: open the "
        "promising ones with memory_read (depth 0 to check, 1 or 2 to use). Also lists relevant memories "
        "that are in the trash, which the user can restore.",
        _object({
            "query": _string("What to look for: a question, keywords, a name or an error message.",
                             max_length=2000, min_length=1),
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                      "description": "Most hits to return (default: the vault's retrieval.limit, 10)."},
            "project": _string("Only global memories and those of this project key (e.g. github.com/acme/api). "
                               "Default: every project.", max_length=500),
            "path": _string("Leave out memories whose path selectors do not match this file or folder "
                            "(relative to the repository root).", max_length=1000),
            "types": _list("Only these kinds of memory.", _choice("A kind of memory.", TYPES), len(TYPES)),
            "trust": _list("Trust levels to include (default: system and learned, plus external when the vault "
                           "says so; 'any' for all).", _choice("A trust level.", (*TRUSTS, "any")),
                           len(TRUSTS) + 1),
        }, ["query"]),
        _output({
            "query": {"type": "string"},
            "hits": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "score": {"type": "number"},
                "summary": _nullable("string"), "trigger": _nullable("string"), "type": {"type": "string"},
                "path": {"type": "string"}, "why": WHY,
            }, "required": ["id", "title", "score"]}},
            "revivable": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"}, "score": {"type": "number"},
                "restore": {"type": "string"},
            }, "required": ["id", "title"]}},
            "notice": _nullable("string"),
        }, ["query", "hits", "revivable"]),
        _search, render_search, read_only=True, idempotent=True,
    ),
    ToolSpec(
        "memory_read", "Read a memory",
        "Read one memory by id, progressively. depth 0: title, one-line summary and trigger (cheap: enough to "
        "judge relevance). depth 1 (default): adds a detailed summary, the metadata (type, scope, trust, "
        "lifecycle, paths, tags, history) and links. depth 2: adds the full body, which can be long: ask for it "
        "only when you need the exact text (a procedure's steps, a document). A memory in the trash or "
        "superseded by a newer version can still be read and says so.",
        _object({
            "id": ID,
            "depth": {"type": "integer", "enum": [0, 1, 2], "default": 1,
                      "description": "0 = summary and trigger, 1 = + detail, metadata and links, 2 = + full body."},
        }, ["id"]),
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
        _read, render_read, read_only=True,
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
        "memory instead of a duplicate. For something true only in one repository, set scope 'project' (the "
        "project defaults to the repository the server was started in) and, if it concerns some files, paths.",
        _object({
            "text": _string("The memory, as a self-contained statement (markdown allowed).",
                            max_length=MAX_TEXT, min_length=1),
            "title": _string("A short title (default: the first line of text).", max_length=300),
            "type": _choice("fact (default), collaboration-policy (how to work with the user), procedure "
                            "(steps), core-profile (who the user is), episode (what happened), document, note.",
                            TYPES, "fact"),
            "scope": _choice("global (everywhere) or project (one repository; default when project is given).",
                             SCOPES),
            "project": PROJECT,
            "paths": _list("Path globs where it applies, relative to the repository root, e.g. tests/**.",
                           STRINGS),
            "tags": _list("Tags, e.g. testing.", {"type": "string", "maxLength": 200}),
            "summary": _string("A one-line summary (default: the first sentence).", max_length=2000),
            "trigger": _string("When it should come to mind, e.g. 'When I write tests in this repository'.",
                               max_length=2000),
            "authority": _choice("explicit (default: the user said so; starts proven) or inferred (your own "
                                 "conclusion; starts on trial).", AUTHORITIES, "explicit"),
            "force": {"type": "boolean", "default": False,
                      "description": "true: store text marked as one-off ('just this once') anyway, only when the "
                                     "user asked to remember exactly that."},
        }, ["text"]),
        _output({
            "id": {"type": "string"},
            "path": {"type": "string"},
            "created": {"type": "boolean"},
            "notice": _nullable("string"),
        }, ["id", "path", "created"]),
        _remember, render_remember,
    ),
    ToolSpec(
        "memory_correct", "Correct a memory",
        "Replace a memory that is wrong or outdated with a corrected version, e.g. when the user says 'no, we "
        "moved to uv'. The text becomes a new memory with a new id; the old one stays in the vault, marked "
        "superseded and out of search and context (undo: memvault rollback OLD_ID). Use it instead of "
        "remember + forget when fixing an existing memory.",
        _object({
            "id": ID,
            "text": _string("The full corrected memory (it replaces the old text).", max_length=MAX_TEXT,
                            min_length=1),
            "title": _string("A new title (default: keep the old one).", max_length=300),
        }, ["id", "text"]),
        CHANGE_OUTPUT,
        _correct, render_correct,
    ),
    ToolSpec(
        "memory_forget", "Forget a memory",
        "Forget a memory that should no longer be used (the user asks to, or it is obsolete with nothing to "
        "replace it; to fix a memory use memory_correct). It moves to the trash, leaves search and context, "
        "and can be restored by the user (memvault trash restore ID, or memvault rollback ID).",
        _object({"id": ID}, ["id"]),
        CHANGE_OUTPUT,
        _forget, render_forget, destructive=True,
    ),
    ToolSpec(
        "memory_feedback", "Report how a memory worked out",
        "After a task, report how a memory delivered by memory_context worked out, once per memory you "
        "applied or deliberately did not: used-successfully (it helped), ignored (not relevant), overridden "
        "(the user or the situation asked otherwise), corrected (it was wrong; fix it with memory_correct "
        "too), contributed-to-failure (following it caused a problem). Pass the application id from "
        "memory_context's result: the same report for one application counts once. used-successfully "
        "promotes a trial memory to proven; corrected and contributed-to-failure retire an inferred one.",
        _object({
            "id": ID,
            "outcome": _choice("How it worked out.", OUTCOMES),
            "application": _string("The application id from memory_context's result (e.g. e-01j9...).",
                                   max_length=200),
        }, ["id", "outcome"]),
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
        _feedback, render_feedback, idempotent=True,
    ),
)

TOOLS_BY_NAME = {spec.name: spec for spec in TOOLS}


# ---------------------------------------------------------------- arguments


_ITEM_NAMES = {"types": "type", "trust": "trust level", "paths": "path", "tags": "tag"}


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check(name: str, value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` checked against the subset of JSON Schema the tools use; harmless mismatches are mended."""
    kind = schema.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise InvalidInput(f"{name} must be a string, got {_describe(value)}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise InvalidInput(f"{name} is too long ({len(value)} characters; at most {schema['maxLength']})")
        if schema.get("minLength") and not value.strip():
            raise InvalidInput(f"{name} must not be empty")
    elif kind == "integer":
        mendable = isinstance(value, str) and value.strip().isdigit()
        if mendable or (isinstance(value, float) and value.is_integer()):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidInput(f"{name} must be a whole number, got {_describe(value)}")
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise InvalidInput(f"{name} must be {bounds}, got {value}")
    elif kind == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if not isinstance(value, bool):
            raise InvalidInput(f"{name} must be true or false, got {_describe(value)}")
    elif kind == "array":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise InvalidInput(f"{name} must be a list, got {_describe(value)}")
        if len(value) > schema.get("maxItems", len(value)):
            raise InvalidInput(f"{name} has too many items ({len(value)}; at most {schema['maxItems']})")
        value = [_check(_ITEM_NAMES.get(name, name), item, schema["items"]) for item in value]
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(c) for c in schema["enum"])
        if kind == "integer":
            raise InvalidInput(f"{name} must be one of {choices}, got {value}")
        raise InvalidInput(f"unknown {name} {_describe(value)}; expected one of {choices}")
    return value


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments of a call to ``spec``, checked against its input schema (``null`` counts as absent).

    Raises:
        InvalidInput: an unknown or missing argument, a wrong type, a value out of bounds or not in the enum.
    """
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise InvalidInput(f"the arguments of {spec.name} must be an object")
    properties: dict[str, Any] = spec.input_schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise InvalidInput(f"unknown argument {unknown[0]!r} for {spec.name}; it takes {', '.join(properties)}")
    checked = {name: _check(name, value, properties[name]) for name, value in arguments.items() if value is not None}
    for name in spec.input_schema.get("required", ()):
        if name not in checked:
            raise InvalidInput(f"{name} is required")
    return checked


# ---------------------------------------------------------------- calling


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one tool call gives back: the text for the model, the JSON view, and whether it failed."""

    text: str
    structured: dict[str, Any]
    is_error: bool = False


def failure(exc: BaseException) -> Outcome:
    """A tool error: a :class:`VaultError`'s one line, or "internal error (Type: message)" for anything else."""
    if isinstance(exc, VaultError):
        return Outcome(f"error: {exc.one_line()}", error_json(exc), True)
    message = " ".join(str(exc).split())
    line = f"internal error ({type(exc).__name__}: {message})" if message else f"internal error ({type(exc).__name__})"
    return Outcome(f"error: {line}", {"error": {"kind": "InternalError", "message": line}}, True)


def call_tool(service: MemoryService, name: str, arguments: Mapping[str, Any] | None,
              here: CurrentProject | None = None) -> Outcome:
    """Run tool ``name``; never raises (every failure is an error :class:`Outcome`)."""
    try:
        spec = TOOLS_BY_NAME.get(name)
        if spec is None:
            raise InvalidInput(f"unknown tool {name!r}; the tools are {', '.join(TOOLS_BY_NAME)}")
        args = check_arguments(spec, arguments)
        result = spec.call(service, args, here or CurrentProject())
    except VaultError as exc:
        log.info("%s: %s", name, exc.one_line())
        return failure(exc)
    except Exception as exc:
        log.exception("%s failed", name)
        return failure(exc)
    try:
        text = spec.render(result)
    except Exception:  # the call is done: a rendering bug must not turn it into a failure
        log.exception("%s: cannot render the result", name)
        text = json.dumps(result, ensure_ascii=False, default=str)
    return Outcome(text, result)


# ---------------------------------------------------------------- the MCP server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memvault")
    except PackageNotFoundError:
        return "0"


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

    return Server(SERVER_NAME, version=_version(), title="memvault",
                  description="A file-based memory vault: markdown memories, hybrid search, governed context.",
                  instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call,
                  get_tool_input_schema=input_schema)


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
    handler.setFormatter(logging.Formatter("memvault mcp: %(levelname)s: %(message)s"))
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

    def __init__(self) -> None:
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

        threading.Thread(target=pump, name="memvault-stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line


async def serve_stdio(server: Server[Any], stdin: StdinLines | None = None) -> None:
    """Serve ``server`` on stdin/stdout until stdin closes or SIGTERM/SIGINT arrives."""
    import signal
    from typing import cast

    import anyio
    from mcp.server.stdio import stdio_server

    async with anyio.create_task_group() as group:

        async def stop_on_signals() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for signum in signals:
                    log.info("stopping (%s)", signal.Signals(signum).name)
                    group.cancel_scope.cancel()
                    return

        async def protocol() -> None:
            async with stdio_server(stdin=cast("anyio.AsyncFile[str] | None", stdin)) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()  # stdin closed: the client is gone

        group.start_soon(stop_on_signals)
        group.start_soon(protocol)


def run(vault_path: str | None, *, watch: bool = True) -> None:
    """``memvault mcp``: open the vault, serve it over MCP on stdio, close it on exit.

    The handshake never waits for the model: it loads in the background while the
    client connects, and the watcher (``watch``) starts in the background.

    Raises:
        VaultError: the vault cannot be opened (the CLI prints it as one line).
    """
    _setup_logging()
    here = CurrentProject()
    service = MemoryService.open(Path(vault_path).expanduser() if vault_path else None, source=SOURCE,
                                 default_project=here.key)
    import anyio

    server = build_server(service, here=here)
    log.info("serving %s over MCP on stdio%s", service.vault.root, "" if watch else " (not watching)")
    _background("warm-up", service.warm_up)
    starter = _background("watch", lambda: service.watch(on_report=_log_watch)) if watch else None
    stdin = StdinLines()
    try:
        anyio.run(serve_stdio, server, stdin)
    finally:
        stdin.restore()
        if starter is not None:
            starter.join(10)
        try:
            service.close()
        except VaultError as exc:
            log.warning("%s", exc.one_line())
        log.info("stopped")
