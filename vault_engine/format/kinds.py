"""The closed vocabularies of a memory's frontmatter, each spelled once as a ``Literal``.

The tuples (:data:`TYPES`, :data:`ENUMS`, ...) are derived from the aliases, so a
value added to an alias is at once allowed in files, offered by the CLI and the
MCP schemas, and accepted by the type checker (``Memory`` and ``NewMemory`` fields
carry the aliases). The tuples are typed as plain strings: they check raw values read
from files and requests, which are ``str`` until checked.
"""

from __future__ import annotations

from typing import Literal, get_args

MemoryType = Literal["core-profile", "collaboration-policy", "fact", "procedure", "episode", "document", "note"]
MemoryClass = Literal["user-fact", "user-preference", "collaboration-habit", "project-convention"]
Scope = Literal["global", "project"]
Authority = Literal["explicit", "inferred"]
Trust = Literal["system", "learned", "external"]
Lifecycle = Literal["trial", "proven", "superseded"]
Recall = Literal["passive", "active", "both"]
Tier = Literal["hot", "cold"]
Outcome = Literal["used-successfully", "ignored", "overridden", "corrected", "contributed-to-failure"]

TYPES: tuple[str, ...] = get_args(MemoryType)
CLASSES: tuple[str, ...] = get_args(MemoryClass)
SCOPES: tuple[str, ...] = get_args(Scope)
AUTHORITIES: tuple[str, ...] = get_args(Authority)
TRUSTS: tuple[str, ...] = get_args(Trust)
LIFECYCLES: tuple[str, ...] = get_args(Lifecycle)
RECALLS: tuple[str, ...] = get_args(Recall)
TIERS: tuple[str, ...] = get_args(Tier)
OUTCOMES: tuple[str, ...] = get_args(Outcome)

# The frontmatter keys whose value must be one of a vocabulary.
ENUMS: dict[str, tuple[str, ...]] = {
    "type": TYPES,
    "class": CLASSES,
    "scope": SCOPES,
    "authority": AUTHORITIES,
    "trust": TRUSTS,
    "lifecycle": LIFECYCLES,
    "recall": RECALLS,
    "tier": TIERS,
}
