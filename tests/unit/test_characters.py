"""The characters a memory may hold: refused with the field and position, or scrubbed visible; and every
memory written is read back before it replaces a file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault_engine import fsio, store
from vault_engine.errors import InvalidInput, UnreadableWrite
from vault_engine.format import characters
from vault_engine.format.characters import check, check_data, escape, escape_data, scrub, unescape
from vault_engine.format.memory import Memory, parse, read_back, render

REFUSED = {
    "NUL": "\x00", "SOH": "\x01", "BEL": "\x07", "BS": "\x08", "VT": "\x0b", "FF": "\x0c", "ESC": "\x1b", "US": "\x1f",
    "lone high surrogate": "\ud800", "lone low surrogate": "\udfff", "U+FFFE": "\ufffe", "U+FFFF": "\uffff",
    "U+FDD0": "\ufdd0", "U+10FFFF": "\U0010ffff", "U+1FFFE": "\U0001fffe",
}


@pytest.mark.parametrize("name", REFUSED)
def test_each_character_no_memory_may_hold_is_refused_with_its_field_and_place(name: str) -> None:
    char = REFUSED[name]
    with pytest.raises(InvalidInput) as caught:
        check(f"first line\r\nsecond {char} line", "summary")
    message = caught.value.one_line()
    assert message.startswith(f"summary: U+{ord(char):04X} (")
    assert "at character 20 (line 2, column 8)" in message  # CRLF is one line end; columns from 1
    message.encode("utf-8")  # printable, whatever it names


@pytest.mark.parametrize("text", ["tab\there", "line\nfeed", "windows\r\nline", "lone\rcarriage", "café 日本 🎉",
                                  "next line \x85 and delete \x7f", "\u2028 separator", "private \ue000 use"])
def test_what_a_file_holds_as_written_is_taken_as_it_is(text: str) -> None:
    assert check(text, "text") == text
    assert scrub(text) == text


def test_a_byte_order_mark_is_dropped_wherever_it_is() -> None:
    assert check("\ufeffpiped text with a\ufeff mark", "text") == "piped text with a mark"
    assert scrub("\ufeffa\ufeffb") == "ab"


def test_captured_text_keeps_every_character_it_can_and_shows_the_others() -> None:
    assert scrub("a\x00b\x1b[31mred\x1b[0m\x07") == "a\u2400b\u241b[31mred\u241b[0m\u2407"
    assert scrub("half \ud83d pair, \ufffe and \U0010ffff") == "half \ufffd pair, \ufffd and \ufffd"
    assert characters.INVALID.search(scrub("".join(chr(c) for c in range(0x20)))) is None


def test_nested_data_names_the_place_of_the_bad_value() -> None:
    assert check_data({"k": ["a", {"b": "c"}], "n": 3}, "extra") == {"k": ["a", {"b": "c"}], "n": 3}
    with pytest.raises(InvalidInput, match=r"^extra\.k\[1\]\.b: U\+0000"):
        check_data({"k": ["a", {"b": "\x00"}]}, "extra")
    with pytest.raises(InvalidInput, match=r"^a key of extra: U\+0007"):
        check_data({"\x07": 1}, "extra")


# ---------------------------------------------------------------- imported text: escaped, not refused


@pytest.mark.parametrize("name", REFUSED)
def test_an_imported_character_no_memory_may_hold_is_kept_as_its_escape(name: str) -> None:
    char = REFUSED[name]
    text, codes = escape(f"before {char} after")
    assert text == f"before \u27e8U+{ord(char):04X}\u27e9 after" and codes == [f"U+{ord(char):04X}"]
    check(text, "body")  # what is stored is text a memory holds
    assert unescape(text) == f"before {char} after"


@pytest.mark.parametrize("text", ["tab\there", "windows\r\nline", "café 日本 🎉", "a \u27e8 bracket",
                                  "\u27e8U+00e9\u27e9", "\u27e8U+41\u27e9", "\u27e8U+0041", "U+0041\u27e9"])
def test_text_without_those_characters_or_the_form_is_kept_as_it_is(text: str) -> None:
    assert escape(text) == (text, [])
    assert unescape(text) == text


def test_the_form_written_out_in_the_text_is_escaped_too_so_nothing_is_mistaken() -> None:
    assert escape("\u27e8U+000B\u27e9 is how a VT is stored") == (
        "\u27e8U+27E8\u27e9U+000B\u27e9 is how a VT is stored", ["U+27E8"])
    assert escape("\u27e8\x0b\u27e9") == ("\u27e8\u27e8U+000B\u27e9\u27e9", ["U+000B"])
    assert escape("\u27e8U+\x0b\u27e9") == ("\u27e8U+\u27e8U+000B\u27e9\u27e9", ["U+000B"])
    assert escape("\x00\x00\x1f") == ("\u27e8U+0000\u27e9\u27e8U+0000\u27e9\u27e8U+001F\u27e9", ["U+0000", "U+001F"])
    assert escape("\ufeffmark") == ("mark", [])  # a byte-order mark is dropped, as everywhere


ALPHABET = st.sampled_from(["a", " ", "\n", "\u27e8", "\u27e9", "U", "+", "0", "B", "F", "1", "\x0b", "\x00",
                            "\ud800", "\uffff", "\U0010ffff", "\U0001f389", "\u27e8U+000B\u27e9", "\u27e8U+27E8\u27e9"])


@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_escaping_round_trips_and_leaves_nothing_a_memory_cannot_hold(text: str) -> None:
    stored, _codes = escape(text)
    assert characters.INVALID.search(stored) is None
    assert unescape(stored) == text


def test_nested_imported_data_names_each_escaped_place_and_refuses_a_bad_key() -> None:
    escaped: dict[str, list[str]] = {}
    value = escape_data({"k": ["a", {"b": "x\x00"}], "n": 3}, "extra", escaped)
    assert value == {"k": ["a", {"b": "x\u27e8U+0000\u27e9"}], "n": 3}
    assert escaped == {"extra.k[1].b": ["U+0000"]}
    with pytest.raises(InvalidInput, match=r"^a key of extra: U\+0007"):
        escape_data({"\x07": 1}, "extra", escaped)


# ---------------------------------------------------------------- the read-back check


def _memory(**changes: object) -> Memory:
    return Memory(id="m-a", title="A title", type="fact", body="The body.\n").replace(**changes)


@pytest.mark.parametrize("memory", [
    _memory(),
    _memory(title="a\x00title \x1b with controls", summary="\ud7ff \ufffd \U0001f389", tags=("x\ty",)),
    _memory(body="a lone \r carriage\r\nand CRLF \x85 \u2028 kept byte for byte\n"),
    _memory(extra={"nested": [{"k": "v"}, 1, 2.5]}),
])
def test_what_render_writes_reads_back_as_the_same_memory(memory: Memory) -> None:
    read_back("x.md", memory)(render(memory).encode("utf-8"))


def test_bytes_that_do_not_read_back_are_refused_and_say_why() -> None:
    memory = _memory()
    with pytest.raises(UnreadableWrite, match="NUL byte"):
        read_back("x.md", memory)(render(memory.replace(body="a\x00b\n")).encode())
    with pytest.raises(UnreadableWrite, match="another title"):
        read_back("x.md", memory)(render(memory.replace(title="Other")).encode())
    with pytest.raises(UnreadableWrite, match="another body"):
        read_back("x.md", memory)(render(memory.replace(body="other\n")).encode())


def test_a_write_that_would_not_read_back_leaves_the_file_and_no_temp(tmp_path: Path) -> None:
    store.write(tmp_path, "m.md", _memory())
    before = (tmp_path / "m.md").read_bytes()
    with pytest.raises(UnreadableWrite):
        store.write(tmp_path, "m.md", _memory(body="a\x00b\n"))
    assert (tmp_path / "m.md").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.md"]
    assert parse(before.decode(), "m.md").memory == _memory()


def test_a_batch_with_one_file_that_would_not_read_back_writes_none(tmp_path: Path) -> None:
    good, bad = _memory(id="m-good"), _memory(id="m-bad", body="a\x00b\n")
    with pytest.raises(UnreadableWrite):
        store.write_many(tmp_path, [("good.md", good, None), ("bad.md", bad, None)])
    assert list(tmp_path.iterdir()) == []


def test_the_bytes_checked_are_the_ones_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that puts other bytes on disk than it was given is caught by reading the file back."""
    real = fsio.os.write

    def torn(fd: int, data: memoryview) -> int:  # the second half never arrives: a short, silent write
        return real(fd, bytes(data[: len(data) // 2]) + b"\x00" * (len(data) - len(data) // 2))

    monkeypatch.setattr(fsio.os, "write", torn)
    with pytest.raises(UnreadableWrite):
        store.write(tmp_path, "m.md", _memory())
    assert not (tmp_path / "m.md").exists()
