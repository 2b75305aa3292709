"""The vault: one open vault and the operations that change it."""

from ..clock import now
from ..history import governed_ids
from .results import AddResult, ChangeResult, FeedbackResult, ImportResult, NewMemory, ReplayDiff, Status
from .revise import apply_outcome
from .transaction import Transaction
from .vault import Vault

__all__ = [
    "AddResult",
    "ChangeResult",
    "FeedbackResult",
    "ImportResult",
    "NewMemory",
    "ReplayDiff",
    "Status",
    "Transaction",
    "Vault",
    "apply_outcome",
    "governed_ids",
    "now",
]
