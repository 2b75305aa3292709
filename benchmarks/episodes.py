#!/usr/bin/env python3
"""LoCoMo conversations through conversation ingestion into episodes, and the questions asked of them.

What ``python -m benchmarks.locomo_ingest`` measures and ``python -m benchmarks.locomo_eval``
reports as its episodes format: :func:`measure` replays each conversation into its own vault
(the offline path) and asks its questions; :func:`print_report` prints the results.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.locomo import CATEGORIES, Turn, clean_evidence, turns_of
from vault_engine.index.fulltext import query_terms
from vault_engine.ingest.conversation import ingest
from vault_engine.ingest.transcripts import parse_turns
from vault_engine.server.requests import SearchRequest
from vault_engine.server.service import MemoryService
from vault_engine.store import create_vault
from vault_engine.vault import Vault

# Bump when the way turns are written into the vault changes: cached vaults of another version are not reused.
VERSION = "ingest-v2"
LIMIT = 5
KS = (1, 3, LIMIT)
ADVERSARIAL = 5
MARKER = "eval-ingest.json"  # in a vault's .memvault/: written once the vault is fully built
_DIA_MARKER = re.compile(r" \[#(\d+):(\d+)\]$", re.M)
_DIA_LIKE = re.compile(r"\bD\d+:\d+\b|#\d+:\d+|\bd\d+\b", re.I)


@dataclass
class Ingested:
    """One LoCoMo turn as it went into ``ingest``."""

    dia_id: str
    role: str
    content: str
    ts: str | None

    @property
    def block(self) -> str:
        """The turn as ``episode_body`` writes it: heading, blank line, content, newline."""
        heading = f"### {self.role}" + (f" · {self.ts}" if self.ts else "")
        return f"{heading}\n\n{self.content}\n"


@dataclass
class Episode:
    id: str
    title: str
    summary: str
    body: str


@dataclass
class Scores:
    n: int = 0
    recall: dict[int, float] = field(default_factory=lambda: dict.fromkeys(KS, 0.0))
    rr: float = 0.0
    hits: int = 0
    body_chars: int = 0
    manifest_chars: int = 0
    body_ratio: float = 0.0
    manifest_ratio: float = 0.0
    chance: float = 0.0  # expected R@5 of five episodes drawn at random (each gold turn is in one episode)

    def add(self, recall: dict[int, float], rr: float, hits: int, body: int, manifest: int,
            conversation_chars: int, episodes: int) -> None:
        self.n += 1
        self.chance += min(1.0, LIMIT / max(1, episodes))
        for k in KS:
            self.recall[k] += recall[k]
        self.rr += rr
        self.hits += hits
        self.body_chars += body
        self.manifest_chars += manifest
        self.body_ratio += body / conversation_chars
        self.manifest_ratio += manifest / conversation_chars

    def merge(self, other: Scores) -> None:
        self.n += other.n
        for k in KS:
            self.recall[k] += other.recall[k]
        self.rr += other.rr
        self.hits += other.hits
        self.body_chars += other.body_chars
        self.manifest_chars += other.manifest_chars
        self.body_ratio += other.body_ratio
        self.manifest_ratio += other.manifest_ratio
        self.chance += other.chance

    def summary(self) -> dict[str, float]:
        n = max(1, self.n)
        return {
            "n": self.n,
            **{f"r{k}": self.recall[k] / n for k in KS},
            "mrr": self.rr / n,
            "hits": self.hits / n,
            "body_chars": self.body_chars / n,
            "manifest_chars": self.manifest_chars / n,
            "body_ratio": self.body_ratio / n,
            "manifest_ratio": self.manifest_ratio / n,
            "chance_r5": self.chance / n,
        }


# ---------------------------------------------------------------- building a vault


def ingest_turns(sample: dict[str, Any], turns: list[Turn], dia_ids: bool = False) -> dict[int, list[Ingested]]:
    """The turns to ingest, per LoCoMo session (see the module docstring)."""
    conv = sample["conversation"]
    roles = {str(conv["speaker_a"]): "user", str(conv["speaker_b"]): "assistant"}
    out: dict[int, list[Ingested]] = defaultdict(list)
    for turn in turns:
        if turn.speaker not in roles:
            raise SystemExit(f"error: {sample.get('sample_id')}: speaker {turn.speaker!r} is neither speaker_a "
                             "nor speaker_b")
        ts = turn.when.isoformat() if turn.when is not None else None
        content = f"{turn.speaker}: {turn.text}"
        if dia_ids:
            content += " [#{}:{}]".format(*turn.dia_id.removeprefix("D").split(":", 1))
        out[turn.session].append(Ingested(turn.dia_id, roles[turn.speaker], content, ts))
    return dict(sorted(out.items()))


def cache_key(vault: Vault, dia_ids: bool) -> str:
    """The version string of a cached vault: ``VERSION``, the turn format and the ingest settings."""
    settings = json.dumps(asdict(vault.config.ingest), sort_keys=True)
    return f"{VERSION}{'' if dia_ids else '-no-ids'}-{hashlib.sha256(settings.encode()).hexdigest()[:8]}"


def build(root: Path, sample: dict[str, Any], sessions: dict[int, list[Ingested]], embedder: Any) -> dict[str, Any]:
    """Create a vault at ``root``, ingest every session, sync; what it took."""
    if root.exists():
        shutil.rmtree(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    create_vault(root, git=False)
    vault = Vault(root, embedder=embedder)
    llm = vault.llm()
    if llm.name != "offline":
        raise SystemExit(f"error: the vault chose the {llm.name} model; this evaluation runs the offline path")
    conv_id = str(sample.get("sample_id", "conv"))
    started = time.perf_counter()
    received = buffered = one_off = redacted = episodes = 0
    warnings: list[str] = []
    for number, items in sessions.items():
        # The file a chat exporter writes, read as `memvault ingest FILE` reads it.
        jsonl = "".join(json.dumps({"role": t.role, "content": t.content, **({"ts": t.ts} if t.ts else {})},
                                   ensure_ascii=False) + "\n" for t in items)
        turns = parse_turns(jsonl, source=f"{conv_id}-s{number}.jsonl", fmt="jsonl")
        result = ingest(vault, turns, session=f"{conv_id}-s{number}", llm=llm, flush=True)
        if result.pending or not result.closed:
            raise SystemExit(f"error: {conv_id} session {number}: {result.pending} turns left in the buffer")
        received += result.received
        buffered += result.buffered
        one_off += result.one_off
        redacted += result.redacted
        episodes += sum(1 for e in result.episodes if e.action == "created")
        warnings += result.warnings
    ingest_seconds = time.perf_counter() - started
    started = time.perf_counter()
    vault.sync()
    sync_seconds = time.perf_counter() - started
    info = {"version": VERSION, "llm": llm.name, "ingest_seconds": ingest_seconds, "sync_seconds": sync_seconds,
            "received": received, "buffered": buffered, "one_off": one_off, "redacted": redacted,
            "episodes_created": episodes, "warnings": warnings, "ingest_settings": asdict(vault.config.ingest)}
    (root / ".memvault" / MARKER).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def episodes_of(vault: Vault) -> dict[str, Episode]:
    out: dict[str, Episode] = {}
    for entry in vault.scan().active():
        memory = entry.memory
        if memory.type == "episode":
            out[memory.id] = Episode(memory.id, memory.title, memory.summary, memory.body)
    return out


# ---------------------------------------------------------------- evaluating one conversation


def evaluate(sample: dict[str, Any], root: Path, cached: bool, embedder: Any, report: dict[str, Any],
             dia_ids: bool = False) -> tuple[dict[int, Scores], list[float]]:
    conv_id = str(sample.get("sample_id", "conv"))
    turns = turns_of(sample)
    known = {t.dia_id for t in turns}
    sessions = ingest_turns(sample, turns, dia_ids)
    flat = [t for items in sessions.values() for t in items]
    by_dia = {t.dia_id: t for t in flat}
    marker = root / ".memvault" / MARKER
    if cached and marker.is_file():
        info = json.loads(marker.read_text(encoding="utf-8"))
        info["cached"] = True
    else:
        info = build(root, sample, sessions, embedder)
        info["cached"] = False
    vault = Vault(root, embedder=embedder)
    service = MemoryService(vault)  # no current project: a vault of its own conversation
    episodes = episodes_of(vault)

    # Completeness: each turn, heading and all, verbatim in exactly one episode body.
    holders = {t.dia_id: [e.id for e in episodes.values() if t.block in e.body] for t in flat}
    loose = {t.dia_id: sum(1 for e in episodes.values() if t.content in e.body) for t in flat}
    placed = Counter(min(len(ids), 3) for ids in holders.values())
    # The dia ids as the bodies give them back (the trailing "[#12:3]" of each turn).
    from_body: dict[str, list[str]] = defaultdict(list)
    for episode in episodes.values():
        for match in _DIA_MARKER.finditer(episode.body):
            from_body[f"D{match.group(1)}:{match.group(2)}"].append(episode.id)
    disagree = sum(1 for d in by_dia if sorted(from_body.get(d, [])) != sorted(holders[d])) if dia_ids else None
    conversation_chars = sum(len(e.body) for e in episodes.values())
    transcript_chars = sum(len(t.content) for t in flat)
    sizes = [len(e.body) for e in episodes.values()]

    scores: dict[int, Scores] = defaultdict(Scores)
    times: list[float] = []
    leaks = linked_only = returned = 0
    skipped = Counter[str]()
    for qa in sample["qa"]:
        category = int(qa.get("category", 0))
        if category not in CATEGORIES and category != ADVERSARIAL:
            skipped["unknown category"] += 1
            continue
        gold = clean_evidence(list(qa.get("evidence") or []), known)
        if not gold:
            skipped["no evidence"] += 1
            continue
        question = str(qa["question"])
        if _DIA_LIKE.search(question) or any(_DIA_LIKE.fullmatch(t) for t in query_terms(question).split()):
            leaks += 1
        started = time.perf_counter()
        answer = service.search(SearchRequest.parse({"query": question, "limit": LIMIT, "types": ["episode"]}))
        hits = answer["hits"]
        times.append(time.perf_counter() - started)
        top = [episodes[h["id"]] for h in hits if h["id"] in episodes]
        returned += len(top)
        linked_only += sum(1 for h in hits if not h["lanes"])  # no lane matched: pulled in as a linked neighbour
        recall = {}
        for k in KS:
            inside = sum(1 for d in gold if any(by_dia[d].block in e.body for e in top[:k]))
            recall[k] = inside / len(gold)
        first = next((n for n, e in enumerate(top, 1) if any(by_dia[d].block in e.body for d in gold)), None)
        body = sum(len(e.body) for e in top)
        manifest = sum(len(e.title) + len(e.summary) for e in top)
        scores[category].add(recall, 1.0 / first if first else 0.0, len(top), body, manifest, conversation_chars,
                            len(episodes))
    service.close()
    own = Scores()
    for category, found in scores.items():
        if category in CATEGORIES:
            own.merge(found)

    report[conv_id] = {
        "r5": own.summary()["r5"],
        **info,
        "turns": len(flat),
        "sessions": len(sessions),
        "episodes": len(episodes),
        "turns_per_episode": len(flat) / max(1, len(episodes)),
        "episode_chars_median": statistics.median(sizes) if sizes else 0,
        "episode_chars_max": max(sizes, default=0),
        "turns_in_exactly_one": placed[1],
        "turns_in_none": placed[0],
        "turns_in_two": placed[2],
        "turns_in_three_or_more": placed[3],
        "content_in_exactly_one": sum(1 for v in loose.values() if v == 1),
        "dia_id_map_disagreements": disagree,
        "conversation_chars": conversation_chars,
        "transcript_chars": transcript_chars,
        "questions_with_dia_like_terms": leaks,
        "hits_returned": returned,
        "hits_only_through_a_link": linked_only,
        "questions_skipped": dict(skipped),
        "query_ms_median": statistics.median(times) * 1000 if times else 0.0,
    }
    return scores, times


# ---------------------------------------------------------------- output


def _row(name: str, s: dict[str, float]) -> str:
    return (f"| {name} | {s['n']:.0f} | {s['r1']:.3f} | {s['r3']:.3f} | {s['r5']:.3f} | {s['chance_r5']:.3f} | "
            f"{s['mrr']:.3f} | "
            f"{s['hits']:.2f} | {s['body_chars']:,.0f} | {s['body_ratio']:.1%} | {s['manifest_chars']:,.0f} | "
            f"{s['manifest_ratio']:.2%} |")


def print_report(result: dict[str, Any]) -> None:
    convs: dict[str, Any] = result["conversations"]
    print(f"LoCoMo through `ingest`, offline path (llm: {result['llm']}; ANTHROPIC_API_KEY unset), "
          f"{len(convs)} conversation(s); search: limit {LIMIT}, types=episode, vault defaults otherwise.")
    shape = "Name: text [#<session>:<turn>]" if result["dia_ids"] else "Name: text (no dia-id marker)"
    print(f"Ingest settings: {result['ingest_settings']}; turns ingested as "
          f"\"{shape}\", user = speaker_a, assistant = speaker_b, ts = session date.\n")
    print("| conversation | turns | sessions | episodes | turns/episode | episode chars (median / max) "
          "| conversation chars | ingest s | sync s | cached | R@5 (1-4) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for conv_id, c in convs.items():
        print(f"| {conv_id} | {c['turns']} | {c['sessions']} | {c['episodes']} | {c['turns_per_episode']:.1f} | "
              f"{c['episode_chars_median']:,.0f} / {c['episode_chars_max']:,} | {c['conversation_chars']:,} | "
              f"{c['ingest_seconds']:.1f} | {c['sync_seconds']:.1f} | {'yes' if c['cached'] else 'no'} | "
              f"{c['r5']:.3f} |")
    print()
    print("| category | questions | R@1 | R@3 | R@5 | R@5 by chance | MRR | episodes returned | top-5 body chars "
          "| of conversation | top-5 title+summary chars | of conversation |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, s in result["categories"].items():
        print(_row(name, s))
    print(_row("**overall (1-4)**", result["overall"]))
    if result.get("adversarial"):
        print(_row("adversarial (5, apart)", result["adversarial"]))
    total = result["turns"]
    print(f"\nturns findable: {result['turns_findable']} of {total} "
          f"(heading + content verbatim in exactly one episode body; in none: {result['turns_in_none']}, "
          f"in two: {result['turns_in_two']}, in three or more: {result['turns_in_three_or_more']})")
    print(f"turns left out of the buffer as one-off instructions: {result['one_off_dropped']}; "
          f"secrets redacted: {result['redacted']}")
    if result["dia_ids"]:
        print(f"dia ids recovered from the bodies' markers, disagreeing with the verbatim match: "
              f"{result['dia_id_map_disagreements']} of {total}")
    print(f"questions containing a dia id (or a d<number> term): {result['questions_with_dia_like_terms']}")
    print(f"returned episodes that matched no lane (pulled in through a link): {result['hits_only_through_a_link']} "
          f"of {result['hits_returned']}")
    print(f"whole conversation: {result['conversation_chars_mean']:,.0f} characters of episode bodies on average "
          f"({result['transcript_chars_mean']:,.0f} of ingested turn text)")
    t = result["timing"]
    built = ""
    if t["built"] != len(convs):
        built = f" (built {t['built']} of {len(convs)} now; cached figures from the build)"
    print(f"timing: ingest {t['ingest_seconds']:.1f} s, sync {t['sync_seconds']:.1f} s in all{built}; "
          f"query median {t['query_ms_median']:.1f} ms over {t['queries']} queries")


def measure(data: list[dict[str, Any]], cache: Path | None, dia_ids: bool = False,
            quiet: bool = False) -> dict[str, Any]:
    """Ingest each conversation into its own vault (or reuse ``cache``), ask its questions: the results."""
    # The offline path, whatever the caller's environment says.
    os.environ.pop("ANTHROPIC_API_KEY", None)
    os.environ["MEMVAULT_LLM_PROVIDER"] = "offline"
    os.environ["MEMVAULT_VAULT_AUTO_SYNC"] = "false"

    per_category: dict[int, Scores] = defaultdict(Scores)
    times: list[float] = []
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="eval-ingest-") as folder:
        probe = Path(folder) / "probe"
        create_vault(probe, git=False)
        probe_vault = Vault(probe)
        embedder = probe_vault.embedder()  # one loaded model for every vault
        key = cache_key(probe_vault, dia_ids)
        settings = asdict(probe_vault.config.ingest)
        llm_name = probe_vault.llm().name
        for sample in data:
            conv_id = str(sample.get("sample_id", "conv"))
            root = cache / key / conv_id if cache else Path(folder) / conv_id
            if not quiet:
                reuse = cache is not None and (root / ".memvault" / MARKER).is_file()
                print(f"  {conv_id}: {'opening' if reuse else 'building'} {root}", file=sys.stderr)
            scores, spent = evaluate(sample, root, cache is not None, embedder, report, dia_ids)
            for category, s in scores.items():
                per_category[category].merge(s)
            times += spent

    overall = Scores()
    for category in CATEGORIES:
        overall.merge(per_category[category])
    convs = list(report.values())
    result: dict[str, Any] = {
        "llm": llm_name,
        "dia_ids": dia_ids,
        "version": key,
        "ingest_settings": settings,
        "categories": {CATEGORIES[c]: per_category[c].summary() for c in CATEGORIES if per_category[c].n},
        "overall": overall.summary(),
        "adversarial": per_category[ADVERSARIAL].summary() if per_category[ADVERSARIAL].n else None,
        "turns": sum(c["turns"] for c in convs),
        "turns_findable": sum(c["turns_in_exactly_one"] for c in convs),
        "turns_in_none": sum(c["turns_in_none"] for c in convs),
        "turns_in_two": sum(c["turns_in_two"] for c in convs),
        "turns_in_three_or_more": sum(c["turns_in_three_or_more"] for c in convs),
        "dia_id_map_disagreements": sum(c["dia_id_map_disagreements"] or 0 for c in convs),
        "hits_returned": sum(c["hits_returned"] for c in convs),
        "one_off_dropped": sum(c["one_off"] for c in convs),
        "redacted": sum(c["redacted"] for c in convs),
        "hits_only_through_a_link": sum(c["hits_only_through_a_link"] for c in convs),
        "questions_with_dia_like_terms": sum(c["questions_with_dia_like_terms"] for c in convs),
        "conversation_chars_mean": statistics.mean(c["conversation_chars"] for c in convs) if convs else 0,
        "transcript_chars_mean": statistics.mean(c["transcript_chars"] for c in convs) if convs else 0,
        "timing": {
            "ingest_seconds": sum(c["ingest_seconds"] for c in convs),
            "sync_seconds": sum(c["sync_seconds"] for c in convs),
            "built": sum(1 for c in convs if not c["cached"]),
            "query_ms_median": statistics.median(times) * 1000 if times else 0.0,
            "queries": len(times),
        },
        "conversations": report,
    }
    return result

