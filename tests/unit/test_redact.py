"""Secret redaction: every kind of secret of the corpus is replaced, no look-alike is touched, and the
redaction is idempotent and counted.

The corpus (78 kinds of secret in realistic surroundings, 16 classes of ordinary text that
looks like one) is ``stress/secret_corpus.py``; ``python -m benchmarks.secret_detection`` measures
redaction on it, against detect-secrets too.
"""

from __future__ import annotations

import pytest

from stress import secret_corpus as corpus
from vault_engine.format.memory import Memory
from vault_engine.format.redact import REDACTED, holds_secret, redact, redact_counted, redact_data, redact_memory

SECRETS = {
    "anthropic key": "sk-ant-api03-" + "A1b2" * 8,
    "openai key": "sk-proj-" + "Z9y8" * 6,
    "aws access key": "AKIA" + "ABCDEFGHIJKLMNOP",
    "github token": "ghp_" + "a1B2" * 9,
    "github fine-grained token": "github_pat_" + "X" * 45,
    "slack token": "xoxb-" + "1234567890-abcdef",
    "google key": "AIza" + "S" * 35,
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_token_kind_is_redacted(kind: str) -> None:
    secret = SECRETS[kind]
    text, count = redact_counted(f"use {secret} for the deploy")
    assert secret not in text and REDACTED in text and count == 1


@pytest.mark.parametrize("kind", list(corpus.KINDS))
def test_every_sample_of_every_kind_in_the_corpus_is_redacted(kind: str) -> None:
    samples = [s for s in corpus.secret_samples() if s.group == kind]
    for sample in samples:
        text, count = redact_counted(sample.text)
        assert not corpus.leaked(sample.secret, text), text
        assert count >= 1


@pytest.mark.parametrize("group", list(corpus.LOOKALIKES))
def test_no_look_alike_in_the_corpus_is_touched(group: str) -> None:
    for sample in (s for s in corpus.lookalike_samples() if s.group == group):
        assert redact_counted(sample.text) == (sample.text, 0)


def test_the_corpus_is_as_wide_as_measured() -> None:
    assert len(corpus.KINDS) >= 40 and len(corpus.LOOKALIKES) >= 10
    assert len(corpus.secret_samples()) > len(corpus.KINDS) and len(corpus.lookalike_samples()) >= 100


def test_redaction_is_idempotent_and_a_second_pass_counts_nothing() -> None:
    for sample in [*corpus.secret_samples(), *corpus.lookalike_samples()]:
        once = redact(sample.text)
        assert redact_counted(once) == (once, 0), sample.text


@pytest.mark.parametrize(("text", "secret"), [
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXk"),
    ('curl -H "Authorization: Bearer abcdefghijklmnop1234" https://api', "abcdefghijklmnop1234"),
    ("DATABASE_URL=postgres://admin:s3cretpass@db.local:5432/app", "s3cretpass"),
    ("git clone https://bob:ghs0secret0value@git.example.com/r.git", "ghs0secret0value"),
    ("password = hunter2hunter2", "hunter2hunter2"),
    ("api_key: 'abcd1234efgh5678'", "abcd1234efgh5678"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("DB_PASSWORD: hunter2hunter2", "hunter2hunter2"),
    ("export SECRET_TOKEN=s3cr3tvalue99", "s3cr3tvalue99"),
    ("redis://:s3cretpass99@cache:6379/0", "s3cretpass99"),
    ("note: DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),  # a name's value that names a secret itself
    ("ssh_key: MIIEowIBAAKCAQEAzX9vQ2r8secretkeymaterial…", "MIIEowIBAAKCAQEAzX9vQ2r8"),  # cut short
])
def test_private_keys_bearer_tokens_url_passwords_and_assignments(text: str, secret: str) -> None:
    redacted, count = redact_counted(text)
    assert secret not in redacted and count >= 1


@pytest.mark.parametrize("text", [
    "see https://example.com/a:b@c for the docs",  # an @ in a path is not a password
    "the token bucket refills every second",
    "Bearer of bad news",
    "Deploys run from the main branch.",
    "token_count = 10840",
    "max_tokens: 256",
    "if current.token == served.token:",
    "previousToken: previousToken2,",
    "the format is postgres://user:pass@localhost:5432/app",
    "readonly STENCIL_PASS_DEPTH_PASS: 0x0B96;",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_counted(text) == (text, 0)
    assert redact(text) == text and not holds_secret(text)


def test_a_key_in_an_assignment_counts_once() -> None:
    text, count = redact_counted("api_key = " + SECRETS["anthropic key"])
    assert text == f"api_key = {REDACTED}" and count == 1


def test_data_is_redacted_at_any_depth_keys_too_and_keeps_its_shape() -> None:
    token = SECRETS["github token"]
    data = {"notes": [f"use {token}", ("t", token)], token: 1, "count": 3, "nested": {"deep": {"x": token}}}
    clean = redact_data(data)
    assert token not in repr(clean)
    assert clean["count"] == 3 and isinstance(clean["notes"][1], tuple) and REDACTED in clean


def test_a_memory_has_every_text_field_redacted_and_an_ordinary_one_is_kept_as_it_is() -> None:
    token = SECRETS["github token"]
    memory = Memory(id="m-x", title=f"Token {token}", type="fact", body=f"Use {token}.\n", project=f"acme/{token}",
                    paths=(f"src/{token}/**",), tasks=(token,), summary=token, trigger=token, tags=(token,),
                    links=(f"[[{token}]]",), source=f"document:{token}", evidence=({"quote": token},),
                    extra={"notes": token, token: "key"})
    clean = redact_memory(memory)
    assert token not in repr(clean.to_json()) and token not in clean.body
    assert clean.id == memory.id and clean.type == memory.type
    ordinary = Memory(id="m-y", title="Deploys", type="fact", body="Deploys run from main.\n")
    assert redact_memory(ordinary) is ordinary
