"""`memvault feedback` through click's CliRunner: one-line output, --json, errors, rollback."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import CliRunner, Result
from test_cli import as_json, assert_one_error  # the CLI suite's helpers, same folder

from vault_engine.cli import cli
from vault_engine.format.memory import OUTCOMES
from vault_engine.journal import Event
from vault_engine.vault import Vault

RunCli = Callable[..., Result]
FEEDBACK_KEYS = {"action", "id", "path", "outcome", "old_lifecycle", "lifecycle", "applied", "last_applied",
                 "application", "event"}


def one_line(result: Result) -> str:
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    return lines[0]


def add_id(run_cli: RunCli, text: str, *args: str) -> str:
    return str(as_json(run_cli("add", text, *args, "--json"))["id"])


def deliver(vault: Vault, *memory_ids: str) -> str:
    event = Event("application", "", {"ids": list(memory_ids), "task": "review", "project": None})
    vault.journal.append([event])
    return event.id


def test_promotion_line(run_cli: RunCli) -> None:
    memory_id = add_id(run_cli, "The user probably prefers tabs", "--authority", "inferred")
    line = one_line(run_cli("feedback", memory_id, "--outcome", "used-successfully"))
    assert line == f"recorded used-successfully for {memory_id}: trial -> proven (used successfully 1 time)"
    line = one_line(run_cli("feedback", memory_id, "--outcome", "used-successfully"))
    assert line == f"recorded used-successfully for {memory_id}: proven (used successfully 2 times)"


def test_counter_only_line_for_an_explicit_memory(run_cli: RunCli) -> None:
    memory_id = add_id(run_cli, "Run the linter before pushing")
    line = one_line(run_cli("feedback", memory_id, "--outcome", "contributed-to-failure"))
    assert line == f"recorded contributed-to-failure for {memory_id}: proven (contributed to failure 1 time)"


def test_superseding_line_then_rollback(run_cli: RunCli) -> None:
    memory_id = add_id(run_cli, "The build probably uses make", "--authority", "inferred")
    line = one_line(run_cli("feedback", memory_id, "--outcome", "corrected"))
    assert line == (f"recorded corrected for {memory_id}: trial -> superseded "
                    f"(corrected 1 time; undo: memvault rollback {memory_id})")
    shown = as_json(run_cli("show", memory_id, "--json"))
    assert shown["metadata"]["lifecycle"] == "superseded"
    assert one_line(run_cli("rollback", memory_id)) == \
        f"{memory_id} is current again; the feedback that superseded it is undone"
    assert as_json(run_cli("show", memory_id, "--json"))["metadata"]["lifecycle"] == "trial"
    replayed = run_cli("journal", "replay")
    assert replayed.exit_code == 0 and "found 0 differences" in replayed.stdout


def test_json_output(run_cli: RunCli, vault: Vault) -> None:
    memory_id = add_id(run_cli, "Prefer small pull requests", "--authority", "inferred")
    application = deliver(vault, memory_id)
    data = as_json(run_cli("feedback", memory_id, "--outcome", "used-successfully", "--application", application,
                           "--json"))
    assert set(data) == FEEDBACK_KEYS
    assert (data["action"], data["id"], data["outcome"], data["application"]) == (
        "promoted", memory_id, "used-successfully", application)
    assert (data["old_lifecycle"], data["lifecycle"]) == ("trial", "proven")
    assert data["applied"] == {k: int(k == "used-successfully") for k in OUTCOMES}
    assert data["last_applied"].endswith("Z") and data["event"].startswith("e-")
    assert data["path"].startswith("memories/")
    again = as_json(run_cli("--json", "feedback", memory_id, "--outcome", "used-successfully",
                            "--application", application))
    assert again["action"] == "already-recorded" and again["event"] == data["event"]
    assert again["applied"] == data["applied"]


def test_already_recorded_line_changes_nothing(run_cli: RunCli, vault: Vault) -> None:
    memory_id = add_id(run_cli, "Squash before merging", "--authority", "inferred")
    application = deliver(vault, memory_id)
    run_cli("feedback", memory_id, "--outcome", "ignored", "--application", application)
    path = vault.root / vault.scan().get(memory_id).path
    before = path.read_bytes()
    line = one_line(run_cli("feedback", memory_id, "--outcome", "ignored", "--application", application))
    assert line == f"already recorded ignored for {memory_id} in {application}: trial (ignored 1 time)"
    assert path.read_bytes() == before


@pytest.mark.parametrize(("args", "fragments", "code"), [
    (("--outcome", "worked"), ("'worked' is not one of", "feedback --help"), 2),
    ((), ("Missing option '--outcome'",), 2),
    (("--outcome", "ignored", "--application", "e-nope"), ("was not delivered in application e-nope",), 1),
])
def test_errors_are_one_line(run_cli: RunCli, args: tuple[str, ...], fragments: tuple[str, ...], code: int) -> None:
    memory_id = add_id(run_cli, "A memory to give feedback on")
    result = run_cli("feedback", memory_id, *args)
    assert_one_error(result, *fragments)
    assert result.exit_code == code


def test_unknown_id_and_superseded_memory_errors(run_cli: RunCli) -> None:
    assert_one_error(run_cli("feedback", "m-missing", "--outcome", "ignored"), "m-missing")
    memory_id = add_id(run_cli, "Guessing again", "--authority", "inferred")
    run_cli("feedback", memory_id, "--outcome", "contributed-to-failure")
    assert_one_error(run_cli("feedback", memory_id, "--outcome", "ignored"), "is superseded",
                     f"memvault rollback {memory_id}")


def test_trashed_memory_error(run_cli: RunCli) -> None:
    memory_id = add_id(run_cli, "About to be forgotten")
    run_cli("forget", memory_id)
    assert_one_error(run_cli("feedback", memory_id, "--outcome", "ignored"), "is in the trash")


def test_feedback_is_a_documented_command() -> None:
    result = CliRunner().invoke(cli, ["feedback", "--help"])
    assert result.exit_code == 0
    for word in ("--outcome", "--application", "used-successfully", "contributed-to-failure", "rollback"):
        assert word in result.stdout
