"""A session's long tool outputs: every one stored, the first two given back raw, later ones as references."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import pytest

from vault_engine.errors import InvalidInput
from vault_engine.ingest.outputs import OUTPUTS_DIR, RAW_OUTPUTS, SessionOutput, remember_session_output, session_file
from vault_engine.llm.offline import OfflineLlm
from vault_engine.vault import Vault


def output(n: int, lines: int = 60) -> str:
    """A long tool output, different for each ``n``."""
    return "".join(f"tests/test_{n}.py::test_case_{i} PASSED [{i}%]\n" for i in range(lines))


def keep(vault: Vault, text: str, session: str = "s-1", **options: object) -> SessionOutput:
    return remember_session_output(vault, text, session=session, source="tool:pytest", llm=OfflineLlm(),
                                   **options)  # type: ignore[arg-type]


def stored_ids(vault: Vault) -> set[str]:
    return {e.memory.id for e in vault.scan().active() if e.memory.type == "document"}


def test_the_first_two_long_outputs_are_raw_and_the_third_a_reference(vault: Vault) -> None:
    texts = [output(n) for n in range(4)]
    assert all(len(t) >= vault.config.ingest.tool_output_min_chars for t in texts)
    kept = [keep(vault, t) for t in texts]
    assert [k.position for k in kept] == [1, 2, 3, 4]
    assert [k.raw for k in kept] == [True, True, False, False]
    assert kept[0].shown == texts[0] and kept[1].shown == texts[1]  # whole, byte for byte
    assert kept[2].shown == kept[2].result.reference and kept[2].result.ids[0] in kept[2].shown
    assert len(kept[2].shown) < len(texts[2]) // 2
    # Every long output is stored, the raw ones too.
    assert all(k.result.stored for k in kept)
    assert {k.result.ids[0] for k in kept} <= stored_ids(vault)
    data = kept[0].to_json()
    assert (data["session"], data["position"], data["raw"], data["stored"]) == ("s-1", 1, True, True)
    assert kept[2].to_json()["raw"] is False and kept[2].to_json()["reference"] == kept[2].result.reference


def test_each_session_counts_its_own_outputs(vault: Vault) -> None:
    first = [keep(vault, output(n), session="s-1") for n in range(3)]
    other = [keep(vault, output(n + 10), session="s-2") for n in range(3)]
    assert [k.raw for k in first] == [True, True, False]
    assert [k.raw for k in other] == [True, True, False]
    state = json.loads(session_file(vault.root, "s-2").read_text())
    assert state == {"session": "s-2", "outputs": [k.result.ids[0] for k in other]}


def test_short_outputs_are_neither_stored_nor_counted(vault: Vault) -> None:
    limit = vault.config.ingest.tool_output_min_chars
    before = stored_ids(vault)
    short = keep(vault, "y" * (limit - 1))
    assert not short.result.stored and short.raw and short.position is None and short.shown == "y" * (limit - 1)
    assert stored_ids(vault) == before
    assert not session_file(vault.root, "s-1").exists()
    # The session's long outputs still start at the first place.
    assert [keep(vault, output(n)).position for n in range(3)] == [1, 2, 3]


def test_the_threshold_is_the_configured_one_unless_given(vault: Vault) -> None:
    text = output(1, lines=10)
    assert len(text) < vault.config.ingest.tool_output_min_chars
    assert not keep(vault, text).result.stored
    assert keep(vault, text, min_chars=100).position == 1


def test_the_same_output_again_keeps_its_place(vault: Vault) -> None:
    texts = [output(n) for n in range(3)]
    places = [keep(vault, t).position for t in texts]
    assert places == [1, 2, 3]
    again = keep(vault, texts[0])
    assert again.position == 1 and again.raw and again.result.document is not None
    assert again.result.document.duplicate
    assert keep(vault, output(9)).position == 4


def test_a_lost_count_starts_again(vault: Vault) -> None:
    for n in range(3):
        keep(vault, output(n))
    session_file(vault.root, "s-1").write_text("{not json")
    assert keep(vault, output(5)).position == 1


def test_session_ids_become_safe_file_names(vault: Vault) -> None:
    plain = session_file(vault.root, "5f1c2b7e-9d7a-4c1e-b2f3-0a9e8d7c6b5a")
    assert plain.name == "5f1c2b7e-9d7a-4c1e-b2f3-0a9e8d7c6b5a.json"
    for odd in ("../../escape", "a/b", "x" * 100, "séance"):
        path = session_file(vault.root, odd)
        assert path.parent == vault.root / OUTPUTS_DIR and len(path.stem) == 24
    with pytest.raises(InvalidInput, match="--session"):
        session_file(vault.root, "  ")


def test_a_blank_session_stores_nothing(vault: Vault) -> None:
    before = stored_ids(vault)
    with pytest.raises(InvalidInput):
        keep(vault, output(1), session="")
    assert stored_ids(vault) == before


def test_concurrent_outputs_of_one_session_take_distinct_places(make_vault: Callable[..., Vault]) -> None:
    root = make_vault().root
    places: list[int | None] = []
    failures: list[BaseException] = []

    def work(n: int) -> None:
        try:
            places.append(keep(Vault(root), output(n)).position)  # a vault of its own, as another process has
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(p for p in places if p is not None) == [1, 2, 3, 4, 5, 6]
    assert RAW_OUTPUTS == 2


def test_an_output_past_the_document_limit_is_refused_or_named_when_captured(vault: Vault) -> None:
    from vault_engine.agents.capture import CaptureResult, _turns
    from vault_engine.agents.messages import Message, ToolOutput
    from vault_engine.limits import MAX_DOCUMENT

    huge = output(0, lines=MAX_DOCUMENT // 40 + 1)
    assert len(huge) > MAX_DOCUMENT
    with pytest.raises(InvalidInput, match=rf"^the tool output is too long \({len(huge)} characters; at most "):
        keep(vault, huge)
    result = CaptureResult("s-1", None)
    turns = _turns(vault, [Message("k1", "assistant", "Ran the suite.", outputs=(ToolOutput("Bash", huge),))],
                   OfflineLlm(), None, result)
    assert result.outputs == [] and not stored_ids(vault)
    assert turns[0].content == f"Ran the suite.\n\n[output of Bash, {len(huge)} characters: too long to keep]"
