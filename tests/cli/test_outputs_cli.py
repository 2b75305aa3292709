"""``memvault remember-output --session``: a session's first two long outputs printed back whole, then
references; ``memvault context --sender``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from vault_engine.cli import cli
from vault_engine.vault import Vault


@pytest.fixture(autouse=True)
def no_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes here do not load the embedding model."""
    monkeypatch.setenv("MEMVAULT_VAULT_AUTO_SYNC", "false")


def run(vault: Vault, *args: str, input: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, ["--vault", str(vault.root), *args], input=input, catch_exceptions=False)


def output(n: int) -> str:
    return "".join(f"\x1b[31mFAILED\x1b[0m tests/test_{n}.py::test_case_{i} - AssertionError\n" for i in range(40))


def documents(vault: Vault) -> int:
    return sum(1 for e in vault.scan().active() if e.memory.type == "document")


def test_the_first_two_long_outputs_are_printed_back_whole_then_a_reference(vault: Vault) -> None:
    texts = [output(n) for n in range(3)]
    results = [run(vault, "remember-output", "--source", "tool:pytest", "--session", "s-42", input=t) for t in texts]
    assert all(r.exit_code == 0 for r in results), [r.output for r in results]
    assert results[0].stdout_bytes == texts[0].encode() and results[1].stdout_bytes == texts[1].encode()
    assert results[0].stderr.startswith("kept as m-") and "memvault show m-" in results[0].stderr
    third = results[2].stdout
    assert third.startswith("[output of tool:pytest stored in memvault") and len(third) < len(texts[2]) // 2
    assert documents(vault) >= 3  # every long output is stored, the raw ones too
    # Another session starts its own count; without --session every long output is a reference, as before.
    other = run(vault, "remember-output", "--source", "tool:pytest", "--session", "s-43", input=output(7))
    assert other.stdout_bytes == output(7).encode()
    plain = run(vault, "remember-output", "--source", "tool:pytest", input=output(8))
    assert plain.stdout.startswith("[output of tool:pytest stored in memvault")


def test_json_says_the_place_and_whether_it_is_raw(vault: Vault) -> None:
    def kept(n: int) -> Any:
        result = run(vault, "remember-output", "--source", "tool:x", "--session", "s-1", "--json", input=output(n))
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    first, second, third = kept(1), kept(2), kept(3)
    assert [(d["position"], d["raw"], d["session"]) for d in (first, second, third)] == [
        (1, True, "s-1"), (2, True, "s-1"), (3, False, "s-1")]
    assert third["reference"].startswith("[output of tool:x") and third["stored"] is True
    short = json.loads(run(vault, "remember-output", "--source", "tool:x", "--session", "s-1", "--json",
                           input="3 passed").stdout)
    assert (short["stored"], short["position"], short["raw"], short["text"]) == (False, None, True, "3 passed")


def test_short_output_is_printed_back_and_not_counted(vault: Vault) -> None:
    before = documents(vault)
    short = run(vault, "remember-output", "--source", "tool:pytest", "--session", "s-9", input="3 passed\n")
    assert short.stdout_bytes == b"3 passed\n" and short.stderr == "" and documents(vault) == before
    assert not (vault.root / ".memvault" / "outputs").exists()


def test_a_blank_session_is_a_usage_error(vault: Vault) -> None:
    result = run(vault, "remember-output", "--source", "tool:x", "--session", " ", input=output(1))
    assert result.exit_code == 1 and "--session" in result.stderr and result.stdout == ""
    assert documents(vault) == 0


def test_context_accepts_the_sender(vault: Vault) -> None:
    result = run(vault, "context", "--task", "deploy the api", "--sender", "ada", "--no-record", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["task"] == "deploy the api"
