"""LongMemEval's haystacks as a user's vaults: what the LongMemEval benchmarks share.

A record of the development pool (``longmemeval_s_dev.json.gz``) is one question and its haystack:
about fifty chat sessions.  :func:`sessions_of` puts the sessions in date order (the haystacks are
not always in it) and numbers them by that order; :func:`open_vault` imports each session as the
chat export a chat tool writes (:func:`export_lines`: ``{"role", "content", "ts"}`` per line, both
roles), a file ``session-N.jsonl`` (N: the session's place in date order), through
``Vault.import_jsonl`` (the core of ``memvault import``).  The importer stores each turn with its
role as a tag and ``conversation:THREAD#LINE`` as its source (the thread named after the file and
its first line).  No session id reaches the vault: the evidence sessions' ids begin with
``answer_``, which alone would give the answer away.  A hit maps back to its turns by the sources
of the memory (its own, and those of the turns it folded in as evidence when their text was the
same), each line's source to the turn's positional handle ``conversation:session-N#T`` (T: the
turn's place in the session).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness import BENCH_DATA
from vault_engine import config as config_mod
from vault_engine.format import chat_turns
from vault_engine.index.embedder import Embedder
from vault_engine.index.model_graph import graph_folder
from vault_engine.store import create_vault
from vault_engine.vault import Vault

DEFAULT_DATA = BENCH_DATA / "longmemeval_s_dev.json.gz"
_HANDLE = re.compile(r"conversation:session-(\d+)#(\d+)")
META = "lme-haystack.json"  # kept in a built vault's .memvault/: its turn map and what building it cost
FORMAT = "chat-export"  # how the sessions were imported (a vault built another way is built again)


@dataclass(frozen=True, slots=True)
class Turn:
    session: int  # the session's place in date order
    turn: int  # the turn's place in its session
    role: str
    text: str
    answer: bool  # marked has_answer
    date: str  # the session's date, as the data gives it

    @property
    def handle(self) -> str:
        return handle(self.session, self.turn)

    @property
    def body(self) -> str:
        return f"[{self.date}] {self.role}: {self.text}"


def handle(session: int, turn: int) -> str:
    """A turn's positional handle, its source in the vault."""
    return f"conversation:session-{session}#{turn}"


def session_of(turn_handle: str) -> int:
    match = _HANDLE.fullmatch(turn_handle)
    if match is None:
        raise ValueError(f"not a turn handle: {turn_handle!r}")
    return int(match.group(1))


def load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise SystemExit(f"error: benchmark data not found at {path} (use --data)")
    with gzip.open(path, "rt", encoding="utf-8") as handle_:
        data: list[dict[str, Any]] = json.load(handle_)
    return data


def abstention(item: dict[str, Any]) -> bool:
    """An abstention question: its haystack holds no answer."""
    return str(item["question_id"]).endswith("_abs")


def sessions_of(item: dict[str, Any]) -> tuple[list[list[Turn]], set[int]]:
    """The haystack's sessions in date order (each its non-empty turns), and the places of the
    evidence sessions (``answer_session_ids``) in that order."""
    ordered = sorted(zip(item["haystack_dates"], item["haystack_session_ids"], item["haystack_sessions"],
                         strict=True), key=lambda p: p[0])
    evidence = set(item.get("answer_session_ids") or ())
    sessions: list[list[Turn]] = []
    places: set[int] = set()
    for number, (date, session_id, turns) in enumerate(ordered):
        if session_id in evidence:
            places.add(number)
        sessions.append([Turn(number, n, str(t.get("role", "user")), str(t.get("content", "")).strip(),
                              bool(t.get("has_answer")), str(date))
                         for n, t in enumerate(turns) if str(t.get("content", "")).strip()])
    return sessions, places


def export_lines(turns: list[Turn]) -> list[str]:
    """One session as a chat tool exports it: ``{"role", "content", "ts"}`` per line, the session's
    date ("2023/05/20 (Sat) 07:47") as an ISO 8601 time."""
    out = []
    for t in turns:
        day, _, rest = t.date.partition(" (")
        clock = rest.partition(") ")[2] or "00:00"
        out.append(json.dumps({"role": t.role, "content": t.text, "ts": f"{day.replace('/', '-')}T{clock}:00Z"}))
    return out


def export_name(session: list[Turn]) -> str:
    """The file a session is imported from: its place in date order."""
    return f"session-{session[0].session if session else 0}.jsonl"


def line_handles(sessions: list[list[Turn]]) -> dict[str, str]:
    """The source the importer gives each line (``conversation:THREAD#LINE``, the thread named after
    the session's file and its first line) -> its turn's handle."""
    out = {}
    for session in sessions:
        lines = export_lines(session)
        thread = chat_turns.thread_name(export_name(session), lines[0]) if lines else ""
        out.update({f"conversation:{thread}#{line}": t.handle for line, t in enumerate(session, 1)})
    return out


