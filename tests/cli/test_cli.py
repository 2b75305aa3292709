"""The memvault CLI through click's CliRunner: JSON shapes, errors, options, help."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from vault_engine.cli import cli
from vault_engine.vault import Vault

CHANGE_KEYS = {"action", "id", "path", "related", "event", "conflicts", "overviews"}


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_one_error(result: Result, *fragments: str) -> str:
    """Exactly one stderr line, starting with 'error: ', a non-zero exit, and no traceback."""
    assert result.exit_code != 0
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def add_id(run_cli: Callable[..., Result], text: str, *args: str) -> str:
    data = as_json(run_cli("add", text, *args, "--json"))
    return str(data["id"])


# ---------------------------------------------------------------- JSON output of every command


def test_init_json(tmp_path: Path) -> None:
    target = tmp_path / "new-vault"
    result = CliRunner().invoke(cli, ["init", str(target), "--no-git", "--json"])
    assert as_json(result) == {"vault": str(target), "created": True}
    again = CliRunner().invoke(cli, ["--json", "init", str(target), "--no-git"])
    assert as_json(again)["created"] is False


def test_init_without_a_path_creates_the_vault_the_next_commands_find(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`memvault init` then `memvault add`, with MEMVAULT_DIR set: the vault is made where MEMVAULT_DIR
    points (it was made in the working folder, and every command after it failed "no vault")."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("MEMVAULT_DIR", str(tmp_path / "from-env"))
    made = as_json(CliRunner().invoke(cli, ["init", "--no-git", "--json"]))
    assert made == {"vault": str(tmp_path / "from-env"), "created": True}
    assert not any(work.iterdir())  # nothing in the working folder
    assert as_json(CliRunner().invoke(cli, ["add", "Deploys go out on Tuesdays", "--json"]))["created"] is True
    # --vault wins over MEMVAULT_DIR; with neither, the working folder is the vault
    assert as_json(CliRunner().invoke(cli, ["--vault", str(tmp_path / "flag"), "init", "--no-git", "--json"])
                   )["vault"] == str(tmp_path / "flag")
    monkeypatch.delenv("MEMVAULT_DIR")
    assert as_json(CliRunner().invoke(cli, ["init", "--no-git", "--json"]))["vault"] == str(work)


def test_add_and_show_json(run_cli: Callable[..., Result]) -> None:
    data = as_json(run_cli("add", "Use pytest fixtures. Not setUp.", "--project", "github.com/acme/api",
                           "--tag", "testing", "--path", "tests/**", "--json"))
    assert set(data) == {"id", "path", "created", "notice", "scope", "project"} and data["created"] is True
    assert (data["scope"], data["project"]) == ("project", "github.com/acme/api")
    assert data["path"].startswith("memories/projects/github.com-acme-api/")
    depth0 = as_json(run_cli("show", data["id"], "--depth", "0", "--json"))
    assert {"id", "title", "depth", "summary", "trigger", "path", "trashed", "text"} <= set(depth0)
    assert "metadata" not in depth0 and "body" not in depth0
    depth1 = as_json(run_cli("show", data["id"], "--json"))
    assert depth1["depth"] == 1 and {"metadata", "links"} <= set(depth1) and "body" not in depth1
    assert depth1["metadata"]["lifecycle"] == "proven" and depth1["metadata"]["authority"] == "explicit"
    assert depth1["metadata"]["tags"] == ["testing"] and depth1["metadata"]["paths"] == ["tests/**"]
    depth2 = as_json(run_cli("show", data["id"], "--depth", "2", "--json"))
    assert depth2["body"] == "Use pytest fixtures. Not setUp.\n"


def test_add_human_prints_the_id(run_cli: Callable[..., Result]) -> None:
    result = run_cli("add", "Human output")
    assert result.exit_code == 0
    assert result.stdout.strip().startswith("m-") and len(result.stdout.strip().splitlines()) == 1
    again = run_cli("add", "Human output")
    assert again.stdout == result.stdout and "evidence" in again.stderr


def test_list_json_with_filters(run_cli: Callable[..., Result]) -> None:
    a = add_id(run_cli, "Global fact")
    b = add_id(run_cli, "Project fact", "--project", "p1")
    c = add_id(run_cli, "Me", "--type", "core-profile")
    data = as_json(run_cli("list", "--json"))
    assert set(data) == {"memories", "invalid"} and data["invalid"] == []
    assert {m["id"] for m in data["memories"]} == {a, b, c}
    expected = {"id", "title", "type", "scope", "project", "trust", "authority", "lifecycle", "recall", "tier",
                "importance", "summary", "tags", "path", "trashed", "expires_at", "updated"}
    assert all(set(m) == expected for m in data["memories"])
    assert [m["id"] for m in as_json(run_cli("list", "--project", "p1", "--json"))["memories"]] == [b]
    assert [m["id"] for m in as_json(run_cli("list", "--type", "core-profile", "--json"))["memories"]] == [c]
    assert [m["id"] for m in as_json(run_cli("list", "--tier", "hot", "--json"))["memories"]] == [c]
    assert {m["id"] for m in as_json(run_cli("list", "--scope", "global", "--json"))["memories"]} == {a, c}
    assert as_json(run_cli("list", "--lifecycle", "trial", "--json"))["memories"] == []


def test_list_takes_the_trust_values_search_takes(run_cli: Callable[..., Result]) -> None:
    learned = add_id(run_cli, "Learned fact")
    system = add_id(run_cli, "System fact", "--trust", "system")
    external = add_id(run_cli, "External fact", "--trust", "external")
    for args in ((), ("--trust", "any")):  # before: "--trust any" was refused, exit 2
        assert {m["id"] for m in as_json(run_cli("list", *args, "--json"))["memories"]} == {learned, system, external}
    both = as_json(run_cli("list", "--trust", "system", "--trust", "external", "--json"))["memories"]
    assert {m["id"] for m in both} == {system, external}
    assert [m["id"] for m in as_json(run_cli("list", "--trust", "learned", "--json"))["memories"]] == [learned]
    refused = run_cli("list", "--trust", "everything")
    assert refused.exit_code == 2 and len(refused.stderr.splitlines()) == 1 and "'any'" in refused.stderr
    search = run_cli("search", "fact", "--trust", "any", "--json")
    assert search.exit_code == 0, search.output


def test_correct_forget_rollback_json(run_cli: Callable[..., Result]) -> None:
    old = add_id(run_cli, "Deploy on Fridays")
    corrected = as_json(run_cli("correct", old, "Deploy on Mondays", "--json"))
    assert set(corrected) == CHANGE_KEYS and corrected["action"] == "corrected" and corrected["related"] == old
    new = corrected["id"]
    superseded = as_json(run_cli("list", "--lifecycle", "superseded", "--json"))["memories"]
    assert [m["id"] for m in superseded] == [old]
    undone = as_json(run_cli("rollback", new, "--json"))
    assert set(undone) == CHANGE_KEYS and undone["action"] == "rolled-back" and undone["id"] == old
    forgotten = as_json(run_cli("forget", old, "--json"))
    assert set(forgotten) == CHANGE_KEYS and forgotten["path"].startswith("trash/")
    restored = as_json(run_cli("rollback", old, "--json"))
    assert restored["action"] == "restored" and restored["path"].startswith("memories/global/")
    purged = as_json(run_cli("forget", old, "--permanent", "--json"))
    assert purged["action"] == "purged" and purged["path"] is None


def test_trash_commands_json(run_cli: Callable[..., Result]) -> None:
    a = add_id(run_cli, "Trash me")
    b = add_id(run_cli, "Trash me too")
    run_cli("forget", a)
    run_cli("forget", b)
    listed = as_json(run_cli("trash", "list", "--json"))
    assert set(listed) == {"trash"} and {m["id"] for m in listed["trash"]} == {a, b}
    assert all(m["trashed"] and m["expires_at"] for m in listed["trash"])
    restored = as_json(run_cli("trash", "restore", a, "--json"))
    assert set(restored) == {"action", "id", "path"} and restored["id"] == a
    assert as_json(run_cli("trash", "empty", "--expired", "--json")) == {"purged": []}
    assert as_json(run_cli("trash", "empty", "--json")) == {"purged": [b]}
    human = run_cli("trash", "list")
    assert human.exit_code == 0 and "0 in the trash" in human.stderr


def test_status_json(run_cli: Callable[..., Result], vault: Vault) -> None:
    add_id(run_cli, "Counted")
    data = as_json(run_cli("status", "--json"))
    assert {"vault", "memories", "by_type", "by_lifecycle", "by_tier", "trash", "invalid", "hot_chars",
            "hot_budget", "journal_events", "journal_warnings", "index", "embedding_model"} <= set(data)
    assert data["memories"] == 1 and data["vault"] == str(vault.root)
    human = run_cli("status")
    assert human.exit_code == 0 and "memories:  1" in human.stdout


def test_journal_replay_json(run_cli: Callable[..., Result], vault: Vault) -> None:
    memory_id = add_id(run_cli, "Replayed")
    data = as_json(run_cli("journal", "replay", "--json"))
    assert data == {"applied": False, "differences": [], "warnings": []}
    path = vault.root / vault.entry(memory_id).path
    path.write_text(path.read_text().replace("lifecycle: proven", "lifecycle: trial"))
    found = run_cli("journal", "replay", "--json")
    assert found.exit_code == 1
    [diff] = json.loads(found.stdout)["differences"]
    assert (diff["id"], diff["key"], diff["file_value"], diff["journal_value"]) == (
        memory_id, "lifecycle", "trial", "proven")
    fixed = as_json(run_cli("journal", "replay", "--apply", "--json"))
    assert fixed["applied"] is True and len(fixed["differences"]) == 1
    assert as_json(run_cli("journal", "replay", "--json"))["differences"] == []


def test_import_json_and_bad_lines(run_cli: Callable[..., Result], tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join([
        json.dumps({"title": "One", "type": "fact", "body": "first"}),
        "{broken",
        json.dumps({"title": "Two", "type": "fact", "lifecycle": "eternal", "body": "second"}),
        json.dumps({"title": "Three", "type": "procedure", "body": "third"}),
    ]) + "\n")
    result = run_cli("import", str(source), "--json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    data = json.loads(result.stdout)
    assert set(data) == {"imported", "merged", "unchanged", "errors", "escaped"} and len(data["imported"]) == 2
    assert [e.split(":")[1] for e in data["errors"]] == ["2", "3"]
    errors = result.stderr.splitlines()
    assert len(errors) == 2 and all(line.startswith(f"error: {source}:") for line in errors)
    assert len(as_json(run_cli("list", "--json"))["memories"]) == 2
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\ufeff" + json.dumps({"title": "Four", "type": "fact", "body": "fourth"}) + "\n")
    assert len(as_json(run_cli("import", str(clean), "--json"))["imported"]) == 1


def test_importing_a_file_again_changes_nothing(run_cli: Callable[..., Result], vault: Vault, tmp_path: Path) -> None:
    source = tmp_path / "facts.jsonl"
    source.write_text(json.dumps({"id": "m-fact-1", "body": "The API listens on port 8080."}) + "\n"
                      + json.dumps({"body": "Deploys run at noon."}) + "\n")
    first = as_json(run_cli("import", str(source), "--json"))
    assert len(first["imported"]) == 2
    again = run_cli("import", str(source))  # before: exit 1 ("id m-fact-1 is already used") and proof_count 2
    assert again.exit_code == 0 and again.stderr == ""
    assert again.stdout.strip() == "imported 0 memories, 0 merged as evidence, 2 imported before, 0 lines failed"
    memories = [e.memory for e in vault.scan().active()]
    assert sorted(m.id for m in memories) == sorted(first["imported"])
    assert all(m.proof_count == 1 for m in memories)


def test_import_from_stdin(run_cli: Callable[..., Result]) -> None:
    line = json.dumps({"title": "From stdin", "type": "fact", "body": "piped"})
    result = run_cli("import", "-", input=line + "\n")
    assert result.exit_code == 0 and "imported 1 memories" in result.stdout


def test_a_chat_export_imports_turn_by_turn(run_cli: Callable[..., Result], vault: Vault, tmp_path: Path) -> None:
    """A chat export ({role, content, ts} per line) is imported one memory per turn: who said it as a
    tag, its time, its place in the conversation; a turn with no text (a tool call) says nothing."""
    export = tmp_path / "trip chat.jsonl"
    export.write_text("\n".join(json.dumps(turn) for turn in [
        {"role": "user", "content": "I booked the Lisbon flight for May 3.", "ts": "2026-04-01T09:00:00Z"},
        {"role": "assistant", "content": "Noted: Lisbon on May 3.", "ts": "2026-04-01T09:00:05Z"},
        {"role": "assistant", "content": ""},
        {"role": "human", "content": "And the hotel is near Rossio.", "tags": ["travel"]},
        {"role": "robot", "content": "beep"},
    ]) + "\n")
    result = run_cli("import", str(export))
    assert result.exit_code == 1
    assert result.stdout.strip() == "imported 3 memories, 0 merged as evidence, 0 imported before, 1 lines failed"
    assert result.stderr.strip() == (f"error: {export}:5: key 'role' must be one of user, assistant, system, tool, "
                                     "got 'robot'")
    turns = sorted((e.memory for e in vault.scan().active()), key=lambda m: m.source)
    assert [(m.body.strip(), m.tags, m.source.rsplit("#", 1)[1]) for m in turns] == [
        ("I booked the Lisbon flight for May 3.", ("user",), "1"),
        ("Noted: Lisbon on May 3.", ("assistant",), "2"),
        ("And the hotel is near Rossio.", ("travel", "user"), "4"),
    ]
    threads = {m.source.rsplit("#", 1)[0] for m in turns}  # one conversation, named after the file
    assert len(threads) == 1 and threads.pop().startswith("conversation:trip-chat-")
    assert str(turns[0].occurred_at).startswith("2026-04-01")
    again = run_cli("import", str(export))
    assert "imported 0 memories, 0 merged as evidence, 3 imported before, 1 lines failed" in again.stdout


# ---------------------------------------------------------------- errors


def test_unknown_id_is_one_error_line(run_cli: Callable[..., Result]) -> None:
    for args in (("show", "m-nope"), ("correct", "m-nope", "x"), ("forget", "m-nope"), ("trash", "restore", "m-nope")):
        assert_one_error(run_cli(*args), "m-nope")
    assert_one_error(run_cli("show", "NOT/AN/ID"), "not a memory id")
    assert_one_error(run_cli("rollback", "m-nope"), "m-nope")


def test_malformed_file_never_stops_list(run_cli: Callable[..., Result], vault: Vault) -> None:
    good = add_id(run_cli, "Still listed")
    bad = vault.root / "memories" / "global" / "broken.md"
    bad.write_text("---\nid: m-broken\ntitle: [unclosed\ntype: fact\n---\nbody\n")
    listed = run_cli("list", "--json")
    data = as_json(listed)
    assert [m["id"] for m in data["memories"]] == [good]
    assert len(data["invalid"]) == 1 and data["invalid"][0].startswith("memories/global/broken.md:")
    human = run_cli("list")
    assert human.exit_code == 0 and good in human.stdout
    assert any(line.startswith("warning: memories/global/broken.md:") for line in human.stderr.splitlines())
    status = as_json(run_cli("status", "--json"))
    assert status["memories"] == 1 and len(status["invalid"]) == 1
    assert_one_error(run_cli("show", "m-broken"), "memories/global/broken.md:", "YAML")
    assert as_json(run_cli("show", good, "--json"))["id"] == good


def test_scope_project_without_project(run_cli: Callable[..., Result]) -> None:
    assert_one_error(run_cli("add", "Needs a project", "--scope", "project"), "--project")
    assert as_json(run_cli("list", "--json"))["memories"] == []


def test_one_off_and_forgotten_are_one_error_line(run_cli: Callable[..., Result]) -> None:
    assert_one_error(run_cli("add", "Just this once, skip the tests"), "one-off", "--force")
    assert as_json(run_cli("add", "Just this once, skip the tests", "--force", "--json"))["created"]
    memory_id = add_id(run_cli, "Private detail")
    run_cli("forget", memory_id, "--permanent")
    assert_one_error(run_cli("add", "Private detail"), "permanently forgotten")
    assert_one_error(run_cli("rollback", memory_id), memory_id)


def test_an_instruction_for_today_is_one_error_line(run_cli: Callable[..., Result]) -> None:
    assert_one_error(run_cli("add", "Today, use the staging database"), "'Today' marks a one-off", "--force")
    assert_one_error(run_cli("add", "Just for today, skip the e2e tests"), "one-off", "--force")
    assert as_json(run_cli("list", "--json"))["memories"] == []
    assert as_json(run_cli("add", "Today's date format is ISO 8601", "--json"))["created"]


def test_nothing_to_undo(run_cli: Callable[..., Result]) -> None:
    memory_id = add_id(run_cli, "Untouched")
    assert_one_error(run_cli("rollback", memory_id), "no correction, forget, superseding feedback or governance action")


def test_vault_that_is_not_a_vault(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    runner = CliRunner()
    assert_one_error(runner.invoke(cli, ["--vault", str(plain), "list"]), "no vault at", str(plain))
    assert_one_error(runner.invoke(cli, ["status", "--vault", str(plain), "--json"]), "no vault at")
    missing = tmp_path / "missing"
    assert_one_error(runner.invoke(cli, ["--vault", str(missing), "add", "x"]), "no vault at")
    assert not missing.exists()


def test_an_empty_tag_is_refused_in_one_line(run_cli: Callable[..., Result], vault: Vault) -> None:
    assert_one_error(run_cli("add", "Deploys go out on Tuesdays", "--tag", " "), "a tag is empty")
    assert not list(vault.scan().active())  # nothing stored with a tag of nothing


def test_init_refuses_non_empty_folder(tmp_path: Path) -> None:
    folder = tmp_path / "full"
    folder.mkdir()
    (folder / "a.txt").write_text("x")
    assert_one_error(CliRunner().invoke(cli, ["init", str(folder), "--no-git"]), "not empty")


def test_bad_config_is_one_error_line(run_cli: Callable[..., Result], vault: Vault) -> None:
    (vault.root / "memvault.toml").write_text("[vault]\nlock_timout = 3\n")
    assert_one_error(run_cli("list"), "memvault.toml", "lock_timout")


def test_busy_vault_exit_code(run_cli: Callable[..., Result], vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.errors import VaultBusy

    def busy(*_args: object, **_kwargs: object) -> None:
        raise VaultBusy("vault is busy: another memvault process is writing")

    monkeypatch.setattr(Vault, "add", busy)
    result = run_cli("add", "x")
    assert_one_error(result, "vault is busy")
    assert result.exit_code == 75


def test_internal_error_is_still_one_line(run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Vault, "status", broken)
    result = run_cli("status")
    assert_one_error(result, "internal error", "RuntimeError", "MEMVAULT_DEBUG")
    assert result.exit_code == 70


# ---------------------------------------------------------------- options anywhere


@pytest.mark.parametrize("place", ["before", "after", "mixed"])
def test_vault_and_json_before_or_after_the_command(vault: Vault, place: str) -> None:
    root = str(vault.root)
    runner = CliRunner()
    if place == "before":
        args = ["--vault", root, "--json", "add", "Option order"]
    elif place == "after":
        args = ["add", "Option order", "--vault", root, "--json"]
    else:
        args = ["--json", "add", "Option order", "--vault", root]
    data = as_json(runner.invoke(cli, args))
    assert data["created"] is True
    listed = as_json(runner.invoke(cli, ["trash", "list", "--vault", root, "--json"]))
    assert listed == {"trash": []}
    assert [m["id"] for m in as_json(runner.invoke(cli, ["list", "--json", "--vault", root]))["memories"]] == [
        data["id"]]


def test_env_var_selects_the_vault(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_DIR", str(vault.root))
    result = CliRunner().invoke(cli, ["--json", "status"])
    assert as_json(result)["vault"] == str(vault.root.resolve())


# ---------------------------------------------------------------- help


def walk(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from walk(command, (*prefix, name))


ALL_COMMANDS = list(walk(cli))


def test_the_command_set() -> None:
    names = {" ".join(path) for path, _ in ALL_COMMANDS}
    assert {"init", "add", "import", "show", "list", "correct", "forget", "rollback", "trash", "trash list",
            "trash restore", "trash empty", "status", "journal", "journal replay"} <= names


@pytest.mark.parametrize("path", [p for p, _ in ALL_COMMANDS], ids=lambda p: " ".join(p))
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    command = dict(ALL_COMMANDS)[path]
    assert command.get_short_help_str().strip(), f"{' '.join(path)} has no short help"
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.stdout
    if not isinstance(command, click.Group):
        options = {o for p in command.params for o in p.opts}
        assert {"--vault", "--json"} <= options, f"{' '.join(path)} lacks --vault/--json"
        for param in command.params:
            if isinstance(param, click.Option) and param.name not in ("help",):
                assert param.help, f"{' '.join(path)} {param.opts} has no help"


def test_root_help() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0 and "Commands:" in result.stdout


def test_text_from_stdin(run_cli: Callable[..., Result]) -> None:
    memory_id = as_json(run_cli("add", "-", "--json", input="Piped memory text\n"))["id"]
    corrected = as_json(run_cli("correct", memory_id, "-", "--json", input="Piped correction\n"))
    body = as_json(run_cli("show", corrected["id"], "--depth", "2", "--json"))["body"]
    assert body == "Piped correction\n"


def test_search_offers_a_strongly_matching_trashed_memory_for_revival(run_cli: Callable[..., Result]) -> None:
    memory_id = add_id(run_cli, "The staging database is reset every Sunday night at 02:00 UTC.")
    add_id(run_cli, "Code review needs two approvals before merging.")
    assert run_cli("forget", memory_id).exit_code == 0
    result = run_cli("search", "when is the staging database reset", "--explain")
    assert result.exit_code == 0
    assert memory_id not in result.stdout
    assert f"in the trash, matches strongly: {memory_id}" in result.stderr
    assert f"memvault trash restore {memory_id}" in result.stderr
    assert ">= retrieval.revive_score and evidence " in result.stderr and "clears the relevance floor" in result.stderr


def test_context_takes_the_task_as_an_argument_or_as_task(run_cli: Callable[..., Result]) -> None:
    added = run_cli("add", "Deploys go out with make release after CI passes.", "--title", "Deploys")
    assert added.exit_code == 0, added.output
    given = run_cli("context", "deploy the api", "--no-record", "--format", "json")
    named = run_cli("context", "--task", "deploy the api", "--no-record", "--format", "json")
    assert given.exit_code == named.exit_code == 0, given.output + named.output
    assert json.loads(given.stdout)["manifest"] == json.loads(named.stdout)["manifest"] != []
    missing = run_cli("context")
    assert missing.exit_code == 2 and "Missing the task: memvault context TASK (or --task TASK)" in missing.output
    both = run_cli("context", "deploy", "--task", "review")
    assert both.exit_code == 2 and "give the task once" in both.output


def test_importing_a_markdown_file_as_jsonl_says_how_notes_come_in_and_imports_nothing(
        run_cli: Callable[..., Result], tmp_path: Path) -> None:
    notes = tmp_path / "team.md"
    notes.write_text("\n# Team notes\n\n- Deploys happen on Tuesdays.\n- On-call changes on Mondays.\n",
                     encoding="utf-8")
    done = run_cli("import", str(notes))
    assert done.exit_code == 1
    lines = [line for line in done.output.splitlines() if line]
    assert lines == [f"error: {notes}:2: not JSONL (one JSON object per line, such as {{\"body\": \"...\"}}): to bring "
                     f"in the bullets and paragraphs of a markdown file as memories, run memvault import --from "
                     f"agents-md {notes}"]
    assert json.loads(run_cli("list", "--json").output)["memories"] == []
    brought = run_cli("import", "--from", "agents-md", str(notes))
    assert brought.exit_code == 0 and len(json.loads(run_cli("list", "--json").output)["memories"]) == 2
