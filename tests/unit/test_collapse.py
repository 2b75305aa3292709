"""Which hits fold and which sit side by side: the statement rule and the collapse stage, with fake vectors."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
import pytest

from vault_engine.retrieval.collapse import collapse, conflicts, statement
from vault_engine.retrieval.request import Hit
from vault_engine.retrieval.statements import differing_values, same_statement, statement_of

NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj")
TTL = "CDN cache TTL for static assets is {} seconds."


def factory(n: int) -> str:
    name = NAMES[n - 1]
    return (f"Test factory make_user_{n} builds a user named {name}{n} with the email {name.lower()}{n}@example.com, "
            "the role tester and an active account.")


def same(a: str, b: str, *, same_text: bool = False) -> bool:
    return same_statement(statement_of(a), statement_of(b), same_text=same_text)


def values(a: str, b: str) -> list[tuple[str, str]] | None:
    return differing_values(statement_of(a), statement_of(b))


# ---------------------------------------------------------------- the rule


@pytest.mark.parametrize(("a", "b"), [
    ("The payment webhook retries three times with exponential backoff.",
     "the payment webhook retries three times, with exponential backoff"),
    ("The payment webhook retries three times with exponential backoff.",
     "The payment webhook retries 3 times using exponential backoff."),  # a number word is its digits
    ("Deploys go through the release pipeline on Tuesdays.", "deploys go through the release pipeline on tuesdays"),
    ("Always run   the linter before committing code!", "ALWAYS run the linter before committing code."),
    ("Deploys go through the release pipeline on Tuesdays.",
     "Deployments go through the release pipeline every Tuesday."),  # inflected, one word more
])
def test_the_same_statement_differently_written_is_one(a: str, b: str) -> None:
    assert same(a, b)


@pytest.mark.parametrize(("a", "b"), [
    (factory(1), factory(2)),  # identifiers, names and addresses differ
    (TTL.format(600), TTL.format(3600)),  # a number
    ("Staging runs Postgres 15.", "Staging runs Postgres 16."),  # a version
    ("The fixtures live in tests/factories.py.", "The fixtures live in tests/fixtures.py."),  # a path
    ("Format code with 'black' before committing.", "Format code with 'ruff' before committing."),  # quoted
    ("The on-call lead this week is Alice.", "The on-call lead this week is Bob."),  # a name
    ("Alice prefers tabs in every Python file of the repo.", "Bob prefers tabs in every Python file of the repo."),
    ("The release was cut on 2024-05-01.", "The release was cut on 2024-06-01."),  # a date
    ("Deploys run on Fridays.", "Deploys never run on Fridays."),  # a negation
    ("Use tabs for indentation in Python files.", "Use spaces for indentation in Python files."),  # other words
])
def test_texts_that_differ_in_a_value_are_distinct(a: str, b: str) -> None:
    assert not same(a, b)


def test_the_same_text_may_carry_titles_worded_otherwise_but_not_other_values() -> None:
    body = "The payment webhook retries three times with exponential backoff."
    assert same(f"Webhook retries\n{body}", f"Retry policy of the webhook\n{body}", same_text=True)
    assert not same(f"Webhook retries on Mondays\n{body}", f"Webhook retries\n{body}", same_text=True)


def test_differing_values_are_named_with_their_unit() -> None:
    assert values(TTL.format(600), TTL.format(3600)) == [("600 seconds", "3600 seconds")]
    assert values("The on-call lead this week is Alice.", "The on-call lead this week is Bob.") == [("Alice", "Bob")]
    assert values("Format code with 'black' first.", "Format code with 'ruff' first.") == [("black", "ruff")]


@pytest.mark.parametrize(("a", "b"), [
    (factory(1), factory(2)),  # other identifiers: other things, not a conflict
    ("Deploys run on Fridays at 5.", "Deploys never run on Fridays at 6."),  # a negation too
    ("The cache TTL is 600 seconds for images.", "The cache TTL is 3600 seconds for scripts."),  # other words too
    ("The cache TTL is 600 seconds.", "The cache TTL is 600 seconds, or 3600 seconds at night."),  # added words
    ("TTL 600", "The CDN cache of the static assets keeps them for 3600 seconds."),  # too little in common
    (TTL.format(600), TTL.format(600)),  # nothing differs
])
def test_not_a_conflict(a: str, b: str) -> None:
    assert values(a, b) is None


# ---------------------------------------------------------------- the stage


def make(memory_id: str, text: str, score: float, *, updated: datetime | None = None, dup_key: str = "",
         title: str | None = None, scope: str = "global", project: str = "", trust: str = "learned") -> Hit:
    return Hit(id=memory_id, title=title if title is not None else text.rstrip("."), path=f"{memory_id}.md",
               score=score, summary=text, trigger="", type="fact", scope=scope, project=project, trust=trust,
               lifecycle="proven", updated=updated, dup_key=dup_key)


def vectors(*groups: list[str]) -> dict[str, npt.NDArray[np.float32]]:
    """One unit vector per group: hits of a group are at cosine 1, of different groups at 0."""
    out = {}
    for n, ids in enumerate(groups):
        vector = np.zeros(8, dtype=np.float32)
        vector[n] = 1.0
        out.update({memory_id: vector for memory_id in ids})
    return out


def run(hits: list[Hit], vecs: dict[str, npt.NDArray[np.float32]], limit: int = 50,
        threshold: float = 0.95) -> list[Hit]:
    return collapse(hits, limit, threshold, lambda memory_id, lane: vecs.get(memory_id) if lane == "summary" else None)


def test_twelve_template_memories_at_cosine_one_are_all_kept() -> None:
    hits = [make(f"m-{n:02d}", factory(n), 2.0 - n / 100) for n in range(1, 13)]
    out = run(hits, vectors([h.id for h in hits]))
    assert [h.id for h in out] == [h.id for h in hits]
    assert all(not h.duplicates and not h.conflicts for h in out)


def test_true_duplicates_fold_into_the_current_one_in_the_best_place() -> None:
    old, new = datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
    hits = [
        make("m-a", "deploys go through the release pipeline on tuesdays", 2.0, updated=old),
        make("m-b", "Something else entirely about invoices.", 1.5, updated=old),
        make("m-c", "Deploys go through the release pipeline on Tuesdays.", 1.2, updated=new),
    ]
    out = run(hits, vectors(["m-a", "m-c"], ["m-b"]))
    assert [h.id for h in out] == ["m-c", "m-b"]
    shown = out[0]
    assert shown.duplicates == ["m-a"] and shown.score == 2.0
    assert "near-duplicates folded in: m-a" in shown.why
    assert any(w.startswith("the current version of its duplicates") and "m-a" in w for w in shown.why)


def test_a_newer_learned_copy_never_stands_in_for_a_system_memory_that_scored_higher() -> None:
    old, new = datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
    hits = [make("m-system", "Deploys go through the release pipeline on Tuesdays.", 2.0, updated=old, trust="system"),
            make("m-learned", "deploys go through the release pipeline on tuesdays", 1.5, updated=new)]
    out = run(hits, vectors(["m-system", "m-learned"]))
    assert [h.id for h in out] == ["m-system"]
    assert out[0].duplicates == ["m-learned"] and out[0].score == 2.0
    assert not any("in the place of" in w for w in out[0].why)


def test_the_most_trusted_duplicate_takes_the_place_of_a_better_scored_external_copy() -> None:
    old, new = datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC)
    hits = [make("m-external", "Use pnpm for installs.", 2.0, updated=new, dup_key="k", trust="external"),
            make("m-newer", "use pnpm for installs", 1.2, updated=new, dup_key="k"),
            make("m-learned", "Use pnpm for installs!", 1.4, updated=old, dup_key="k"),
            make("m-other", "Invoices go out monthly.", 1.0)]
    out = run(hits, vectors(["m-external", "m-learned", "m-newer"], ["m-other"]))
    # Learned over external; of the two learned ones the current one (updated last), in the best one's place.
    assert [h.id for h in out] == ["m-newer", "m-other"]
    shown = out[0]
    assert shown.score == 2.0 and shown.duplicates == ["m-external", "m-learned"]
    assert any(w.startswith("the most trusted of its duplicates (learned, over external): shown in the place of "
                            "m-external") for w in shown.why)


def test_a_tie_in_time_keeps_the_best_and_the_same_digest_folds_without_vectors() -> None:
    when = datetime(2026, 1, 1)  # naive moments read as UTC
    hits = [make("m-a", "Use pnpm for installs.", 2.0, updated=when, dup_key="k"),
            make("m-b", "use pnpm for installs.", 1.0, updated=when.replace(tzinfo=UTC), dup_key="k"),
            make("m-c", "Use pnpm for installs!", 0.5, updated=None, dup_key="k")]
    out = run(hits, {}, threshold=1.0)
    assert [h.id for h in out] == ["m-a"] and out[0].duplicates == ["m-b", "m-c"] and out[0].score == 2.0


def test_the_same_digest_with_titles_naming_other_values_stays_apart() -> None:
    hits = [make("m-a", "Deploys go through the release pipeline on Tuesdays.", 2.0, dup_key="k",
                 title="Deploys go through the release pipeline on Mondays"),
            make("m-b", "deploys go through the release pipeline on tuesdays.", 1.0, dup_key="k")]
    assert [h.id for h in run(hits, vectors(["m-a", "m-b"]))] == ["m-a", "m-b"]


def test_conflicting_values_sit_side_by_side_and_name_each_other() -> None:
    hits = [make("m-600", TTL.format(600), 2.0), make("m-x", "Invoices go out monthly.", 1.8),
            make("m-y", "The linter runs in CI.", 1.5), make("m-3600", TTL.format(3600), 1.0)]
    out = run(hits, vectors(["m-600", "m-3600"], ["m-x"], ["m-y"]))
    assert [h.id for h in out] == ["m-600", "m-3600", "m-x", "m-y"]
    high, low = out[0], out[1]
    assert high.conflicts == ["m-3600"] and low.conflicts == ["m-600"]
    assert "states a different value than m-3600: 600 seconds vs 3600 seconds" in high.why
    assert "states a different value than m-600: 3600 seconds vs 600 seconds" in low.why
    assert high.to_json()["conflicts"] == ["m-3600"] and not high.duplicates
    assert low.score == 1.0  # moved up, not re-scored


def test_conflicts_hold_within_one_scope_and_project() -> None:
    hits = [make("m-api", TTL.format(600), 2.0, scope="project", project="api"),
            make("m-web", TTL.format(3600), 1.0, scope="project", project="web")]
    out = run(hits, {})
    assert [h.id for h in out] == ["m-api", "m-web"] and not out[0].conflicts


@pytest.mark.parametrize(("a", "b"), [
    ("Customer 1042 is on the gold plan.", "Customer 2077 is on the gold plan."),
    ("Ticket 42 is assigned to Bob.", "Ticket 57 is assigned to Bob."),
    ("Order #1042 shipped on Monday.", "Order #2077 shipped on Monday."),
])
def test_values_naming_which_thing_make_two_facts_not_a_conflict(a: str, b: str) -> None:
    assert values(a, b)  # the words alone differ only in a value ...
    hits = [make("m-a", a, 2.0), make("m-b", b, 1.0)]
    out = run(hits, vectors(["m-a"], ["m-b"]))
    assert [h.id for h in out] == ["m-a", "m-b"] and not out[0].conflicts and not out[1].conflicts  # ... of whom


def test_hits_without_duplicates_or_conflicts_keep_their_order_and_the_limit_holds() -> None:
    texts = ["Invoices go out monthly.", "The linter runs in CI.", "Backups run nightly at two.",
             "Staging mirrors production data weekly.", "Alerts page the on-call engineer."]
    hits = [make(f"m-{n}", text, 2.0 - n / 10) for n, text in enumerate(texts)]
    out = run(hits, vectors(*[[h.id] for h in hits]), limit=3)
    assert out == hits[:3]
    assert all(h.why == [] for h in out)


def test_only_pairs_sharing_a_rare_word_are_compared_and_none_is_missed() -> None:
    """The prefix filter finds every conflicting pair a comparison of all pairs finds."""
    rng = random.Random(7)
    subjects = ["CDN cache TTL", "Session timeout", "Upload size limit", "Retry count", "Worker pool size"]
    hits = []
    for n in range(60):
        subject = rng.choice(subjects)
        tail = rng.choice(["", " for static assets", " in staging", " for the api"])
        hits.append(make(f"m-{n:02d}", f"{subject}{tail} is {rng.choice([5, 10, 600, 3600])} seconds.", 1.0))
    statements = [statement(h) for h in hits]
    brute = {(i, j) for i, j in itertools.combinations(range(len(hits)), 2)
             if differing_values(statements[i], statements[j])}
    assert brute and {(i, j) for i, j, _ in conflicts(hits)} == brute
