"""The detail tier: made once by the language model, cached in the file, remade when the body changes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.errors import LlmUnavailable
from vault_engine.format.memory import memory_text, split_detail
from vault_engine.ingest.detail import detail
from vault_engine.llm.fakes import UnusedLlm
from vault_engine.vault import NewMemory, Vault

BODY = ("Deploys run from the main branch.\n\nThe release job tags the commit. Then it builds the image.\n"
        "Staging gets it first. Production follows after a manual approval.\n")


class CountingLlm(UnusedLlm):
    """A fake model that answers ``detail`` with a fixed text and counts its calls."""

    def __init__(self, answer: str = "First sentence. Second sentence. Third sentence.", fail: bool = False):
        self.answer = answer
        self.fail = fail
        self.calls: list[str] = []

    def detail(self, text: str) -> str:
        self.calls.append(text)
        if self.fail:
            raise LlmUnavailable("model down")
        return self.answer


def add(vault: Vault, text: str = BODY) -> tuple[str, Path]:
    result = vault.add(NewMemory(text=text, title="Deploys"))
    return result.id, vault.root / result.path


def test_the_first_request_asks_the_model_and_caches_the_answer(vault: Vault) -> None:
    memory_id, _ = add(vault)
    llm = CountingLlm()
    made = detail(vault, memory_id, llm)
    assert (made.text, made.cached, made.saved) == (llm.answer, False, True)
    assert llm.calls == [BODY.strip()]
    body = vault.entry(memory_id).memory.body
    raw, cached, fresh = split_detail(body)
    assert fresh
    assert raw == BODY and cached == llm.answer  # the raw body is kept byte for byte
    section = r"\n\n## Detail\n\n<!-- memvault:detail sha256:[0-9a-f]{64} chars:[0-9]+ -->\n" + re.escape(llm.answer)
    section += r"\n\Z"
    assert re.search(section, body)
    again = detail(vault, memory_id, llm)
    assert (again.text, again.cached, again.saved) == (llm.answer, True, False)
    assert len(llm.calls) == 1  # the second request makes no model call
    assert [e.kind for e in vault.journal.events()][-1] == "detail"


def test_a_changed_body_makes_the_detail_again(vault: Vault) -> None:
    memory_id, path = add(vault)
    llm = CountingLlm()
    detail(vault, memory_id, llm)
    text = path.read_text(encoding="utf-8").replace("manual approval", "second approval")
    path.write_text(text, encoding="utf-8")
    llm.answer = "Changed one. Changed two. Changed three."
    made = detail(vault, memory_id, llm)
    assert not made.cached and made.text == "Changed one. Changed two. Changed three."
    assert len(llm.calls) == 2 and "second approval" in llm.calls[1]
    body = vault.entry(memory_id).memory.body
    assert body.count("## Detail") == 1 and split_detail(body)[1] == made.text


def test_the_cached_detail_is_not_part_of_what_the_memory_states(vault: Vault) -> None:
    memory_id, _ = add(vault)
    detail(vault, memory_id, CountingLlm())
    assert memory_text(vault.entry(memory_id).memory) == BODY.strip()
    again = vault.add(NewMemory(text=BODY, title="Deploys"))
    assert not again.created and again.id == memory_id  # the same text is still recognised


def test_a_model_failure_writes_nothing(vault: Vault) -> None:
    memory_id, path = add(vault)
    before = path.read_bytes()
    with pytest.raises(LlmUnavailable, match="model down"):
        detail(vault, memory_id, CountingLlm(fail=True))
    assert path.read_bytes() == before


def test_a_plain_note_is_summarised_but_never_rewritten(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault({"notes/plain.md": "# Plain\n\nA note without frontmatter. It has two sentences.\n"})
    [note] = [e for e in vault.scan().entries.values() if e.memory.plain]
    before = (vault.root / note.path).read_bytes()
    made = detail(vault, note.memory.id, CountingLlm())
    assert not made.saved and made.text
    assert (vault.root / note.path).read_bytes() == before


def test_show_depth_1_shows_the_detail_and_depth_0_asks_no_model(vault: Vault) -> None:
    memory_id, path = add(vault)
    runner = CliRunner()
    shallow = runner.invoke(cli, ["--vault", str(vault.root), "show", memory_id, "--depth", "0"])
    assert shallow.exit_code == 0 and "detail:" not in shallow.stdout
    assert "## Detail" not in path.read_text(encoding="utf-8")
    deep = runner.invoke(cli, ["--vault", str(vault.root), "show", memory_id, "--json"])
    assert deep.exit_code == 0, deep.output
    data = json.loads(deep.stdout)
    assert data["detail"] and data["detail"].startswith("Deploys run from the main branch.")
    assert "## Detail" in path.read_text(encoding="utf-8")
    full = runner.invoke(cli, ["--vault", str(vault.root), "show", memory_id, "--depth", "2", "--json"])
    assert json.loads(full.stdout)["body"] == BODY  # the body shown is the raw content, detail aside


@pytest.mark.parametrize("raw", ["ends mid-line without a newline", "two\n\nparagraphs\n", "trailing blank\n\n\n", ""])
def test_the_raw_body_comes_back_byte_for_byte(raw: str) -> None:
    from vault_engine.format.memory import with_detail

    body = with_detail(raw, "One. Two. Three.")
    assert split_detail(body) == (raw, "One. Two. Three.", True)


def test_an_edited_body_makes_the_cached_detail_stale() -> None:
    from vault_engine.format.memory import with_detail

    body = with_detail("The original text.", "One. Two. Three.").replace("original", "edited")
    assert split_detail(body) == ("The edited text.\n", "One. Two. Three.", False)
