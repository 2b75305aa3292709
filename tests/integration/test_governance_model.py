"""maintain on real files with a language model: compression, retyping, stubs, stale notes; undo, offline,
a failing model, the journal's scrub and the settled schedule."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from vault_engine.context.director import TaskRequest, build
from vault_engine.errors import LlmUnavailable
from vault_engine.governance.actions import EXTRA_KEYS, GOVERNED, field_value
from vault_engine.governance.classify import COMPRESSED_FROM, ORIGINAL_OF, STUB_OF, resident_chars
from vault_engine.governance.maintain import maintain
from vault_engine.index.fakes import HashEmbedder
from vault_engine.journal import Event
from vault_engine.llm.base import Synthesis
from vault_engine.llm.fakes import UnreachableLlm, UnusedLlm
from vault_engine.llm.offline import OfflineLlm
from vault_engine.vault import Vault

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
RULE = ("When you write commit messages for this repository, always make sure that the subject line is "
        "written in the imperative mood and kept under 72 characters, and remember that the body should "
        "explain why the change was made rather than what it changed, because the diff already shows that.")
SHORT = "Commit messages: imperative subject line under 72 characters; the body should explain why the change was made."
WIP = ("The billing migration to Postgres 16 is in progress: invoices and payments tables are copied, "
       "the reports schema remains.")
DORMANT = {
    "m-vpn": ("Legacy VPN", "Use the legacy VPN to reach the old warehouse inventory host by ssh on port 2222. "
              "The host refuses keys older than the 2024 rotation, so ask for a fresh one before connecting."),
    "m-fax": ("Fax gateway", "Send supplier orders through the fax gateway; the supplier portal rejects them. "
              "Orders above ten thousand euros also need the signed cover sheet from procurement."),
    "m-ldap": ("LDAP sync", "Run the LDAP sync by hand after adding a contractor account to the directory. "
               "The nightly job skips contractor accounts, and their badges stay inactive until it runs."),
}
TASKS = ["Fix the signup form validation", "Add a dark mode toggle to settings"]


def md(memory_id: str, title: str, body: str, **keys: Any) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", *(f"{k}: {v}" for k, v in {"type": "fact", **keys}.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


def at(days: float) -> str:
    return (NOW + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


class Scripted(UnusedLlm):
    """Compresses RULE to SHORT, finds every rule dormant and every note stale; counts the questions."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @property
    def name(self) -> str:
        return "model-g"

    def compress(self, text: str) -> str:
        self.calls.append("compress")
        return SHORT if text == RULE else text

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool:
        self.calls.append("dormant")
        assert list(recent_tasks) == TASKS[::-1]  # newest first
        return True

    def stale(self, text: str) -> bool:
        self.calls.append("stale")
        return True

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis:
        return Synthesis("Overview", "What they say together.")


def files(*, budget: int = 5000) -> dict[str, str]:
    out = {
        "memories/global/commits.md": md("m-rule", "Commit messages", RULE, type="collaboration-policy",
                                         tier="hot", created=at(-40)),
        "memories/global/billing-done.md": md(
            "m-done", "Billing migration", "2026-01-05: migrated the billing database to Postgres 16 and removed "
            "the old replicas.", type="procedure", tier="hot", created=at(-140)),
        "memories/global/jenkins.md": md("m-jenkins", "Jenkins", "The Jenkins server is obsolete.", created=at(-2)),
        "memories/global/wip.md": md("m-wip", "Billing migration status", WIP, created=at(-45)),
        "memories/global/core.md": md("m-core", "Red lines", "Never force-push to main. " * 12, tier="hot",
                                      importance=0.95, type="collaboration-policy", created=at(-300)),
    }
    for memory_id, (title, text) in DORMANT.items():
        out[f"memories/global/{memory_id[2:]}.md"] = md(memory_id, title, text, type="collaboration-policy",
                                                         tier="hot", created=at(-60))
    if budget != 5000:
        out["memvault.toml"] = f"[tiers]\nhot_budget_chars = {budget}\n"
    return out


def make(make_vault: Callable[..., Vault], *, pressed: bool = False, tasks: bool = True) -> Vault:
    budget = 5000
    if pressed:  # the budget that puts the hot tier at 85% once the rule is compressed and the state gone
        probe = Vault(make_vault(files()).root)
        hot = {i: resident_chars(e.memory) for i, e in probe.scan().entries.items() if e.memory.tier == "hot"}
        budget = int((sum(hot.values()) - hot["m-done"] - (len(RULE) - len(SHORT))) / 0.85)
    vault = Vault(make_vault(files(budget=budget)).root, embedder=HashEmbedder())
    if tasks:
        vault.journal.append([Event("application", "m-core", {"task": task, "ids": ["m-core"]}, ts=at(-10 + n))
                              for n, task in enumerate(TASKS)])
    return vault


