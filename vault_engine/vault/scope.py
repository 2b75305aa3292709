"""Which project an operation is about when its caller names none: the project of the work.

Context has always covered the current project and the global memories, never
another project's. Search and remember follow the same rule, so a memory of one
repository does not turn up in another, and what is learned in a repository
stays with it:

* **search** (:func:`search_project`): a project named narrows the search to it
  and the global memories; ``all_projects`` widens it to every project; else the
  current project and the global memories, and every project when there is no
  current project (outside any repository, or in the vault's own folder).
* **remember** (:func:`placement`): a scope or project given is kept; with
  neither, a memory goes to the current project, except the kinds that describe
  the user and hold everywhere (:func:`holds_everywhere`: the core profile and
  the user's preferences); with no current project it is global.

The current project is the caller's to find (the CLI's working folder, the
folder a server was started in: :func:`vault_engine.context.project.current_project`);
these functions only decide.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InvalidInput
from ..format.kinds import MemoryClass, MemoryType, Scope

# The kinds of memory that describe the user rather than a repository: global unless a project is named.
EVERYWHERE_TYPES: tuple[MemoryType, ...] = ("core-profile",)
EVERYWHERE_CLASSES: tuple[MemoryClass, ...] = ("user-preference",)


def search_project(project: str | None, all_projects: bool, current: Callable[[], str | None]) -> str | None:
    """The project a search is narrowed to (with the global memories); None: every project.

    ``current`` is asked only when neither ``project`` nor ``all_projects`` is given.

    Raises:
        InvalidInput: both ``project`` and ``all_projects``.
    """
    if project and all_projects:
        raise InvalidInput("a search narrowed to one project cannot also cover every project")
    if all_projects:
        return None
    return project or current()


def holds_everywhere(type: MemoryType, klass: MemoryClass | None) -> bool:
    """Whether a memory of this type and class is about the user, wherever they work (global by default)."""
    return type in EVERYWHERE_TYPES or klass in EVERYWHERE_CLASSES


def placement(scope: Scope | None, project: str | None, current: str | None, *, type: MemoryType,
              klass: MemoryClass | None) -> tuple[Scope, str | None]:
    """The (scope, project) of a new memory; ``current`` is the current project (None when there is none).

    Raises:
        InvalidInput: scope project without a project, and no current project.
    """
    if project:
        return scope or "project", project
    if scope == "global":
        return "global", None
    if scope == "project":
        if not current:
            raise InvalidInput("scope project needs a project key (--project KEY), "
                               "and the current folder is in no project")
        return "project", current
    if current and not holds_everywhere(type, klass):
        return "project", current
    return "global", None


# ---------------------------------------------------------------- walls


def within(scope: Scope, project: str | None, current: str | None) -> bool:
    """Whether a memory of ``scope`` and ``project`` is visible from work in ``current`` (None: no project,
    which sees every project, as a search outside any repository does).

    Projects are walls: work in one project sees its own memories and the global ones, never another
    project's. The same rule decides what a read by id answers and what the same text folds into.
    """
    return current is None or scope != "project" or project == current


def folds_into(new_scope: Scope, new_project: str | None, scope: Scope, project: str | None) -> bool:
    """Whether a new memory of (``new_scope``, ``new_project``) with the same text as an existing one of
    (``scope``, ``project``) adds evidence to it rather than being stored.

    The same place, or an existing global memory: a global memory already applies in every project, so a
    project's copy of it would only say it twice there. A global memory never folds into a project's
    one (the other projects would lose it), nor one project's into another's.
    """
    if scope != "project":
        return True
    return new_scope == "project" and new_project == project
