"""Small parts of indexing: the cache folder, the progress bar, the span texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.cli.options import ProgressBar
from vault_engine.config import CacheSettings, cache_folder, cache_place
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


def test_a_cache_folder_others_could_write_is_passed_over_for_the_default(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home")}
    (tmp_path / "home").mkdir()
    default = tmp_path / "home" / ".cache" / "memvault"
    shared = tmp_path / "team-cache"
    shared.mkdir()
    shared.chmod(0o777)  # any user of the machine could plant a tool list or vectors there
    place = cache_place(CacheSettings(dir=str(shared)), None, env)
    assert place.folder == default
    assert place.refused == (f"the cache folder {shared} is not used ({shared} is writable by every user); "
                             f"memvault keeps its caches in {default}")
    shared.chmod(0o1777)  # sticky: others may still add files to it
    assert cache_place(CacheSettings(dir=str(shared)), None, env).folder == default
    below = shared / "mine"  # made by this user below a sticky folder (/tmp): nobody else can add to it
    assert cache_place(CacheSettings(dir=str(below)), None, env) == cache_place(CacheSettings(dir=str(below)))
    assert cache_folder(CacheSettings(dir=str(below)), env) == below
    shared.chmod(0o755)
    assert cache_place(CacheSettings(dir=str(shared)), None, env).refused is None


def test_a_cache_folder_of_another_user_or_inside_the_vault_or_relative_is_passed_over(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"HOME": str(tmp_path / "home")}
    vault = tmp_path / "vault"
    (vault / ".memvault").mkdir(parents=True)
    default = tmp_path / "home" / ".cache" / "memvault"
    committed = cache_place(CacheSettings(dir=str(vault / "attachments" / "cache")), vault, env)
    assert committed.folder == default and committed.refused is not None
    assert "it lies inside the vault, whose files anyone who shares it can commit" in committed.refused
    assert cache_folder(CacheSettings(dir=str(vault / ".memvault" / "cache")), env, vault=vault) == (
        vault / ".memvault" / "cache")  # the vault's private state is never shared
    relative = cache_place(CacheSettings(dir="caches"), vault, env)
    assert relative.folder == default and relative.refused is not None and "a relative path" in relative.refused
    import os

    theirs = tmp_path / "theirs"
    theirs.mkdir()
    if os.geteuid() == 0:
        os.chown(theirs, 12345, 12345)  # another user's folder
    else:  # this user's folders look like another's to a process of a different user
        monkeypatch.setattr(os, "geteuid", lambda: os.stat(tmp_path).st_uid + 1)
    foreign = cache_place(CacheSettings(dir=str(theirs)), vault, env)
    assert foreign.folder != theirs
    assert foreign.refused is not None and f"{theirs} belongs to another user" in foreign.refused
