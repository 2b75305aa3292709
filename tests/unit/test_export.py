"""The AGENTS.md block: replaced in place, the rest of the file untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault_engine.context.export import BEGIN, END, block, splice, write_agents_file
from vault_engine.errors import InvalidInput

HEAD = "# Agent notes\n\nRun `make test` before pushing.\n"
TAIL = "\n## Style\n\nTabs in Makefiles.\n"


def test_a_block_is_appended_once_then_replaced_in_place(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text(HEAD)
    assert write_agents_file(path, "first manifest")
    text = path.read_text()
    assert text.startswith(HEAD) and text.endswith(f"{END}\n") and "first manifest" in text
    path.write_text(text + TAIL)
    assert write_agents_file(path, "second manifest")
    updated = path.read_text()
    assert updated == HEAD + "\n" + block("second manifest") + "\n" + TAIL
    assert not write_agents_file(path, "second manifest")  # unchanged: not rewritten


def test_a_missing_file_is_created(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    assert write_agents_file(path, "manifest")
    assert path.read_text() == block("manifest") + "\n"


@pytest.mark.parametrize("broken", [
    f"{HEAD}{BEGIN}\nno end\n",
    f"{HEAD}{END}\n",
    f"{block('a')}\n{block('b')}\n",
])
def test_broken_markers_are_errors_and_the_file_is_untouched(tmp_path: Path, broken: str) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text(broken)
    with pytest.raises(InvalidInput):
        write_agents_file(path, "manifest")
    assert path.read_text() == broken


def test_non_utf8_file_is_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"\xff\xfe notes")
    with pytest.raises(InvalidInput, match="not valid UTF-8"):
        write_agents_file(path, "manifest")
    assert path.read_bytes() == b"\xff\xfe notes"


def test_splice_keeps_text_around_the_block_byte_for_byte() -> None:
    text = "a\r\nb\r\n\r\n" + block("old") + "\r\ntrailing  \r\n"
    assert splice(text, block("new"), "x") == "a\r\nb\r\n\r\n" + block("new") + "\r\ntrailing  \r\n"