def kinds(report: Any) -> list[tuple[str, str]]:
    return [(a.kind, a.memory) for a in report.actions]


def test_maintain_with_a_model_cleans_retypes_compresses_and_stubs_then_asks_nothing_again(
        make_vault: Callable[..., Vault]) -> None:
    vault = make(make_vault, pressed=True)
    llm = Scripted()
    vault._llm = llm  # the vault's model (Vault.maintain passes it on)
    report = vault.maintain(now=NOW)
    assert kinds(report)[:4] == [("stale", "m-jenkins"), ("stale", "m-wip"), ("retype", "m-done"),
                                 ("compress", "m-rule")]
    assert sorted(kinds(report)[4:]) == [("stub", "m-fax"), ("stub", "m-ldap"), ("stub", "m-vpn")]
    assert sorted(llm.calls) == ["compress", "dormant", "dormant", "dormant", "stale"]
    scan = vault.scan()
    assert scan.get("m-jenkins").path.startswith("trash/") and scan.get("m-wip").path.startswith("trash/")
    done = scan.get("m-done").memory
    assert (done.tier, done.extra["nature"]) == ("cold", "state")
    # The rule is shorter; its original text is a cold memory, linked both ways.
    rule = scan.get("m-rule").memory
    copy = scan.get(rule.extra[COMPRESSED_FROM]).memory
    assert rule.body == SHORT + "\n" and rule.tier == "hot" and copy.id in rule.links
    assert (copy.body, copy.tier, copy.extra[ORIGINAL_OF], copy.links) == (RULE + "\n", "cold", "m-rule", ("m-rule",))
    # Each dormant rule is cold and whole; a stub of at most 40 characters points to it.
    stubs = {str(e.memory.extra[STUB_OF]): e.memory for e in scan.entries.values() if STUB_OF in e.memory.extra}
    assert sorted(stubs) == sorted(DORMANT)
    for memory_id, (_, text) in DORMANT.items():
        assert scan.get(memory_id).memory.tier == "cold" and scan.get(memory_id).memory.body == text + "\n"
        assert stubs[memory_id].tier == "hot" and resident_chars(stubs[memory_id]) <= 40
        assert stubs[memory_id].body == f"→ {memory_id}\n"
    assert scan.get("m-core").memory.tier == "hot"  # protected
    # Context shows the stub, which names the rule to open.
    vault.sync()
    manifest = build(vault, TaskRequest("Rotate the staging keys"), record=False)
    resident = {item.id: item.text for item in manifest.resident}
    assert resident[stubs["m-vpn"].id].strip() == "→ m-vpn" and "m-vpn" not in resident
    # Idempotent: nothing left to do, and the model is asked nothing (its answers are remembered).
    again = Scripted()
    assert maintain(vault, now=NOW, replan=True, llm=again).actions == [] and again.calls == []
    assert maintain(vault, now=NOW, llm=again).settled


def test_rolling_back_a_compression_and_a_stub_restores_the_rules(make_vault: Callable[..., Vault]) -> None:
    vault = make(make_vault, pressed=True)
    rule_file = (vault.root / "memories/global/commits.md").read_text(encoding="utf-8")
    report = maintain(vault, now=NOW, llm=Scripted())
    events = dict(zip(kinds(report), report.events, strict=True))
    copy_id = vault.scan().get("m-rule").memory.extra[COMPRESSED_FROM]
    stub_id = next(e.memory.id for e in vault.scan().entries.values() if e.memory.extra.get(STUB_OF) == "m-vpn")
    assert vault.rollback(event_id=events[("compress", "m-rule")]).action == "undid compress"
    assert vault.rollback(event_id=events[("stub", "m-vpn")]).action == "undid stub"
    scan = vault.scan()
    rule = scan.get("m-rule").memory
    assert rule.body == RULE + "\n" and COMPRESSED_FROM not in rule.extra and rule.links == ()
    assert RULE in rule_file and scan.get(copy_id).path.startswith("trash/")
    assert scan.get("m-vpn").memory.tier == "hot" and scan.get(stub_id).path.startswith("trash/")
    # Neither is planned again, and the model is not asked about them.
    again = Scripted()
    assert ("compress", "m-rule") not in kinds(maintain(vault, now=NOW, llm=again)) and "compress" not in again.calls
    assert vault.replay_diff() == []


