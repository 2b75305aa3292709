"""Secret redaction: every kind of secret is replaced before anything is written, and counted."""

from __future__ import annotations

import pytest

from vault_engine.format.redact import REDACTED, redact, redact_counted

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
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_counted(text) == (text, 0)
    assert redact(text) == text


def test_a_key_in_an_assignment_counts_once() -> None:
    text, count = redact_counted("api_key = " + SECRETS["anthropic key"])
    assert text == f"api_key = {REDACTED}" and count == 1
