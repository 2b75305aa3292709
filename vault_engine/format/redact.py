"""Secret redaction: API keys, tokens and private keys never reach a file."""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[REDACTED]"

_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    re.compile(r"\bsk-ant-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b"),
    re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{16,}"),  # Authorization: Bearer <token>
    re.compile(r"(?<=[A-Za-z0-9+.-]://)[^/\s:@]+:[^/\s@]+(?=@)"),  # user:password@ in a URL
]
# A value given to a name that says it is secret, the word anywhere in the name
# (``aws_secret_access_key = ...``, ``DB_PASSWORD: ...``, ``export SECRET_TOKEN=...``).
_ASSIGNMENT = re.compile(
    r"(?i)\b([\w.-]*?(?:api[_-]?key|secret|password|passwd|access[_-]?key|access[_-]?token|auth[_-]?token|token)"
    r"[\w.-]*\s*[:=]\s*)"
    r"(['\"]?)(?!\[REDACTED\])([^\s'\"]{8,})\2"
)


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED]``."""
    return redact_counted(text)[0]


def redact_data(value: Any) -> Any:
    """``value`` with every text in it (list items and mapping values, at any depth) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_data(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_data(item) for key, item in value.items()}
    return value


def redact_counted(text: str) -> tuple[str, int]:
    """``text`` with every recognised secret replaced by ``[REDACTED]``, and how many were replaced."""
    total = 0
    for pattern in _PATTERNS:
        text, count = pattern.subn(REDACTED, text)
        total += count
    text, count = _ASSIGNMENT.subn(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}{m.group(2)}", text)
    return text, total + count
