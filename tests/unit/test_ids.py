"""Ids: lowercase ULIDs with a kind prefix, strictly increasing within a process."""

from __future__ import annotations

import itertools
import re
import threading
import time

import pytest

from vault_engine.format import ids

CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
MEMORY_ID = re.compile(r"m-[0-9abcdefghjkmnpqrstvwxyz]{26}")


def decode(text: str) -> int:
    value = 0
    for ch in text:
        value = value * 32 + CROCKFORD.index(ch)
    return value


def test_memory_id_format() -> None:
    for _ in range(100):
        memory_id = ids.new_memory_id()
        assert MEMORY_ID.fullmatch(memory_id), memory_id
        assert len(memory_id) == 28
        assert not set("ilou") & set(memory_id[2:])  # letters Crockford leaves out
        assert ids.is_valid_id(memory_id)


def test_event_id_format() -> None:
    event_id = ids.new_event_id()
    assert re.fullmatch(r"e-[0-9abcdefghjkmnpqrstvwxyz]{26}", event_id)


def test_timestamp_part_is_the_current_millisecond() -> None:
    before = time.time_ns() // 1_000_000
    value = ids.ulid()
    after = time.time_ns() // 1_000_000
    # Monotonicity may push the stamp a little past "now", never before it.
    assert before <= decode(value[:10]) <= after + 50


def test_ten_thousand_ids_strictly_increase_and_are_unique() -> None:
    made = [ids.new_memory_id() for _ in range(10_000)]
    assert all(a < b for a, b in itertools.pairwise(made))
    assert len(set(made)) == len(made)


def test_ids_from_many_threads_are_unique() -> None:
    out: list[list[str]] = [[] for _ in range(8)]

    def work(bucket: list[str]) -> None:
        bucket.extend(ids.ulid() for _ in range(1000))

    threads = [threading.Thread(target=work, args=(bucket,)) for bucket in out]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [value for bucket in out for value in bucket]
    assert len(set(everything)) == 8000
    for bucket in out:
        assert bucket == sorted(bucket)


def test_ids_keep_increasing_when_the_clock_goes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    first = ids.ulid()
    monkeypatch.setattr(time, "time_ns", lambda: 1_000_000_000)  # 1970: far in the past
    assert ids.ulid() > first


def test_random_part_overflow_moves_to_the_next_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    future_ms = time.time_ns() // 1_000_000 + 60_000
    monkeypatch.setattr(ids, "_last", (future_ms, (1 << 80) - 1))
    last = ids._encode(future_ms, 10) + ids._encode((1 << 80) - 1, 16)
    value = ids.ulid()
    assert value > last
    assert len(value) == 26
    assert decode(value[:10]) == future_ms + 1 and decode(value[10:]) == 0


@pytest.mark.parametrize(
    "value",
    ["m-01jdx8k3q7r2v5w9t0a1b2c3d4", "pytest-fixtures", "a", "0", "note.v2", "a_b-c.d", "x" * 128],
)
def test_valid_ids(value: str) -> None:
    assert ids.is_valid_id(value)


@pytest.mark.parametrize(
    "value",
    [
        "", "../x", "A/B", "a/b", "Upper", ".hidden", "-dash", "_under", "a..b", "a b", "a\n", "a\nb", "\na",
        "x" * 129, "é", "a\\b", "a:b", "~",
    ],
)
def test_invalid_ids(value: str) -> None:
    assert not ids.is_valid_id(value)
