"""`memvault maintain`, `memvault audit` and `memvault rollback --event` through click's CliRunner."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from click.testing import Result
from test_cli import as_json, assert_one_error  # the CLI suite's helpers, same folder

from vault_engine.index.fakes import HashEmbedder
from vault_engine.vault import Vault, now

RunCli = Callable[..., Result]
DEPLOY = "Deploys run from the main branch with make release."
MAINTAIN_KEYS = {"dry_run", "actions", "counts", "events", "seconds", "notice", "settled", "run"}
ACTION_KEYS = {"kind", "memory", "reason", "related", "changes", "trash", "create", "purge", "remove"}
AUDIT_KEYS = {"hot", "hot_chars", "hot_budget", "tiers", "trash", "next_expiry", "episodes_uncompacted",
              "compaction_limit", "planned", "plan", "invalid", "index", "counts", "counts_ok", "conflicts"}
ROW_KEYS = {"id", "title", "type", "nature", "age_days", "value", "chars", "protected", "plan"}


@pytest.fixture(autouse=True)
def fake_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every vault the CLI opens embeds with the bag-of-words fake (no model to load)."""
    model = HashEmbedder()
    monkeypatch.setattr(Vault, "embedder", lambda self: model)


def md(memory_id: str, title: str, body: str, **keys: Any) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", *(f"{k}: {v}" for k, v in {"type": "fact", **keys}.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def days_ago(days: float) -> str:
    return (now() - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def fill(vault: Vault) -> None:
    """A near-duplicate pair, an old hot state, a young hot state and a hot rule."""
    files = {
        "memories/global/deploys.md": md("m-old", "Deploys", DEPLOY, created=days_ago(30)),
        "memories/global/deploys-again.md": md("m-dup", "Deploys", DEPLOY[:-1] + ", always.", created=days_ago(5)),
        "memories/global/billing.md": md("m-state", "Billing", f"{days_ago(10)[:10]}: migrated the billing database.",
                                         tier="hot", created=days_ago(10)),
        "memories/global/runner.md": md("m-young", "Runner", f"{days_ago(2.5)[:10]}: upgraded the runner image.",
                                        tier="hot", created=days_ago(2.5)),
        "memories/global/ruff.md": md("m-rule", "Ruff", "Always run ruff before committing.", tier="hot",
                                      created=days_ago(300)),
    }
    for rel, text in files.items():
        (vault.root / rel).write_text(text, encoding="utf-8")


def memory_bytes(vault: Vault) -> dict[str, bytes]:
    return {p.relative_to(vault.root).as_posix(): p.read_bytes() for p in sorted(vault.root.rglob("*.md"))
            if ".memvault" not in p.parts and p.name != "INDEX.md"}


def test_maintain_dry_run_then_maintain(run_cli: RunCli, vault: Vault) -> None:
    fill(vault)
    before = memory_bytes(vault)
    dry = run_cli("maintain", "--dry-run")
    assert dry.exit_code == 0, dry.output
    lines = dry.stdout.splitlines()
    assert lines[0].startswith("merge     m-old  absorbs near-duplicate m-dup (cosine ")
    assert lines[1].startswith("retire    m-state  state memory 10 days old")
    assert lines[2] == "plan: merge 1, retire 1 (dry run: nothing changed)"
    assert len(lines) == 3
    assert memory_bytes(vault) == before
    assert list(vault.journal.events()) == []

    done = run_cli("maintain")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[:2] == dry.stdout.splitlines()[:2]
    assert lines[2].startswith("done: merge 1, retire 1 in ") and lines[2].endswith(
        " s (undo any one: memvault rollback ID)")
    assert vault.scan().get("m-dup").path == "trash/deploys-again.md"
    assert vault.scan().get("m-state").memory.tier == "cold"

    again = run_cli("maintain")
    assert again.exit_code == 0
    assert again.stdout.startswith("done: nothing to do (nothing changed since the last run that left nothing "
                                   "to do) in ") and "rollback" not in again.stdout
    replanned = run_cli("maintain", "--replan")
    assert replanned.exit_code == 0 and replanned.stdout.startswith("done: nothing to do in ")
    replayed = run_cli("journal", "replay")
    assert replayed.exit_code == 0 and "found 0 differences" in replayed.stdout


def test_maintain_json(run_cli: RunCli, vault: Vault) -> None:
    fill(vault)
    dry = as_json(run_cli("maintain", "--dry-run", "--json"))
    assert set(dry) == MAINTAIN_KEYS
    assert dry["dry_run"] is True and dry["events"] == [] and dry["counts"] == {"merge": 1, "retire": 1}
    data = as_json(run_cli("--json", "maintain"))
    assert set(data) == MAINTAIN_KEYS and data["dry_run"] is False and data["notice"] is None
    assert data["counts"] == {"merge": 1, "retire": 1} and isinstance(data["seconds"], float)
    assert [set(a) for a in data["actions"]] == [ACTION_KEYS, ACTION_KEYS]
    merge = data["actions"][0]
    assert (merge["kind"], merge["memory"], merge["trash"], merge["related"]) == ("merge", "m-old", ["m-dup"],
                                                                                 ["m-dup"])
    assert merge["changes"]["m-old"]["after"]["proof_count"] == 2
    assert merge["changes"]["m-dup"] == {"before": {"merged_into": None}, "after": {"merged_into": "m-old"}}
    assert len(data["events"]) == 2 and all(e.startswith("e-") for e in data["events"])
    assert [e.id for e in vault.journal.events() if e.kind == "govern"] == data["events"]


def test_audit_human_and_json(run_cli: RunCli, vault: Vault) -> None:
    fill(vault)
    assert run_cli("sync").exit_code == 0
    result = run_cli("audit")
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    rows = {line.split()[0]: line for line in out if line.startswith("  m-")}
    assert set(rows) == {"m-state", "m-young", "m-rule"}
    assert "-> move now (state memory 10 days old (states retire after 7 days))" in rows["m-state"]
    assert "fact/state" in rows["m-state"] and " 10 d " in rows["m-state"]
    assert "-> move in 5 days  Runner" in rows["m-young"]
    assert "-> keep  Ruff" in rows["m-rule"] and "fact/rule" in rows["m-rule"]
    assert out[0].startswith("hot tier: ") and out[0].endswith(" / 5000 characters (3%), 3 memories")
    assert "tiers: cold 2, hot 3; trash 0" in out
    assert "maintain would: merge 1, retire 1" in out
    assert "index counts: catalog 5, vectors 5, files 5 (ok)" in out
    assert "invalid files: 0" in out

    data = as_json(run_cli("audit", "--json"))
    assert set(data) == AUDIT_KEYS
    assert all(set(row) == ROW_KEYS for row in data["hot"])
    plans = {row["id"]: row["plan"] for row in data["hot"]}
    assert plans["m-young"] == "move in 5 days" and plans["m-rule"] == "keep"
    assert plans["m-state"].startswith("move now (")
    assert data["planned"] == {"merge": 1, "retire": 1}
    assert data["counts"] == {"catalog": 5, "vectors": 5, "files": 5} and data["counts_ok"] is True
    assert data["hot_budget"] == 5000 and data["hot_chars"] == sum(row["chars"] for row in data["hot"])


def test_audit_reports_missing_indexes_and_invalid_files(run_cli: RunCli, vault: Vault) -> None:
    (vault.root / "memories/global/broken.md").write_text("---\nid: m-broken\n---\nNo title.\n", encoding="utf-8")
    (vault.root / "memories/global/ok.md").write_text(md("m-ok", "Ok", "Fine."), encoding="utf-8")
    result = run_cli("audit")
    assert result.exit_code == 0, result.output
    assert "index counts: catalog -, vectors -, files 1 (MISMATCH: run memvault sync)" in result.stdout
    assert "invalid files: 1" in result.stdout
    assert "memories/global/broken.md" in result.stdout and "missing required key 'title'" in result.stdout
    assert not (vault.root / ".memvault" / "catalog.sqlite").exists()  # audit writes nothing


def test_rollback_event_and_its_errors(run_cli: RunCli, vault: Vault) -> None:
    fill(vault)
    data = as_json(run_cli("maintain", "--json"))
    merge_event = data["events"][0]
    result = run_cli("rollback", "--event", merge_event)
    assert result.exit_code == 0, result.output
    line = result.stdout.splitlines()[0]
    assert line.startswith("undid merge of m-old (also m-dup)")
    assert vault.scan().get("m-dup").path == "memories/global/deploys-again.md"
    assert vault.scan().get("m-old").memory.proof_count == 1

    assert_one_error(run_cli("rollback", "--event", merge_event), "already rolled back")
    assert_one_error(run_cli("rollback", "--event", "e-01nosuchevent0000000000000"), "no journal event")
    usage = run_cli("rollback")
    assert_one_error(usage, "name a memory ID or give --event EVENT")
    assert usage.exit_code == 2

    again = as_json(run_cli("maintain", "--json"))
    assert "merge" not in again["counts"]  # the rolled-back merge is not planned again


def test_rollback_of_a_purge_is_one_error_line(run_cli: RunCli, vault: Vault) -> None:
    (vault.root / "trash/old.md").write_text(md("m-gone", "Old", "Gone for good.", trashed_at=days_ago(40),
                                                expires_at=days_ago(10)), encoding="utf-8")
    data = as_json(run_cli("maintain", "--json"))
    assert data["counts"] == {"expire": 1}
    assert_one_error(run_cli("rollback", "--event", data["events"][0]), "cannot be rolled back")
    assert_one_error(run_cli("rollback", "m-gone"), "deleted for good")


# ---------------------------------------------------------------- undo sticks, and undoes a whole run


def test_trash_restore_of_a_stale_note_sticks(run_cli: RunCli) -> None:
    note = as_json(run_cli("add", "Flaky login test: obsolete", "--authority", "inferred", "--json"))["id"]
    first = as_json(run_cli("maintain", "--json"))
    assert [(a["kind"], a["memory"]) for a in first["actions"]] == [("stale", note)]
    assert as_json(run_cli("trash", "restore", note, "--json"))["action"] == "restored"
    again = as_json(run_cli("maintain", "--replan", "--json"))
    assert [a for a in again["actions"] if a["memory"] == note] == []  # not trashed again for the same reason
    assert as_json(run_cli("show", note, "--depth", "0", "--json"))["trashed"] is False


def test_rollback_run_undoes_a_whole_maintain_run(run_cli: RunCli, vault: Vault) -> None:
    fill(vault)
    before = memory_bytes(vault)
    note = as_json(run_cli("add", "Flaky login test: obsolete", "--authority", "inferred", "--json"))["id"]
    with_note = memory_bytes(vault)
    human = run_cli("maintain")
    assert human.exit_code == 0, human.output
    run = human.stdout.strip().splitlines()[-1].split()[1]
    undone_order = [tuple(line.split()[:2]) for line in reversed(human.stdout.splitlines()[:-2])]
    assert run.startswith("r-") and f"memvault rollback --run {run}" in human.stdout
    assert memory_bytes(vault) != with_note
    report = as_json(run_cli("rollback", "--run", run, "--json"))
    assert report["run"] == run and report["kept"] == [] and len(report["undone"]) >= 3
    assert as_json(run_cli("journal", "replay", "--json"))["differences"] == []  # the journal tells the same
    assert [(s["kind"], s["memory"]) for s in report["undone"]] == undone_order
    after = memory_bytes(vault)
    assert set(after) == set(with_note)  # every file back where it was, the stale note out of the trash
    for rel, content in before.items():
        assert after[rel].split(b"\n---\n", 1)[1] == content.split(b"\n---\n", 1)[1], rel  # bodies untouched
    again = run_cli("rollback", "--run", run)
    assert again.exit_code == 0 and "0 undone" in again.stdout and "rolled back before" in again.stdout
    replanned = as_json(run_cli("maintain", "--replan", "--json"))
    assert not {(a["kind"], a["memory"]) for a in replanned["actions"]} & set(undone_order)  # each one vetoed
    assert_one_error(run_cli("rollback", "--run", "r-unknown"), "no maintain run r-unknown")
    usage = run_cli("rollback", note, "--run", run)
    assert usage.exit_code == 2 and "--run" in usage.stderr


def test_rollback_run_reports_what_cannot_be_undone(run_cli: RunCli, vault: Vault) -> None:
    old = as_json(run_cli("add", "Old scratch note: obsolete", "--authority", "inferred", "--json"))["id"]
    as_json(run_cli("maintain", "--json"))  # the note goes to the trash
    trashed = next(vault.root.glob("trash/*.md"))
    text = trashed.read_text(encoding="utf-8")
    trashed.write_text(text.replace("expires_at:", "expires_at: 2020-01-01T00:00:00Z\nold_expires_at:"),
                       encoding="utf-8")
    ruff = as_json(run_cli("add", "Ruff checks: obsolete", "--authority", "inferred", "--json"))["id"]
    result = run_cli("maintain")
    run = result.stdout.strip().splitlines()[-1].split()[1]
    undo = run_cli("rollback", "--run", run)
    assert undo.exit_code == 1
    assert f"kept  expire    {old}" in undo.stdout and "purged expired trash for good" in undo.stdout
    assert f"undid stale     {ruff}" in undo.stdout and "1 undone, 1 could not be undone" in undo.stdout
