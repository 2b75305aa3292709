"""A search's filters: a predicate over catalog rows, and masks over every row and vector at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..format.memory import TRUSTS, TYPES
from ..index.catalog import Catalog, CatalogRow
from .selectors import path_matches


@dataclass(slots=True)
class Filter:
    """The request's filters as a predicate over catalog rows and masks over the vector ids."""

    trust: tuple[str, ...]
    types: tuple[str, ...]
    project: str | None
    path: str | None

    def admits(self, row: CatalogRow) -> bool:
        if row.lifecycle == "superseded" or row.trust not in self.trust:
            return False
        if self.types and row.type not in self.types:
            return False
        if self.project is not None and not (row.scope == "global" or row.project == self.project):
            return False
        return not (self.path is not None and row.paths and not path_matches(row.paths, self.path))

    def key(self) -> tuple[Any, ...]:
        return (self.trust, self.types, self.project, self.path)


class Columns:
    """What the filters read, for every catalog row, as arrays: filtering costs no row decoding."""

    def __init__(self, catalog: Catalog, vector_ids: Sequence[str]):
        light = catalog.light()
        n = len(light)
        self.position: dict[str, int] = {}
        self.superseded = np.zeros(n, dtype=bool)
        self.trashed = np.zeros(n, dtype=bool)
        self.trust = np.full(n, -1, dtype=np.int8)
        self.type = np.full(n, -1, dtype=np.int8)
        self.global_scope = np.zeros(n, dtype=bool)
        self.project = np.full(n, -1, dtype=np.int32)
        self.projects: dict[str, int] = {}
        self.with_paths: list[tuple[int, tuple[str, ...]]] = []
        for at, (memory_id, status, lifecycle, trust, kind, scope, project, paths) in enumerate(light):
            self.position[memory_id] = at
            self.superseded[at] = lifecycle == "superseded"
            self.trashed[at] = status == "trashed"
            self.trust[at] = TRUSTS.index(trust) if trust in TRUSTS else -1
            self.type[at] = TYPES.index(kind) if kind in TYPES else -1
            self.global_scope[at] = scope == "global"
            self.project[at] = self.projects.setdefault(project, len(self.projects))
            if paths:
                self.with_paths.append((at, paths))
        # Vector-store row -> catalog row (-1: a vector without a catalog row, never returned).
        self.vector_rows = np.array([self.position.get(i, -1) for i in vector_ids], dtype=np.int64)

    def mask(self, flt: Filter) -> npt.NDArray[np.bool_]:
        """Catalog rows the filter admits (trashed ones included: they may be offered for revival)."""
        mask = ~self.superseded
        mask &= np.isin(self.trust, [TRUSTS.index(t) for t in flt.trust])
        if flt.types:
            mask &= np.isin(self.type, [TYPES.index(t) for t in flt.types if t in TYPES])
        if flt.project is not None:
            code = self.projects.get(flt.project, -2)
            mask &= self.global_scope | (self.project == code)
        if flt.path is not None:
            for at, paths in self.with_paths:
                if not path_matches(paths, flt.path):
                    mask[at] = False
        return mask

    def vector_mask(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        known = self.vector_rows >= 0
        if not len(mask):  # no catalog rows (an index being built): no vector is known
            return known
        return known & mask[np.where(known, self.vector_rows, 0)]
