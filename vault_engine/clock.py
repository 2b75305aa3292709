"""The one clock of the vault: what "now" is for every stamp memvault writes."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """The current time in UTC, to the second (stamps in files and events carry no fractions)."""
    return datetime.now(UTC).replace(microsecond=0)
