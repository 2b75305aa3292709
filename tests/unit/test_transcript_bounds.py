"""The agent boundary's bounds: what a transcript reader reads, and for how long."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from vault_engine.agents import messages
from vault_engine.agents.messages import jsonl_records, read_regular


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    with pytest.raises(ValueError, match="a FIFO, not a regular file"):
        list(jsonl_records(path))
    with pytest.raises(ValueError, match="not a regular file"):
        read_regular(path)


def test_a_device_whose_size_says_zero_is_refused() -> None:
    assert Path("/dev/zero").stat().st_size == 0
    with pytest.raises(ValueError, match="a device, not a regular file"):
        list(jsonl_records(Path("/dev/zero")))


def test_a_symlink_to_a_regular_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"a": 1}\n\n[2]\nnot json\n', encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "t.jsonl")
    assert list(jsonl_records(tmp_path / "link.jsonl")) == [(1, {"a": 1}), (3, None), (4, None)]


def test_the_read_limit_counts_bytes_read_not_what_stat_says(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(messages, "MAX_TRANSCRIPT_BYTES", 64)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 7)  # 63 bytes: read
    assert len(list(jsonl_records(path))) == 7
    path.write_bytes(b'{"a": 1}\n' * 8)  # 72 bytes
    with pytest.raises(ValueError, match="larger than 64 bytes"):
        list(jsonl_records(path))
    path.write_bytes(b"x" * 1000)  # one line past the limit: refused, not read to its end
    with pytest.raises(ValueError, match="larger than 64 bytes"):
        list(jsonl_records(path))
    assert read_regular(path, 1000) == b"x" * 1000
    with pytest.raises(ValueError, match="larger than 999 bytes"):
        read_regular(path, 999)


def test_a_transcript_too_slow_to_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 10)
    ticks = itertools.count(0, messages.TRANSCRIPT_SECONDS / 4)  # each line read takes a quarter of the time
    with pytest.raises(ValueError, match="seconds to read"):
        list(jsonl_records(path, clock=lambda: next(ticks)))