def test_offline_nothing_is_compressed_or_stubbed_and_long_notes_are_kept(make_vault: Callable[..., Vault]) -> None:
    vault = make(make_vault, pressed=True)
    report = maintain(vault, now=NOW, llm=OfflineLlm())
    assert {a.kind for a in report.actions} <= {"stale", "retype", "overflow"}
    assert ("stale", "m-jenkins") in kinds(report) and ("stale", "m-wip") not in kinds(report)
    assert ("retype", "m-done") in kinds(report)
    scan = vault.scan()
    assert scan.get("m-rule").memory.body == RULE + "\n" and not scan.get("m-wip").path.startswith("trash/")
    assert not [e for e in scan.entries.values() if STUB_OF in e.memory.extra]
    assert maintain(vault, now=NOW, llm=OfflineLlm()).settled  # nothing failed: the run settles


def test_a_failing_model_trashes_in_progress_notes_and_is_asked_again_next_run(
        make_vault: Callable[..., Vault]) -> None:
    vault = make(make_vault)
    report = maintain(vault, now=NOW, llm=UnreachableLlm())
    [stale] = [a for a in report.actions if a.memory == "m-wip"]
    assert stale.kind == "stale" and "could not be asked" in stale.reason
    assert vault.scan().get("m-wip").path.startswith("trash/")
    assert vault.scan().get("m-rule").memory.body == RULE + "\n"  # no compression without an answer
    llm = Scripted()
    later = maintain(vault, now=NOW + timedelta(hours=1), llm=llm)  # not settled: planned and asked again
    assert not later.settled and ("compress", "m-rule") in kinds(later) and "compress" in llm.calls
    assert vault.restore("m-wip").id == "m-wip"  # the trash gives it back


def test_a_permanent_forget_scrubs_a_compressed_rules_text_from_the_journal(make_vault: Callable[..., Vault]) -> None:
    vault = make(make_vault)
    maintain(vault, now=NOW, llm=Scripted())
    journal = "".join(p.read_text(encoding="utf-8") for p in vault.journal.files())
    assert "rather than what it changed" in journal and "imperative subject line under 72" in journal
    vault.forget("m-rule", permanent=True)
    journal = "".join(p.read_text(encoding="utf-8") for p in vault.journal.files())
    assert "rather than what it changed" not in journal and "imperative subject line under 72" not in journal


def test_the_clock_makes_a_compression_due_on_a_settled_vault(make_vault: Callable[..., Vault]) -> None:
    files_young = files()
    files_young["memories/global/commits.md"] = md("m-rule", "Commit messages", RULE, type="collaboration-policy",
                                                   tier="hot", created=at(-20))
    vault = Vault(make_vault(files_young).root, embedder=HashEmbedder())
    llm = Scripted()
    maintain(vault, now=NOW, llm=llm)
    assert maintain(vault, now=NOW + timedelta(days=9), llm=llm).settled
    due = maintain(vault, now=NOW + timedelta(days=11), llm=llm)
    assert not due.settled and ("compress", "m-rule") in kinds(due)


def test_an_unsure_or_failing_compression_leaves_the_rule(make_vault: Callable[..., Vault]) -> None:
    class Failing(Scripted):
        def compress(self, text: str) -> str:
            raise LlmUnavailable("overloaded")

    vault = make(make_vault)
    before = (vault.root / "memories/global/commits.md").read_bytes()
    report = maintain(vault, now=NOW, llm=Failing())
    assert "compress" not in {a.kind for a in report.actions}
    assert (vault.root / "memories/global/commits.md").read_bytes() == before


def test_rolling_back_a_stale_trash_and_a_retype_restores_them_for_good(make_vault: Callable[..., Vault]) -> None:
    vault = make(make_vault)
    def state(memory_id: str) -> tuple[str, dict[str, Any]]:
        entry = vault.scan().get(memory_id)
        return entry.path, {k: field_value(entry.memory, k) for k in sorted(GOVERNED | EXTRA_KEYS)}

    before = {i: state(i) for i in ("m-jenkins", "m-wip", "m-done")}
    report = maintain(vault, now=NOW, llm=Scripted())
    events = dict(zip(kinds(report), report.events, strict=True))
    for key in (("stale", "m-jenkins"), ("stale", "m-wip"), ("retype", "m-done")):
        assert vault.rollback(event_id=events[key]).action == f"undid {key[0]}"
    assert {i: state(i) for i in before} == before
    llm = Scripted()
    again = maintain(vault, now=NOW, llm=llm)
    assert not {("stale", "m-jenkins"), ("stale", "m-wip"), ("retype", "m-done")} & set(kinds(again))
    assert "stale" not in llm.calls and vault.replay_diff() == []
