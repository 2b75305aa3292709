"""One request schema per operation of :class:`~vault_engine.server.service.MemoryService`.

Each request is a frozen dataclass whose fields carry their argument spec as
metadata: the description an agent reads, the longest text, the bounds of a
number, the allowed values. Those limits are written here once. The MCP tools'
``inputSchema`` is generated from them (:func:`input_schema`), the HTTP API
names its fields from them, and both boundaries build the request with
``parse`` (the checks and messages of the service); the service takes parsed
requests and checks nothing again.

A field without a default is required; a field left out or sent as ``null``
takes its default. Types are strict: a flag is a JSON boolean, a list a JSON
array of strings, a number a whole number; anything else is refused with a
message naming the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from ..errors import InvalidInput
from ..format.kinds import AUTHORITIES, OUTCOMES, SCOPES, TRUSTS, TYPES, Authority, MemoryType, Outcome, Scope, Trust
from ..limits import MAX_ITEMS, MAX_SUMMARY, MAX_TAG, MAX_TEXT, MAX_TITLE  # one limit on every interface

MAX_ID = 200
MAX_PROJECT = 500
MAX_PATH = 1000  # a path argument, and each path glob of a memory
MAX_QUERY = 2000
MAX_TASK = 4000
MAX_SELECTOR = 200  # a task's operation, phase and kind
MAX_SENDER = 200  # a sender's name (vault_engine.senders keeps as much)
MAX_LIMIT = 100
MAX_BUDGET = 200_000
DEPTHS = (0, 1, 2)
TRUST_FILTERS: tuple[str, ...] = (*TRUSTS, "any")


# ---------------------------------------------------------------- argument specs


@dataclass(frozen=True, slots=True)
class Text:
    """A string: required ones must not be blank; optional blank ones count as absent."""

    description: str
    max_length: int

    def schema(self, default: Any, required: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string"}
        if self.description:
            out["description"] = self.description
        out["maxLength"] = self.max_length
        if required:
            out["minLength"] = 1
        return out

    def parse(self, name: str, value: Any, nullable: bool) -> str | None:
        required = not nullable
        if value is None or (isinstance(value, str) and not value.strip() and not required):
            if required:
                raise InvalidInput(f"{name} is required")
            return None
        if not isinstance(value, str):
            raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
        if required and not value.strip():
            raise InvalidInput(f"{name} must not be empty")
        if len(value) > self.max_length:
            raise InvalidInput(f"{name} is too long ({len(value)} characters; at most {self.max_length})")
        return value


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of a vocabulary."""

    description: str
    choices: tuple[str, ...]

    def schema(self, default: Any, required: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string", "enum": list(self.choices), "description": self.description}
        if default is not None and default is not dataclasses.MISSING:
            out["default"] = default
        return out

    def parse(self, name: str, value: Any, nullable: bool) -> str | None:
        if value is None and nullable:
            return None
        if value not in self.choices:
            raise InvalidInput(f"unknown {name} '{value}'; expected one of {', '.join(self.choices)}")
        return str(value)


@dataclass(frozen=True, slots=True)
class Whole:
    """A whole number: one of ``choices``, or within bounds.

    ``cap`` is the most an agent is offered (the MCP schema's maximum); the
    service itself takes more.
    """

    description: str
    minimum: int | None = None
    maximum: int | None = None
    cap: int | None = None
    choices: tuple[int, ...] = ()
    unit: str = ""

    def schema(self, default: Any, required: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer"}
        if self.choices:
            out["enum"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None or self.cap is not None:
            out["maximum"] = self.maximum if self.maximum is not None else self.cap
        if default is not None and default is not dataclasses.MISSING:
            out["default"] = default
        out["description"] = self.description
        return out

    def _wording(self) -> str:
        if self.choices:
            *rest, last = (str(choice) for choice in self.choices)
            return f"{', '.join(rest)} or {last}"
        if self.maximum is not None:
            return f"a whole number{self.unit} from {self.minimum} to {self.maximum}"
        return f"a whole number{self.unit}, at least {self.minimum}"

    def _allows(self, value: int) -> bool:
        if self.choices:
            return value in self.choices
        return (self.minimum is None or value >= self.minimum) and (self.maximum is None or value <= self.maximum)

    def parse(self, name: str, value: Any, nullable: bool) -> int | None:
        if value is None and nullable:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or not self._allows(value):
            raise InvalidInput(f"{name} must be {self._wording()}, got {value!r}")
        return value


@dataclass(frozen=True, slots=True)
class Flag:
    """True or false, as a JSON boolean: ``"yes"``, ``1`` or ``"false"`` is refused, never taken by its truth."""

    description: str

    def schema(self, default: Any, required: bool) -> dict[str, Any]:
        return {"type": "boolean", "default": default, "description": self.description}

    def parse(self, name: str, value: Any, nullable: bool) -> bool:
        if not isinstance(value, bool):
            raise InvalidInput(f"{name} must be true or false, got {_shown(value)}")
        return value


@dataclass(frozen=True, slots=True)
class Strings:
    """A list of strings, each checked by ``item`` (a bare string is refused: it is not a list); ``item_name``
    names one of them in messages."""

    description: str
    item: Text | Choice
    item_name: str
    max_items: int = MAX_ITEMS

    def schema(self, default: Any, required: bool) -> dict[str, Any]:
        return {"type": "array", "items": self.item.schema(None, True), "maxItems": self.max_items,
                "description": self.description}

    def parse(self, name: str, value: Any, nullable: bool) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise InvalidInput(f"{name} must be a list of strings, got {_shown(value)}")
        if len(value) > self.max_items:
            raise InvalidInput(f"{name} has too many items ({len(value)}; at most {self.max_items})")
        for item in value:
            self.item.parse(self.item_name, item, False)
        return tuple(value)


Spec = Text | Choice | Whole | Flag | Strings


def _shown(value: Any) -> str:
    """A wrong value as a message quotes it: its JSON type, and the value when it is short."""
    kind = {bool: "boolean", int: "number", float: "number", str: "string", list: "list", tuple: "list",
            dict: "object"}.get(type(value), type(value).__name__)
    text = repr(value)
    return f"{kind} {text}" if len(text) <= 40 else kind


def arg(spec: Spec) -> dict[str, Spec]:
    """The metadata of a request field described by ``spec``."""
    return {"arg": spec}


# ---------------------------------------------------------------- the requests


class Request:
    """What every request gives: its fields' specs and the one validating constructor."""

    __slots__ = ()

    @classmethod
    def specs(cls) -> dict[str, tuple[Spec, Any]]:
        """Each field's name, spec and default (``dataclasses.MISSING`` when required), in order."""
        return {f.name: (f.metadata["arg"], f.default) for f in dataclasses.fields(cls)}  # type: ignore[arg-type]

    @classmethod
    def parse(cls, values: Mapping[str, Any]) -> Self:
        """The request for ``values`` (absent fields take their default).

        Raises:
            InvalidInput: a required field is missing, or a value has the wrong type, size or vocabulary.
        """
        parsed: dict[str, Any] = {}
        for name, (spec, default) in cls.specs().items():
            value = values.get(name)
            if value is None and default is not dataclasses.MISSING:  # absent, or null: the default
                value = default
            parsed[name] = spec.parse(name, value, default is None)
        return cls(**parsed)


def input_schema(request: type[Request], first: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON Schema of ``request``'s fields (``first`` are listed before the others)."""
    specs = request.specs()
    names = [*first, *(name for name in specs if name not in first)]
    properties = {name: specs[name][0].schema(specs[name][1], specs[name][1] is dataclasses.MISSING)
                  for name in names}
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    required = [name for name in names if specs[name][1] is dataclasses.MISSING]
    if required:
        schema["required"] = required
    return schema


ID = Text("A memory id as returned by the other tools, e.g. m-01j9z3k4q8r2s5t7v9w1x3y5z7.", MAX_ID)
PROJECT = Text("Project key, e.g. github.com/acme/api (see the `project` field of memory_context's result). "
               "Default: the repository the server was started in.", MAX_PROJECT)
PATH = Text("The file or folder the work is about, relative to the repository root (e.g. src/auth/login.py); "
            "matched against the memories' path selectors such as tests/**.", MAX_PATH)


@dataclass(frozen=True, slots=True)
class SearchRequest(Request):
    """Hybrid search, optionally narrowed to a project, a path, kinds of memory and trust levels."""

    query: str = field(metadata=arg(Text(
        "What to look for: a question, keywords, a name or an error message.", MAX_QUERY)))
    limit: int | None = field(default=None, metadata=arg(Whole(
        "Most hits to return (default: the vault's retrieval.limit, 10).", minimum=1, maximum=MAX_LIMIT)))
    project: str | None = field(default=None, metadata=arg(Text(
        "Only global memories and those of this project key (e.g. github.com/acme/api). Default: the repository "
        "the server was started in (every project when it was started outside one).", MAX_PROJECT)))
    all_projects: bool = field(default=False, metadata=arg(Flag(
        "true: search the memories of every project, not only the current one's and the global ones "
        "(not with project).")))
    path: str | None = field(default=None, metadata=arg(Text(
        "Leave out memories whose path selectors do not match this file or folder (relative to the repository root).",
        MAX_PATH)))
    types: tuple[MemoryType, ...] = field(default=(), metadata=arg(Strings(
        "Only these kinds of memory.", Choice("A kind of memory.", TYPES), "type", len(TYPES))))
    trust: tuple[Trust | Literal["any"], ...] = field(default=(), metadata=arg(Strings(
        "Trust levels to include (default: system and learned, plus external when the vault says so; 'any' for all).",
        Choice("A trust level.", TRUST_FILTERS), "trust level", len(TRUST_FILTERS))))
    weak: bool = field(default=False, metadata=arg(Flag(
        "true: when no memory clears the relevance floor, list the closest anyway, each marked weak (by default "
        "such a search answers no hits and a notice).")))

    def __post_init__(self) -> None:
        if self.project and self.all_projects:
            raise InvalidInput("project and all_projects exclude each other: project narrows the search to one "
                               "project (and the global memories), all_projects widens it to every project")


@dataclass(frozen=True, slots=True)
class ReadRequest(Request):
    """One memory at depth 0 (summary), 1 (detail, metadata, links) or 2 (the body too)."""

    id: str = field(metadata=arg(ID))
    depth: int = field(default=1, metadata=arg(Whole(
        "0 = summary and trigger, 1 = + detail, metadata and links, 2 = + full body.", choices=DEPTHS)))
    project: str | None = field(default=None, metadata=arg(Text(
        "Read it only when it is a global memory or this project's. Default: the repository the server was "
        "started in (any project when it was started outside one); another project's memory is not found.",
        MAX_PROJECT)))
    all_projects: bool = field(default=False, metadata=arg(Flag(
        "true: read a memory of any project, as a search with all_projects finds them (not with project).")))

    def __post_init__(self) -> None:
        if self.project and self.all_projects:
            raise InvalidInput("project and all_projects exclude each other: project reads within one project "
                               "(and the global memories), all_projects within every project")


@dataclass(frozen=True, slots=True)
class RememberRequest(Request):
    """A new memory (or more evidence for the same one)."""

    text: str = field(metadata=arg(Text("The memory, as a self-contained statement (markdown allowed).", MAX_TEXT)))
    title: str | None = field(default=None, metadata=arg(Text(
        "A short title (default: the first line of text).", MAX_TITLE)))
    type: MemoryType = field(default="fact", metadata=arg(Choice(
        "fact (default), collaboration-policy (how to work with the user), procedure (steps), core-profile (who "
        "the user is), episode (what happened), document, note.", TYPES)))
    project: str | None = field(default=None, metadata=arg(PROJECT))
    scope: Scope | None = field(default=None, metadata=arg(Choice(
        "global (every project) or project (one repository). Default: project, in the given project or the "
        "repository the server was started in; global for core-profile memories and when the server runs outside "
        "any repository.", SCOPES)))
    paths: tuple[str, ...] = field(default=(), metadata=arg(Strings(
        "Path globs where it applies, relative to the repository root, e.g. tests/**.", Text("", MAX_PATH), "path")))
    tags: tuple[str, ...] = field(default=(), metadata=arg(Strings("Tags, e.g. testing.", Text("", MAX_TAG), "tag")))
    summary: str | None = field(default=None, metadata=arg(Text(
        "A one-line summary (default: the leading sentences, up to 240 characters).", MAX_SUMMARY)))
    trigger: str | None = field(default=None, metadata=arg(Text(
        "When it should come to mind, e.g. 'When I write tests in this repository'.", MAX_SUMMARY)))
    authority: Authority = field(default="explicit", metadata=arg(Choice(
        "explicit (default: the user said so; starts proven) or inferred (your own conclusion; starts on trial).",
        AUTHORITIES)))
    force: bool = field(default=False, metadata=arg(Flag(
        "true: store text marked as one-off ('just this once') anyway, only when the user asked to remember exactly "
        "that.")))


@dataclass(frozen=True, slots=True)
class CorrectRequest(Request):
    """A corrected version that replaces a memory (the old one is kept, superseded)."""

    id: str = field(metadata=arg(ID))
    text: str = field(metadata=arg(Text("The full corrected memory (it replaces the old text).", MAX_TEXT)))
    title: str | None = field(default=None, metadata=arg(Text(
        "A new title (default: made from text when the old title was made from the old text; a title someone "
        "wrote is kept).", MAX_TITLE)))


@dataclass(frozen=True, slots=True)
class ForgetRequest(Request):
    """A memory to move to the trash."""

    id: str = field(metadata=arg(ID))


@dataclass(frozen=True, slots=True)
class ContextRequest(Request):
    """The task whose context manifest is wanted, with the selectors it matches."""

    task: str = field(metadata=arg(Text(
        "What you are about to do, in one line, e.g. 'add a rate limit to the login endpoint'.", MAX_TASK)))
    path: str | None = field(default=None, metadata=arg(PATH))
    operation: str | None = field(default=None, metadata=arg(Text(
        "The operation, e.g. edit, commit, review, deploy (matched against the memories' operation selectors).",
        MAX_SELECTOR)))
    phase: str | None = field(default=None, metadata=arg(Text(
        "The phase, e.g. plan, implement, verify.", MAX_SELECTOR)))
    kind: str | None = field(default=None, metadata=arg(Text(
        "The task kind, e.g. test, refactor, docs (matched against task selectors).", MAX_SELECTOR)))
    project: str | None = field(default=None, metadata=arg(PROJECT))
    budget: int | None = field(default=None, metadata=arg(Whole(
        "Most characters of memory to deliver (default: the vault's context.budget_chars, 6000).",
        minimum=0, cap=MAX_BUDGET, unit=" of characters")))
    record: bool = field(default=True, metadata=arg(Flag(
        "false: preview only, not journalled and without an application id. Leave it out normally.")))
    overview: bool = field(default=False, metadata=arg(Flag(
        "true at the start of a session: every current memory of the project may apply (the best first, "
        "as many as the budget holds), not only those the task's words find.")))
    sender: str | None = field(default=None, metadata=arg(Text(
        "Who is asking, e.g. ada (default: the sender the vault writes as); memories of other senders are "
        "marked 'from another sender' in their reasons.", MAX_SENDER)))


@dataclass(frozen=True, slots=True)
class FeedbackRequest(Request):
    """How a delivered memory worked out, for one application."""

    id: str = field(metadata=arg(ID))
    outcome: Outcome = field(metadata=arg(Choice("How it worked out.", OUTCOMES)))
    application: str | None = field(default=None, metadata=arg(Text(
        "The application id from memory_context's result (e.g. e-01j9...).", MAX_ID)))


# The operations and their requests, by the name the HTTP path and the service method share
# (``POST /v1/search`` -> ``MemoryService.search(SearchRequest)``; the MCP tools are ``memory_<name>``).
OPERATIONS: dict[str, type[Request]] = {
    "search": SearchRequest,
    "read": ReadRequest,
    "context": ContextRequest,
    "feedback": FeedbackRequest,
    "remember": RememberRequest,
    "correct": CorrectRequest,
    "forget": ForgetRequest,
}
