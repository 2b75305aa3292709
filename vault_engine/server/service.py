"""The operations agents and editors call, on one vault kept open.

:class:`MemoryService` is the core behind ``memvault mcp`` and ``memvault
serve``: search, read (three depths), remember, correct, forget, context,
feedback and status. Every method takes plain values, checks them, and returns
the same JSON view the CLI prints with ``--json`` (:mod:`vault_engine.server.views`);
failures are :class:`VaultError` with a one-line message. Calls may come from
any thread; they run one at a time on the service's own worker thread (the
open indexes hold SQLite connections, which belong to the thread that opened
them), so the embedding model and the open searcher stay warm between calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import InvalidInput, LlmUnavailable
from ..format.memory import OUTCOMES, SCOPES, TRUSTS, TYPES
from .views import change_json, feedback_json, memory_view, status_json

if TYPE_CHECKING:
    from ..index.watch import WatcherThread
    from ..vault import Vault

T = TypeVar("T")

MAX_LIMIT = 100
MAX_TEXT = 200_000  # characters one remember or correct may carry


@dataclass(frozen=True, slots=True)
class Read:
    """A memory read at some depth, and why the detailed summary is missing, if it is."""

    view: dict[str, Any]
    warning: str | None = None


def read(vault: Vault, memory_id: str, depth: int) -> Read:
    """``memory_id`` at ``depth`` 0 (summary, trigger), 1 (+ detailed summary, metadata, links) or 2 (+ body).

    At depth 1 and 2 the detailed summary is made on first request and kept in the file.
    """
    if depth not in (0, 1, 2):
        raise InvalidInput(f"depth must be 0, 1 or 2, got {depth}")
    entry = vault.find(memory_id)
    made, warning = None, None
    if depth >= 1:
        from ..ingest.detail import detail

        try:
            made = detail(vault, memory_id, vault.llm())
        except LlmUnavailable as exc:
            warning = f"warning: no detailed summary ({exc.one_line()})"
    if made is not None and made.saved:
        entry = vault.find(memory_id)  # the file now holds its detailed summary
    return Read(memory_view(entry, depth, vault.links_of(entry.memory), made.text if made is not None else None),
                warning)


def _text(value: Any, name: str, *, required: bool = True, limit: int = MAX_TEXT) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip() and not required):
        if required:
            raise InvalidInput(f"{name} is required")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    if len(value) > limit:
        raise InvalidInput(f"{name} is too long ({len(value)} characters; at most {limit})")
    return value


def _strings(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{name} must be a list of strings")
    return tuple(value)


def _choice(value: Any, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise InvalidInput(f"unknown {name} '{value}'; expected one of {', '.join(choices)}")
    return str(value)


class MemoryService:
    """One vault, open for many calls.

    Example::

        service = MemoryService.open(Path("~/notes/vault").expanduser())
        hits = service.search("why does the deploy fail")["hits"]
        service.read(hits[0]["id"], depth=2)
    """

    def __init__(self, vault: Vault, *, source: str = "tool:memvault",
                 default_project: Callable[[], str | None] | None = None):
        self.vault = vault
        self.source = source
        self._default_project = default_project or (lambda: None)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memvault-service")
        self._watcher: WatcherThread | None = None

    def _run(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the worker thread and wait for it (its exception is raised here)."""
        return self._worker.submit(work).result()

    @classmethod
    def open(cls, path: Path | None = None, **kwargs: Any) -> MemoryService:
        """Open the vault at ``path`` (or the one discovered as the CLI does), syncing after every write."""
        from ..vault import Vault

        return cls(Vault.open(path, auto_sync=True), **kwargs)

    # ------------------------------------------------------------ lifecycle

    def watch(self, on_report: Callable[[Any], None] | None = None) -> None:
        """Keep the indexes current in a background thread while edits happen outside (editors, git)."""
        from ..index.watch import WatcherThread

        if self._watcher is None:
            self._watcher = WatcherThread(self.vault, on_report=on_report).start(timeout=0)

    def warm_up(self) -> None:
        """Load the embedding model and open the indexes now, not on the first call."""
        request = self._search_request("warm up", 1)
        self._run(lambda: self.vault.search(request))

    def close(self) -> None:
        if self._watcher is not None:
            watcher, self._watcher = self._watcher, None
            watcher.stop()
        self._worker.shutdown(wait=True)

    def project(self, project: Any) -> str | None:
        value = _text(project, "project", required=False, limit=500)
        return value if value else self._default_project()

    # ------------------------------------------------------------ operations

    def _search_request(self, query: str, limit: int | None, **filters: Any) -> Any:
        from ..retrieval.searcher import SearchRequest

        return SearchRequest(query, limit=limit, **filters)

    def search(self, query: Any, *, limit: Any = None, project: Any = None, path: Any = None,
               types: Any = None, trust: Any = None) -> dict[str, Any]:
        """Hybrid search; hits carry id, title, summary, trigger, badges and why each matched."""
        text = _text(query, "query", limit=2000)
        assert text is not None
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                                  or not 1 <= limit <= MAX_LIMIT):
            raise InvalidInput(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}")
        kinds = _strings(types, "types")
        for kind in kinds:
            _choice(kind, "type", TYPES)
        levels = _strings(trust, "trust")
        for level in levels:
            _choice(level, "trust level", (*TRUSTS, "any"))
        request = self._search_request(text, limit, project=_text(project, "project", required=False, limit=500),
                                       path=_text(path, "path", required=False, limit=1000), types=kinds,
                                       trust=levels)
        return self._run(lambda: dict(self.vault.search(request).to_json()))

    def read(self, memory_id: Any, depth: Any = 1) -> dict[str, Any]:
        """One memory at depth 0, 1 or 2 (see :func:`read`); a missing detailed summary is noted, not fatal."""
        ident = _text(memory_id, "id", limit=200)
        assert ident is not None
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise InvalidInput(f"depth must be 0, 1 or 2, got {depth!r}")
        result = self._run(lambda: read(self.vault, ident, depth))
        view = dict(result.view)
        if result.warning:
            view["warning"] = result.warning
        return view

    def remember(self, text: Any, *, title: Any = None, type: Any = "fact", project: Any = None,
                 scope: Any = None, paths: Any = None, tags: Any = None, summary: Any = None,
                 trigger: Any = None, authority: Any = "explicit", force: bool = False) -> dict[str, Any]:
        """Add a memory (or add evidence to the same one already there).

        ``scope="project"`` without a project means the default project (the server's repository).
        """
        from ..format.memory import AUTHORITIES
        from ..vault import NewMemory

        body = _text(text, "text")
        assert body is not None
        key = _text(project, "project", required=False, limit=500)
        if scope is not None:
            _choice(scope, "scope", SCOPES)
        if scope == "project" and not key:
            key = self._default_project()
            if not key:
                raise InvalidInput("scope project needs a project key")
        request = NewMemory(
            text=body, title=_text(title, "title", required=False, limit=300), type=_choice(type, "type", TYPES),
            scope=scope, project=key, paths=_strings(paths, "paths"), tags=_strings(tags, "tags"),
            summary=_text(summary, "summary", required=False, limit=2000),
            trigger=_text(trigger, "trigger", required=False, limit=2000),
            authority=_choice(authority, "authority", AUTHORITIES), source=self.source,
        )
        result = self._run(lambda: self.vault.add(request, allow_one_off=bool(force)))
        return {"id": result.id, "path": result.path, "created": result.created, "notice": result.notice}

    def correct(self, memory_id: Any, text: Any, *, title: Any = None) -> dict[str, Any]:
        """A new version replaces the memory; the old one stays, superseded (undo: rollback)."""
        ident = _text(memory_id, "id", limit=200)
        body = _text(text, "text")
        assert ident is not None and body is not None
        heading = _text(title, "title", required=False, limit=300)
        return self._run(lambda: change_json(self.vault.correct(ident, body, heading)))

    def forget(self, memory_id: Any) -> dict[str, Any]:
        """Move the memory to the trash (reversible with rollback or trash restore)."""
        ident = _text(memory_id, "id", limit=200)
        assert ident is not None
        return self._run(lambda: change_json(self.vault.forget(ident)))

    def context(self, task: Any, *, path: Any = None, operation: Any = None, phase: Any = None,
                kind: Any = None, project: Any = None, budget: Any = None, record: bool = True) -> dict[str, Any]:
        """The context manifest for a task: resident memories and a budgeted index, with the reasons."""
        from ..context.director import TaskRequest, build

        text = _text(task, "task", limit=4000)
        assert text is not None
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 0):
            raise InvalidInput(f"budget must be a whole number of characters, at least 0, got {budget!r}")
        request = TaskRequest(
            text, path=_text(path, "path", required=False, limit=1000),
            operation=_text(operation, "operation", required=False, limit=200),
            phase=_text(phase, "phase", required=False, limit=200),
            kind=_text(kind, "kind", required=False, limit=200), project=self.project(project), budget=budget,
        )
        return self._run(lambda: build(self.vault, request, record=bool(record)).to_json())

    def feedback(self, memory_id: Any, outcome: Any, *, application: Any = None) -> dict[str, Any]:
        """Report how a memory worked out when applied."""
        ident = _text(memory_id, "id", limit=200)
        assert ident is not None
        _choice(outcome, "outcome", OUTCOMES)
        event = _text(application, "application", required=False, limit=200)
        return self._run(lambda: feedback_json(self.vault.feedback(ident, outcome, application=event)))

    def status(self) -> dict[str, Any]:
        """Counts, hot-tier usage and index freshness."""
        return self._run(lambda: status_json(self.vault.status()))
