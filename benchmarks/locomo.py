"""LoCoMo conversations as a user's vault: the development half read and cleaned, each turn a
memory of an imported chat log (``memvault import`` then sync), the questions with their gold turns.

Shared by ``python -m benchmarks.locomo_eval`` (retrieval), the benchmarks built on it and
``python -m benchmarks.context_recall`` (the context director).  The record formats are what
different people would feed the vault; none of them has a field a person would not write:

- ``chat``: a chat log as an importer writes it: ``title``, ``body`` = ``[date] Speaker: text``,
  ``source: conversation:<id>#<turn>`` (so the engine sees each turn between its neighbours),
  ``occurred_at``, the speaker as a tag.  No summary.
- ``facts``: the same turns as plain facts: no thread source, no summary, no tag (what most
  people import: a note says who it is about in its text, not in a tag).
- ``facts-tagged``: the plain facts with the speaker as a tag (comparison only).
- ``curated``: the chat log with ``summary`` filled in with the whole turn, as a person curating
  each record would (labelled: users do not write this).
- ``body``: (comparison only) plain turns with the neighbours pasted into the body.
- ``chat-maintained``: the chat log after ``memvault maintain`` (merges, cross-links and
  syntheses: an overview memory over related turns, which counts for its members' turns).

The data is CC BY-NC 4.0 and is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.harness import BENCH_DATA
from vault_engine.format.ids import new_memory_id
from vault_engine.format.memory import normalize_text
from vault_engine.store import create_vault
from vault_engine.vault import Vault

DEFAULT_DATA = BENCH_DATA / "locomo_dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ADVERSARIAL = 5  # scored apart: its own row, never in the averages of CATEGORIES
ALL_CATEGORIES = {**CATEGORIES, ADVERSARIAL: "adversarial"}
FORMATS = ("chat", "facts", "facts-tagged", "episodes", "curated", "body", "chat-maintained")
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclasses.dataclass
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    when: datetime | None
    when_text: str


def parse_when(text: str) -> datetime | None:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


def _position(turn: Turn) -> tuple[int, int]:
    found = _DIA.fullmatch(turn.dia_id)
    return turn.session, int(found.group(2)) if found else 0


def turns_of(sample: dict[str, Any]) -> list[Turn]:
    conv = sample["conversation"]
    out = []
    for key, value in conv.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if not match or not isinstance(value, list):
            continue
        number = int(match.group(1))
        when_text = str(conv.get(f"{key}_date_time", ""))
        for turn in value:
            text = str(turn.get("text", ""))
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            out.append(Turn(str(turn["dia_id"]), number, str(turn["speaker"]), text, parse_when(when_text), when_text))
    out.sort(key=_position)
    return out


def clean_evidence(raw: list[Any], known: set[str]) -> list[str]:
    """Split malformed strings ("D8:6; D9:17"), repair "D:11:26", drop ids not in the conversation."""
    out: list[str] = []
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item)):
            piece = piece.strip()
            if not piece:
                continue
            fixed = re.sub(r"^D:(\d+):(\d+)$", r"D\1:\2", piece)
            if fixed in known and fixed not in out:
                out.append(fixed)
    return out


def questions(sample: dict[str, Any]) -> list[tuple[int, str, set[str]]]:
    """(category, question, gold dia ids) of every question in categories 1-4 with evidence."""
    known = {t.dia_id for t in turns_of(sample)}
    out = []
    for qa in sample["qa"]:
        category = int(qa.get("category", 0))
        gold = set(clean_evidence(list(qa.get("evidence") or []), known))
        if category in CATEGORIES and gold:
            out.append((category, str(qa["question"]), gold))
    return out


def memory_records(turns: list[Turn], fmt: str,
                   conversation: str) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """One JSONL record per distinct turn text in format ``fmt`` (see the module docstring);
    memory id -> dia ids it stands for."""
    records: list[dict[str, Any]] = []
    owners: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for n, turn in enumerate(turns):
        head = f"[{turn.when_text}] {turn.speaker}: {turn.text}"
        parts = [head]
        if fmt == "body":
            same = [t for t in turns[max(0, n - 1) : n + 2] if t.session == turn.session and t is not turn]
            parts += [f"{other.speaker}: {other.text}" for other in same]
        body = "\n\n".join(parts)
        key = normalize_text(body)
        if key in seen:
            owners[seen[key]].append(turn.dia_id)
            continue
        memory_id = new_memory_id()
        seen[key] = memory_id
        owners[memory_id] = [turn.dia_id]
        record: dict[str, Any] = {
            "id": memory_id,
            "title": f"{turn.speaker}: {turn.text[:70]}",
            "body": body,
        }
        if fmt != "facts":
            record["tags"] = [turn.speaker]  # who said it, as a chat importer records it
        if fmt in ("chat", "curated", "chat-maintained"):
            record["source"] = f"conversation:{conversation}#{turn.dia_id}"
        if fmt == "curated":
            record["summary"] = head
        if turn.when is not None:
            record["occurred_at"] = turn.when.date().isoformat()
        records.append(record)
    return records, owners


def open_vault(sample: dict[str, Any], fmt: str, cache: Path | None,
               folder: Path) -> tuple[Vault, dict[str, list[str]], float | None, int]:
    """The conversation's vault in format ``fmt`` (built by ``memvault import`` then sync, or reused
    from ``cache``): (vault, memory id -> dia ids, seconds it took to build or None, memories)."""
    records, owners = memory_records(turns_of(sample), fmt, str(sample.get("sample_id", "x")))
    root = (cache / fmt / str(sample.get("sample_id", "x"))) if cache else folder / "vault"
    owners_file = root / ".memvault" / "locomo-owners.json"
    if cache and owners_file.is_file():
        owners = json.loads(owners_file.read_text())
        vault = Vault(root)
        vault.sync()  # rebuilds indexes an older engine wrote
        return vault, owners, None, len(owners)
    if root.exists():
        shutil.rmtree(root)
    create_vault(root, git=False)
    vault = Vault(root)
    started = time.perf_counter()
    imported = vault.import_jsonl([json.dumps(r) for r in records], "locomo")
    if imported.errors:
        raise SystemExit(f"import failed: {imported.errors[0].one_line()}")
    vault.sync()
    if fmt == "chat-maintained":
        maintained = vault.maintain()
        vault.sync()  # as `memvault maintain` leaves it: what it wrote is indexed
        print(f"  maintain: {dict(sorted(maintained.counts().items()))}", file=sys.stderr)
        owners.update(synthesis_owners(vault, owners))
    seconds = time.perf_counter() - started
    owners_file.write_text(json.dumps(owners))
    return vault, owners, seconds, len(records)


def synthesis_owners(vault: Vault, owners: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each synthesis stands for the turns of its members: its text quotes each member (offline, its first
    sentence) and links it, so an agent given the synthesis has the members one read away."""
    from vault_engine.format.value import SYNTHESIS_OF

    out: dict[str, list[str]] = {}
    for entry in vault.scan().active():
        members = entry.memory.extra.get(SYNTHESIS_OF)
        if isinstance(members, list):
            out[entry.memory.id] = [d for m in members for d in owners.get(str(m), [])]
    return out
