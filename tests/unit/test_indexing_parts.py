"""Small parts of indexing: the cache folder, the progress bar, the span texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.cli.options import ProgressBar
from vault_engine.config import CacheSettings, cache_folder
from vault_engine.index.derived import parse_span, sentence_span, span_text


def test_the_cache_folder_follows_the_setting_then_xdg_then_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    assert cache_folder(CacheSettings(), env) == tmp_path / "home" / ".cache" / "memvault"
    xdg = {**env, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert cache_folder(CacheSettings(), xdg) == tmp_path / "xdg" / "memvault"
    assert cache_folder(CacheSettings(dir="~/caches/mv"), env) == tmp_path / "home" / "caches" / "mv"
    assert cache_folder(CacheSettings(dir=str(tmp_path / "own")), env) == tmp_path / "own"


def test_a_sentence_found_in_its_host_becomes_a_span_with_its_subject() -> None:
    host = "[8 May 2023] Caroline: Hey Mel! I moved from Sweden four years ago."
    text = sentence_span("I moved from Sweden four years ago.", [host], ["Caroline", "a title"])
    parsed = parse_span(text)
    assert parsed is not None
    found, ranges = parsed
    assert found == host
    assert [found[a:b] for a, b in ranges] == ["I moved from Sweden four years ago.", "Caroline"]
    assert sentence_span("Not in the host at all.", [host], ["Caroline"]) == "Not in the host at all."
    assert parse_span("plain text") is None
    assert parse_span(span_text("host text", [(0, 4)])) == ("host text", [(0, 4)])


@pytest.mark.parametrize("done", [1, 5, 10])
def test_the_progress_bar_shows_rate_and_time_left(done: int, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 102.0])
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    bar = ProgressBar("vectors")
    bar(0, 10)
    bar(done, 10)
    line = capsys.readouterr().err.split("\r")[-1]
    assert f"{done}/10 memories" in line and f"{done / 2:.0f}/s" in line
    assert ("left" in line) == (done < 10)