@dataclass
class Built:
    """A haystack's vault: memory id -> the handles of the turns it stands for, and what building it
    cost (None for a vault reused from the cache as it was)."""

    vault: Vault
    turns: dict[str, list[str]]
    cost: dict[str, Any] | None = None
    saved: dict[str, Any] = dataclasses.field(default_factory=dict)  # the cost recorded when it was built


def _settings(root: Path, changes: dict[str, Any], cache_dir: Path | None) -> config_mod.VaultConfig:
    """The vault's own settings with ``changes`` (``section.key`` -> value) and, when given, the
    embedding cache in ``cache_dir``."""
    loaded = config_mod.load(root)
    sections: dict[str, dict[str, Any]] = {}
    for key, value in changes.items():
        section, _, name = key.partition(".")
        sections.setdefault(section, {})[name] = value
    replaced = {name: dataclasses.replace(getattr(loaded, name), **values) for name, values in sections.items()}
    if cache_dir is not None:
        replaced["cache"] = dataclasses.replace(loaded.cache, dir=str(cache_dir))
    return dataclasses.replace(loaded, **replaced)


def turn_map(vault: Vault) -> dict[str, list[str]]:
    """Memory id -> the handles of the turns it stands for (its source, and the turns of the same
    text folded into it as evidence)."""
    out: dict[str, list[str]] = {}
    for entry in vault.scan().active():
        memory = entry.memory
        sources = [memory.source, *(str(e.get("source", "")) for e in memory.evidence)]
        out[memory.id] = [s for s in dict.fromkeys(sources) if s.startswith("conversation:")]
    return out


def open_vault(item: dict[str, Any], root: Path, *, reuse: bool, changes: dict[str, Any] | None = None,
               wrap: Callable[[Embedder], Embedder] | None = None, embeddings: Path | None = None,
               cold: bool = True) -> Built:
    """The question's vault at ``root``: reused as it is when ``reuse`` and it was built before,
    else built the user's way (one import per session, then a sync).  ``cold``: with an empty
    embedding cache, so that nothing is reused from another haystack and the cost is a first
    index's; else with the cache in ``embeddings`` (the user's when None), kept across builds.
    ``changes`` are settings (``section.key``) the vault is built and searched with; ``wrap``
    wraps the embedder while building (to count what it reads)."""
    changes = dict(changes or {})
    meta = root / ".memvault" / META
    if reuse and meta.is_file():
        saved = json.loads(meta.read_text(encoding="utf-8"))
        if saved.get("changes") == changes and saved.get("format") == FORMAT:
            vault = Vault(root, _settings(root, changes, None))
            vault.sync()  # rebuilds what an older engine wrote
            return Built(vault, {k: list(v) for k, v in saved["turns"].items()}, None, saved.get("cost") or {})
    if root.exists():
        shutil.rmtree(root)
    create_vault(root, git=False)
    sessions, _evidence = sessions_of(item)
    with tempfile.TemporaryDirectory(prefix="lme-embeddings-") as empty:
        if cold:  # an empty embedding cache, the model's graph where the user's cache keeps it (derived once)
            graphs = graph_folder(config_mod.cache_folder(config_mod.load(root).cache))
            graphs.mkdir(parents=True, exist_ok=True)
            graph_folder(Path(empty)).symlink_to(graphs, target_is_directory=True)
        settings = _settings(root, changes, Path(empty) if cold else embeddings)
        probe = Vault(root, settings)
        embedder = wrap(probe.embedder()) if wrap is not None else probe.embedder()
        vault = Vault(root, settings, embedder=embedder)
        started = time.perf_counter()
        for session in sessions:
            imported = vault.import_jsonl(export_lines(session), export_name(session))
            if imported.errors:
                raise SystemExit(f"import failed: {imported.errors[0].one_line()}")
        imported_at = time.perf_counter()
        vault.sync()
        done = time.perf_counter()
    cost = {"import_s": imported_at - started, "sync_s": done - imported_at, "index_s": done - started,
            "turns": sum(len(s) for s in sessions), "cold": cold}
    by_line = line_handles(sessions)
    turns = {memory: [by_line[s] for s in sources if s in by_line] for memory, sources in turn_map(vault).items()}
    meta.write_text(json.dumps({"changes": changes, "format": FORMAT, "turns": turns, "cost": cost},
                               sort_keys=True),
                    encoding="utf-8")
    searching = Vault(root, _settings(root, changes, None))
    return Built(searching, turns, cost, cost)


def save_cost(root: Path, cost: dict[str, Any]) -> None:
    """Record what building the vault at ``root`` cost beside its turn map."""
    meta = root / ".memvault" / META
    saved = json.loads(meta.read_text(encoding="utf-8"))
    saved["cost"] = cost
    meta.write_text(json.dumps(saved, sort_keys=True), encoding="utf-8")
