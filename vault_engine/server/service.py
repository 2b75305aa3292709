"""The operations agents and editors call, on one vault kept open.

:class:`MemoryService` is the core behind ``memvault mcp`` and ``memvault
serve``: search, read (three depths), remember, correct, forget, context,
feedback and status. Every method takes a request parsed by
:mod:`vault_engine.server.requests` (checked there, once) and returns
the same JSON view the CLI prints with ``--json`` (:mod:`vault_engine.server.views`);
failures are :class:`VaultError` with a one-line message. Projects are walls: a
call by id (read, correct, forget, feedback) from work in one project finds its
memories and the global ones, and another project's as no memory at all (see
:func:`visible`); a read may name the project or widen to all, as a search may.
Feedback is checked against the application that delivered the memory. Calls may come from
any thread; they run one at a time on the service's own worker thread (the
open indexes hold SQLite connections, which belong to the thread that opened
them), so the embedding model and the open searcher stay warm between calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import InvalidInput, LlmUnavailable, MemoryNotFound
from .requests import (
    DEPTHS,
    ContextRequest,
    CorrectRequest,
    FeedbackRequest,
    ForgetRequest,
    ReadRequest,
    RememberRequest,
    SearchRequest,
)
from .views import add_json, change_json, feedback_json, memory_view, status_json

if TYPE_CHECKING:
    from ..daemon.watch import WatcherThread
    from ..retrieval.searcher import SearchQuery as Query
    from ..store import Entry
    from ..vault import Vault
    from .project import CurrentProject

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Read:
    """A memory read at some depth, and why the detailed summary is missing, if it is."""

    view: dict[str, Any]
    warning: str | None = None


def read(vault: Vault, memory_id: str, depth: int, project: str | None = None) -> Read:
    """``memory_id`` at ``depth`` 0 (summary, trigger), 1 (+ detailed summary, metadata, links) or 2 (+ body).

    At depth 1 and 2 the detailed summary is made on first request and kept in the detail cache
    (``.memvault/details/``); a read never changes the memory's file. Read from work in ``project``,
    another project's memory is not there (see :func:`visible`).
    """
    if depth not in DEPTHS:
        raise InvalidInput(f"depth must be 0, 1 or 2, got {depth}")
    entry = visible(vault.find(memory_id), project)
    made, warning = None, None
    if depth >= 1:
        from ..ingest.detail import detail

        try:
            made = detail(vault, memory_id, vault.llm())
        except LlmUnavailable as exc:
            warning = f"warning: no detailed summary ({exc.one_line()})"
    return Read(memory_view(entry, depth, vault.links_of(entry.memory), made.text if made is not None else None),
                warning)


def visible(entry: Entry, project: str | None) -> Entry:
    """``entry``, when work in ``project`` may see it (None: every project).

    Raises:
        MemoryNotFound: the memory belongs to another project. The answer is the one an unknown id gets, so
            an id learned elsewhere tells nothing of another project, not even that the memory exists.
    """
    from ..vault.scope import within

    if not within(entry.memory.scope, entry.memory.project, project):
        raise MemoryNotFound(f"no memory with id {entry.memory.id!r} in project {project} or the global memories")
    return entry


class MemoryService:
    """One vault, open for many calls.

    Example::

        service = MemoryService.open(Path("~/notes/vault").expanduser())
        hits = service.search("why does the deploy fail")["hits"]
        service.read(hits[0]["id"], depth=2)
    """

    def __init__(self, vault: Vault, *, source: str = "tool:memvault",
                 default_project: Callable[[], str | None] | None = None,
                 current_project: Callable[[], str | None] | None = None):
        """``default_project``: the project of context requests that name none (the server's repository).
        ``current_project``: the project searches and new memories default to (None: every project, and
        global memories); ``default_project`` when not given. See :mod:`vault_engine.vault.scope`."""
        self.vault = vault
        self.source = source
        self._default_project = default_project or (lambda: None)
        self._current_project = current_project or self._default_project
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memvault-service")
        self._watcher: WatcherThread | None = None
        self._last_call = time.monotonic()  # when a request last came or ended (a fresh server counts as busy)

    def _run(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the worker thread and wait for it (its exception is raised here)."""
        self._last_call = time.monotonic()
        try:
            return self._worker.submit(work).result()
        finally:
            self._last_call = time.monotonic()

    def idle_seconds(self) -> float:
        """Seconds since the last request ended (or, before any, since the service was made)."""
        return time.monotonic() - self._last_call

    @classmethod
    def open(cls, path: Path | None = None, **kwargs: Any) -> MemoryService:
        """Open the vault at ``path`` (or the one discovered as the CLI does), syncing after every write."""
        from ..vault import Vault

        return cls(Vault.open(path, auto_sync=True), **kwargs)

    @classmethod
    def here(cls, path: Path | None = None, *, project: str | None = None,
             **kwargs: Any) -> tuple[MemoryService, CurrentProject]:
        """:meth:`open`, for work in the current folder: its project (``project`` when given) is the default
        of context, search and remember (see :class:`~vault_engine.server.project.CurrentProject`)."""
        from ..vault import Vault
        from .project import CurrentProject

        vault = Vault.open(path, auto_sync=True)
        here = CurrentProject(key=project, vault_root=vault.root)
        return cls(vault, default_project=here.key, current_project=here.work_key, **kwargs), here

    # ------------------------------------------------------------ lifecycle

    def watch(self, on_report: Callable[[Any], None] | None = None) -> None:
        """Keep the indexes current in a background thread while edits happen outside (editors, git)."""
        from ..daemon.watch import WatcherThread

        if self._watcher is None:
            # Its scheduled maintain waits for a quiet moment: requests never queue behind it.
            self._watcher = WatcherThread(self.vault, on_report=on_report, idle=self.idle_seconds).start(timeout=0)
            # A write that leaves many memories waiting for their vectors returns at once: the
            # watcher sees the files change and fills them between its syncs.
            self.vault.fill_in_background = lambda: None

    def follow_changes(self) -> None:
        """Serve many reads: each one walks the vault's files only after the kernel saw a memory file change
        (:mod:`vault_engine.index.change_feed`; where it cannot tell, every read walks as before)."""
        if self.vault.change_feed is None:
            from ..index.change_feed import ChangeFeed

            self.vault.change_feed = ChangeFeed.open(self.vault.root)

    def warm_up(self) -> None:
        """Load the embedding model and open the indexes now, not on the first call."""
        request = self._search_request("warm up", 1)
        self._run(lambda: self.vault.search(request))

    def close(self) -> None:
        if self._watcher is not None:
            watcher, self._watcher = self._watcher, None
            watcher.stop()
        if self.vault.change_feed is not None:
            feed, self.vault.change_feed = self.vault.change_feed, None
            feed.close()
        self._worker.shutdown(wait=True)

    def project(self, key: str | None) -> str | None:
        """``key``, or the default project when there is none."""
        return key if key else self._default_project()

    # ------------------------------------------------------------ operations

    def _search_request(self, query: str, limit: int | None, **filters: Any) -> Query:
        from ..retrieval.searcher import SearchQuery as Query

        return Query(query, limit=limit, **filters)

    def search(self, request: SearchRequest) -> dict[str, Any]:
        """Hybrid search; hits carry id, title, summary, trigger, badges and why each matched.

        Narrowed to the current project and the global memories unless the request names a project or
        asks for every project; ``project`` in the answer says which (None: every project).
        """
        from ..vault.scope import search_project

        project = search_project(request.project, request.all_projects, self._current_project)
        query = self._search_request(request.query, request.limit, project=project, path=request.path,
                                     types=request.types, trust=request.trust, weak=request.weak,
                                     count_external=True)
        return self._run(lambda: dict(self.vault.search(query).to_json()))

    def read(self, request: ReadRequest) -> dict[str, Any]:
        """One memory at depth 0, 1 or 2 (see :func:`read`); a missing detailed summary is noted, not fatal.

        Within the current project and the global memories unless the request names a project or asks for
        every project, as a search is: an id a wide search found can be read as widely."""
        from ..vault.scope import search_project

        project = search_project(request.project, request.all_projects, self._current_project)
        result = self._run(lambda: read(self.vault, request.id, request.depth, project))
        view = dict(result.view)
        if result.warning:
            view["warning"] = result.warning
        return view

    def remember(self, request: RememberRequest) -> dict[str, Any]:
        """Add a memory (or add evidence to the same one already there).

        Without scope and project it goes to the current project (global outside one, and for core-profile
        memories); ``scope="project"`` without a project means the current project, else the default one.
        """
        from ..vault import NewMemory

        key = request.project
        current = self._current_project() if not key and request.scope != "global" else None
        if request.scope == "project" and not key:
            key = current or self._default_project()
            if not key:
                raise InvalidInput("scope project needs a project key")
        memory = NewMemory(
            text=request.text, title=request.title, type=request.type, scope=request.scope, project=key,
            paths=request.paths, tags=request.tags, summary=request.summary, trigger=request.trigger,
            authority=request.authority, source=self.source, current_project=current,
        )
        return self._run(lambda: add_json(self.vault.add(memory, allow_one_off=request.force)))

    def correct(self, request: CorrectRequest) -> dict[str, Any]:
        """A new version replaces the memory; the old one stays, superseded (undo: rollback)."""
        project = self._current_project()

        def work() -> dict[str, Any]:
            visible(self.vault.find(request.id), project)
            return change_json(self.vault.correct(request.id, request.text, request.title))
        return self._run(work)

    def forget(self, request: ForgetRequest) -> dict[str, Any]:
        """Move the memory to the trash (reversible with rollback or trash restore)."""
        project = self._current_project()

        def work() -> dict[str, Any]:
            visible(self.vault.find(request.id), project)
            return change_json(self.vault.forget(request.id))
        return self._run(work)

    def context(self, request: ContextRequest) -> dict[str, Any]:
        """The context manifest for a task: resident memories and a budgeted index, with the reasons."""
        from ..context.director import TaskRequest, build

        task = TaskRequest(request.task, path=request.path, operation=request.operation, phase=request.phase,
                           kind=request.kind, project=self.project(request.project), budget=request.budget,
                           overview=request.overview, sender=request.sender)
        return self._run(lambda: build(self.vault, task, record=request.record).to_json())

    def feedback(self, request: FeedbackRequest) -> dict[str, Any]:
        """Report how a memory worked out when applied."""
        return self._run(lambda: feedback_json(self.vault.feedback(request.id, request.outcome,
                                                                   application=request.application)))

    def status(self) -> dict[str, Any]:
        """Counts, hot-tier usage and index freshness."""
        return self._run(lambda: status_json(self.vault.status()))
