"""Whether two statements are about the same thing: identifiers in the subject make distinct facts."""

from __future__ import annotations

import pytest

from vault_engine.retrieval.restatements import compare_texts, main_verb
from vault_engine.retrieval.statements import statement_of

DISTINCT = [  # (older, newer, the reason's words)
    ("Customer 1042 is on the Enterprise plan.", "Customer 2077 is on the Enterprise plan.",
     "different customers (1042, 2077)"),
    ("Server rack 3 is in room B12.", "Server rack 4 is in room B12.", "different racks (3, 4)"),
    ("Ticket ABC-12 is assigned to the web team.", "Ticket ABC-13 is assigned to the web team.",
     "different tickets (ABC-12, ABC-13)"),
    ("Python 3.11 reaches end of life in October 2027.", "Python 3.12 reaches end of life in October 2027.",
     "different versions (3.11, 3.12)"),
    ("Python 3.11 is used by service A.", "Python 3.11 is used by service B.", "different services (A, B)"),
    ("The meeting room 4.12 has a projector.", "The meeting room 4.15 has a projector.",
     "different rooms (4.12, 4.15)"),  # a dotted number a plain word names is no version
    ("The runbook section 2.4 covers the dashboards.", "The runbook section 2.5 covers the dashboards.",
     "different sections (2.4, 2.5)"),
    ("db1.internal hosts the billing database.", "db2.internal hosts the billing database.",
     "different hosts (db1.internal, db2.internal)"),
    ("The billing service listens on port 8080.", "The search service listens on port 9090.",
     "different services (billing, search)"),
    ("Important rule number 3: the service 3 must always log errors to sentry.",
     "Important rule number 4: the service 4 must always log errors to sentry.", "different rules (3, 4)"),
    ("Alice owns checkout.", "Bob owns checkout.", "(Alice, Bob)"),
    ("The 2026-03-01 release shipped the new checkout.", "The 2026-04-01 release shipped the new checkout.",
     "different releases (2026-03-01, 2026-04-01)"),
    ("Atlas v3 keeps its logs in kafka.", "Orion v5 keeps its logs in kafka.", "(Atlas v3, Orion v5)"),
    ("Release notes for Atlas v3 live in the web wiki.", "Release notes for Orion v5 live in the web wiki.",
     "(Atlas v3, Orion v5)"),
    ("The billing service deploys on Fridays.", "The payments service deploys on Fridays.",
     "different services (billing, payments)"),  # a short statement: a noun that differs names another thing
    ("QA uses the medium instance size for the client cache.",
     "QA uses the medium instance size for the account gateway, except during load tests.",
     "different things (client cache, account gateway except …)"),
    ("The old migration deploy script is obsolete.", "The old billing deploy script is obsolete; use make.",
     "different scripts (migration, billing)"),
    ("The preview cluster uses the small instance size.", "Staging uses the small instance size.",
     "(The preview cluster, Staging)"),
    ("Setup: clone the repo. Customer 1042 pays yearly.", "Setup: clone the repo. Customer 2077 pays yearly.",
     "different customers (1042, 2077)"),
    # A noun of the subject that differs beside the values, with a determiner and a "now" that differ too
    ("Our staging database runs on port 6543.", "The staging cache now runs on port 6380.", "(database, cache)"),
    ("Logs are kept for 30 days.", "Metrics are now kept for 90 days.", "(Logs, Metrics)"),
    # A note without a verb: the label before its colon or dash is what it is about.
    ("Customer 1042: gold plan, renews in March.", "Customer 2077: gold plan, renews in March.",
     "different customers (1042, 2077)"),
    ("Customer 1042 - gold plan", "Customer 2077 - gold plan", "different customers (1042, 2077)"),
    ("Rule 7 about api: check item 7 before merging.", "Rule 27 about api: check item 27 before merging.",
     "different rules (7, 27)"),
    # Told in other words (too few shared to pair the sentences), still about another thing of one kind.
    ("Customer 3150 is on the Pro plan.", "Customer 2077 moved to the Enterprise plan.",
     "different customers (3150, 2077)"),
    ("Server rack 3 is in room B12.", "Server rack 4 was moved to room C7.", "different racks (3, 4)"),
]
SAME_SUBJECT = [  # (older, newer, the values that changed)
    ("The staging DB is on port 5432.", "The staging DB is on port 5433.", "(5432 -> 5433)"),
    ("Server rack 3 is in room B12.", "Server rack 3 is in room B14.", "(B12 -> B14)"),
    ("Python 3.11 is used by service A.", "Python 3.12 is used by service A.", "(3.11 -> 3.12)"),
    ("Service A uses Python 3.11.", "Service A uses Python 3.12.", "(3.11 -> 3.12)"),
    ("The billing database runs on db1.internal.", "The billing database runs on db2.internal.",
     "(db1.internal -> db2.internal)"),
    ("The code freeze starts on 2026-03-01.", "The code freeze starts on 2026-03-08.", "(2026-03-01 -> 2026-03-08)"),
    ("Requests time out after 30 seconds.", "Requests time out after 60 seconds.", "(30 -> 60)"),
    ("Cached entries expire after 5 minutes.", "Cached entries expire after 10 minutes.", "(5 -> 10)"),
    ("It keeps 3 replicas in production.", "It keeps 5 replicas in production.", "(3 -> 5)"),
    ("Failed calls are retried 3 times.", "Failed calls are retried 5 times.", "(3 -> 5)"),
    ("We deploy the api with Docker.", "We deploy the api with Nomad.", "(Docker -> Nomad)"),
    ("Our API runs on port 8000.", "The API now runs on port 9000.", "(8000 -> 9000)"),  # a determiner, a "now"
    # ... and what follows the label is its value.
    ("Staging DB port: 5432", "Staging DB port: 5433", "(5432 -> 5433)"),
    ("Cache TTL: 600 seconds.", "Cache TTL: 3600 seconds.", "(600 -> 3600)"),
    ("Deploy window: 14:00 UTC", "Deploy window: 16:00 UTC", "(14:00 -> 16:00)"),
    # The same numbered subject told in other words: its value changed ("moved to" is an update).
    ("Customer 2077 is on the Starter plan.", "Customer 2077 moved to the Enterprise plan.",
     "(Starter -> Enterprise)"),
]
NEITHER = [  # no identifier differs: rewording, an added clause, another statement
    ("Staging uses the small instance size.",
     "Staging uses the small instance size, except during load tests when it must use xlarge."),
    ("The API returns JSON errors.", "The API returns errors as JSON."),
    ("The user prefers dark mode.", "The user likes dark mode."),  # a verb that differs is rewording
    # a switch names the older subject too: a reversal's business (contradicts), not another thing
    ("Redis handles sessions for the api.", "Valkey now handles sessions for the api instead of Redis."),
    ("Payments deploy window is Tuesday 10-12 UTC.", "The payments deploy window: Tuesdays 10-12 UTC."),
    ("Customer 1042 is on the Enterprise plan.", "Customer 1042 is on the Enterprise plan."),
    ("Deploys run from the main branch.", "Quarterly tax filings are due in April."),
    # Reworded with a number outside the subject, or around the number more than one word differs
    ("Our team has 3 members.", "The team grew to 5 members."),
    ("Customer 3150 is on the Pro plan.", "Support ticket 2077 moved to the Enterprise queue."),
    # In a longer text an unpaired sentence may be a step added, not another thing
    ("Deploy guide for the api service. Build the image with make, then tag it with the release number. "
     "Step 2 runs the tests on the arm runner before anything is pushed to the registry.",
     "Deploy guide for the api service. Build the image with make, then tag it with the release number. "
     "Step 3 pushes the artifact to the registry."),
]


