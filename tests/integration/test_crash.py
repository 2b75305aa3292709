"""SIGKILL ``memvault`` at seeded random points of import, sync, maintain and correct, then check recovery.

A small seeded run of ``python -m stress.crash`` (which runs 200 kills): no torn memory
file, a readable journal, the indexes in line with the files after the next sync,
no memory lost or doubled, every killed operation completed by its retry.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stress import crash

pytestmark = pytest.mark.slow

KILLS = 16


def test_sigkill_during_import_sync_maintain_and_correct_loses_nothing(tmp_path: Path) -> None:
    figures = crash.run(20261201, KILLS, tmp_path, size=30)
    assert figures["problems"] == []
    assert figures["kills"] == KILLS and set(figures["by_operation"].values()) == {KILLS // 4}
    assert figures["recoveries"] == KILLS
    for key in ("torn", "journal_errors", "lost", "duplicated", "index_errors", "temp_left", "replay_errors",
                "retry_errors", "errors", "failures"):
        assert figures[key] == 0, key
    assert figures["mid_operation"] >= KILLS // 4  # most kills land inside the operation, not after it


def test_kill_points_are_told_apart() -> None:
    root = Path("/v")
    assert crash.kill_point(None, root) == "finished first"
    temp = "write /v/memories/global/.a.md.0123456789ab.tmp"
    assert crash.kill_point(temp, root) == "memory temp file (write, flush)"
    assert crash.kill_point("replace /v/memories/global/a.md", root) == "memory file rename"
    assert crash.kill_point("write /v/journal/2026-12.jsonl", root) == "journal append"
    assert crash.kill_point("replace /v/INDEX.md", root) == "index pages"
    assert crash.kill_point("sync ", root) == "flush (os.sync)"
