"""The vault: one open vault and the operations that change it."""

from .vault import (
    AddResult,
    ChangeResult,
    FeedbackResult,
    ImportResult,
    NewMemory,
    ReplayDiff,
    Status,
    Vault,
    apply_outcome,
    governed_ids,
    indexed,
    now,
)

__all__ = [
    "AddResult",
    "ChangeResult",
    "FeedbackResult",
    "ImportResult",
    "NewMemory",
    "ReplayDiff",
    "Status",
    "Vault",
    "apply_outcome",
    "governed_ids",
    "indexed",
    "now",
]