@pytest.mark.parametrize(("old", "new", "why"), DISTINCT)
def test_identifiers_in_the_subject_make_distinct_facts(old: str, new: str, why: str) -> None:
    found = compare_texts(old, new)
    assert found.distinct is not None
    assert found.reason().startswith("distinct: they name ") and why in found.reason()
    assert compare_texts(new, old).distinct is not None  # whichever is newer


@pytest.mark.parametrize(("old", "new", "values"), SAME_SUBJECT)
def test_identifiers_after_the_verb_are_values_of_one_subject(old: str, new: str, values: str) -> None:
    found = compare_texts(old, new)
    assert found.distinct is None
    assert found.reason() == f"same subject, other value {values}"


@pytest.mark.parametrize(("old", "new"), NEITHER)
def test_no_identifier_differs(old: str, new: str) -> None:
    found = compare_texts(old, new)
    assert found.distinct is None and found.values == () and found.reason() == ""


@pytest.mark.parametrize(("text", "verb"), [
    ("Customer 1042 is on the Enterprise plan", "is"),
    ("Important rule number 3: the service 3 must always log errors", "must"),
    ("Alice owns the checkout flow", "owns"),
    ("The 2026-03-01 release shipped the new checkout", "shipped"),
    ("Cached entries expire after 5 minutes", "expire"),
    ("We deploy the api with Docker", "deploy"),
    ("The logs of the billing service rotate daily", "rotate"),  # "logs" after "the" is a noun
    ("Requests time out after 30 seconds", None),  # no word known as a verb: no subject to tell apart
])
def test_the_main_verb(text: str, verb: str | None) -> None:
    statement = statement_of(text)
    found = main_verb(statement.tokens, statement.kinds)
    assert (None if found is None else statement.tokens[found]) == verb
