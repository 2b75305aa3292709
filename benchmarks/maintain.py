"""Benchmark maintain: precision and recall of merges and supersessions against planted truth, and its time.

Builds a vault of --size memories (default 10,000) from stress/synthetic.py:
base memories (the search benchmark's long prose records), --duplicates
(default 10%) planted near-duplicates of base memories, and --contradictions
(default size/50, so 200 at 10,000) pairs of short facts where a newer memory
reverses an older one, and --distinct (default size/50) pairs of short notes
about two different things that share most of their words ("Alice owns the
checkout flow." / "Bob owns the checkout flow.", "Atlas v3 keeps its logs in
kafka." / "Orion v5 keeps ..."): neither may merge or supersede the other, and
--families (default size/100) pairs of each family of ``synthetic.FAMILIES``:
identifier families (two customers, racks, tickets, versions, hosts, rule
numbers, dated releases, services on their own ports: never merged or
superseded), clause families (the newer adds an exception, an instruction or
a limit: a merge must keep it, a supersession is wrong) and value families
(one subject, another port or host: the newer supersedes the older; counted
with the reversals).  See ``synthetic.plant`` for the kinds:

- near-duplicates: copy-retitled 15% (same words; title case or punctuation
  and one joined sentence differ), copy-edited 20% (a sentence dropped or a
  word changed), paraphrase-light 25% (sentences reordered, ~35% of the words
  that have a synonym swapped, contractions, reworded title and summary),
  paraphrase-heavy 25% (as light with ~70% swapped, a sentence dropped and
  one added, paragraphs reordered), condensed 15% (the first half of the
  sentences, lightly reworded).  10% of the originals get two.  Same scope,
  project, type, trust and authority (explicit) as the original; created 1
  to 120 days later.
- contradictions: a short fact ("The X worker uses redis for sessions.
  Requests time out after 30 seconds. ...") and a later memory that reverses
  it, a quarter each: negation ("does not use"), no-longer ("no longer uses",
  "not ... anymore"), switch ("switched from A to B", "moved its X from A to
  B", "B now handles X instead of A") and value (same text, another number).

Everything is imported with `import_jsonl`, then `vault.sync()` embeds it with
the real model (timed, not part of the targets; ~8 minutes at 10,000 on 2
cores).  With --keep DIR the synced vault stays in DIR (one folder per size,
seed and generator version) and later runs reuse it; each run then works on a
fresh copy, so the kept vault is never maintained.

On that copy: one full `maintain` (timed: target < 60 s), scored against the
planted truth (a merge is right when both memories belong to one planted
cluster, a supersession when the planted newer memory supersedes its older
one); then `sync`; then --repeats no-op `maintain --replan` runs (planned
in full: 0 actions), --repeats no-op runs on the vault they left settled
(target < 2 s) and --repeats dry runs.  Every run uses the engine's default
settings (the copy's memvault.toml is reset) plus MEMVAULT_* variables.  Diagnostics use the vectors and neighbours
maintain plans with: the misses and false hits with their cosine and word
overlap, and pair-level what-if precision/recall at other thresholds.
Settings come from the vault's memvault.toml and the environment, so another
threshold is one variable away, e.g. MEMVAULT_CONSOLIDATION_MERGE_SIMILARITY=0.7
(the kept vault is reused: no new sync).

    .venv/bin/python -m benchmarks.maintain --size 1000
    .venv/bin/python -m benchmarks.maintain --keep /tmp/mv-bench-maintain       # 10,000; sync once
    .venv/bin/python -m benchmarks.maintain --keep /tmp/mv-bench-maintain --json > result.json
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from benchmarks.harness import (
    Parser,
    at_least_zero,
    fail,
    folder_arg,
    markdown_table,
    mb,
    module_command,
    new_vault,
    positive,
    run_child,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from stress.synthetic import Planted
    from vault_engine.format.memory import Memory
    from vault_engine.governance.actions import Action, View
    from vault_engine.governance.maintain import MaintainReport
    from vault_engine.vault import Vault

MARKER = ".bench-maintain.json"  # hidden: never scanned as a memory
TARGET_FULL_SECONDS = 60.0
TARGET_NOOP_SECONDS = 2.0
TARGET_MERGE_PRECISION = 0.99
TARGET_MERGE_RECALL = 0.8
SHOW = 10  # false positives and negatives listed per kind of action

out: TextIO = sys.stdout  # progress and tables (stderr with --json)


def say(text: str = "") -> None:
    print(text, file=out, flush=True)


def line(label: str, value: str, note: str = "") -> None:
    say(f"  {label:<26} {value:>14}  {note}".rstrip())


def share_arg(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value < 0.5:
        raise argparse.ArgumentTypeError(f"must be in [0, 0.5), got {value}")
    return value


def pairs_of(args: argparse.Namespace) -> int:
    return args.size // 50 if args.contradictions is None else int(args.contradictions)


def distinct_of(args: argparse.Namespace) -> int:
    return args.size // 50 if args.distinct is None else int(args.distinct)


def families_of(args: argparse.Namespace) -> int:
    return args.size // 100 if args.families is None else int(args.families)


def marker_for(args: argparse.Namespace) -> dict[str, Any]:
    from stress import synthetic

    return {"size": args.size, "seed": args.seed, "duplicates": args.duplicates, "contradictions": pairs_of(args),
            "distinct": distinct_of(args), "families": families_of(args),
            "generator": synthetic.GENERATOR_VERSION, "plant": synthetic.PLANT_VERSION}


def vault_name(args: argparse.Namespace) -> str:
    m = marker_for(args)
    return (f"maintain-{m['size']}-seed{m['seed']}-dup{m['duplicates']:g}-pairs{m['contradictions']}"
            f"-distinct{m['distinct']}-families{m['families']}"
            f"-g{m['generator']}-p{m['plant']}")


def planted_of(args: argparse.Namespace) -> Planted:
    from stress import synthetic

    return synthetic.plant(synthetic.Generator(args.seed), args.size, args.duplicates, pairs_of(args),
                           distinct=distinct_of(args), families=families_of(args))


def rss_mb() -> float:
    return mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


# ---------------------------------------------------------------- child: build


def build(args: argparse.Namespace) -> int:
    """Import the planted records into a new vault at --vault and sync it (real model); write the marker last."""
    from vault_engine.vault import Vault

    root: Path = args.vault
    if root.exists():
        shutil.rmtree(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    planted = planted_of(args)
    lines = [json.dumps(record, ensure_ascii=False) for record in planted.records]
    root = new_vault(root.parent, root.name)
    vault = Vault(root)
    started = time.perf_counter()
    result = vault.import_jsonl(lines, "bench-maintain")
    import_seconds = time.perf_counter() - started
    if result.errors or result.merged or len(result.added) != len(lines):
        first = result.errors[0].one_line() if result.errors else f"merged {result.merged[:1]}"
        raise RuntimeError(f"import added {len(result.added)} of {len(lines)} records "
                           f"({len(result.errors)} errors, {len(result.merged)} folded): {first}")
    line("import", f"{import_seconds:.2f} s", f"{len(result.added):,} memories")
    started = time.perf_counter()
    vault.embedder().embed(["warm up the model"])
    load_seconds = time.perf_counter() - started
    line("model load", f"{load_seconds:.2f} s", "not counted in the sync")
    started = time.perf_counter()
    report = vault.sync()
    sync_seconds = time.perf_counter() - started
    if len(report.plan.added) != len(lines) or report.problems:
        raise RuntimeError(f"sync indexed {len(report.plan.added):,} of {len(lines):,} memories "
                           f"({len(report.problems)} problems)")
    line("sync", f"{sync_seconds:.1f} s", f"{report.embedded:,} texts embedded by the model")
    marker = {**marker_for(args), "import_seconds": import_seconds, "model_load_seconds": load_seconds,
              "sync_seconds": sync_seconds, "embedded": report.embedded, "build_rss_mb": rss_mb()}
    (root / MARKER).write_text(json.dumps(marker), encoding="utf-8")
    return 0


def ensure_vault(args: argparse.Namespace, base: Path) -> tuple[Path, dict[str, Any], bool]:
    """The synced vault (built now in a child process, or reused from --keep), its marker, and whether reused."""
    root = base / vault_name(args)
    wanted = marker_for(args)
    try:
        built = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        built = None
    if isinstance(built, dict) and all(built.get(k) == v for k, v in wanted.items()):
        line("vault", "reused", str(root))
        return root, built, True
    line("build vault", "", f"{root} (import, then sync with the real model)")
    command = [*module_command("benchmarks.maintain"), "--child-build", "--vault", str(root),
               "--size", str(args.size), "--seed", str(args.seed), "--duplicates", str(args.duplicates),
               "--contradictions", str(pairs_of(args)), "--distinct", str(distinct_of(args)),
               "--families", str(families_of(args))]
    code, seconds, peak = run_child(command)
    if code != 0:
        fail(f"building the {args.size:,}-memory vault failed (child exit code {code})")
    built = json.loads((root / MARKER).read_text(encoding="utf-8"))
    built["build_rss_mb"] = peak
    (root / MARKER).write_text(json.dumps(built), encoding="utf-8")
    line("  built in", f"{seconds:.1f} s", f"peak RSS {peak:,.0f} MB")
    return root, built, False


# ---------------------------------------------------------------- diagnostics


@dataclass(frozen=True, slots=True)
class PairInfo:
    cosine: float
    text: float
    neighbours: bool  # one is among the other's top-k neighbours (what maintain compares)
    contradiction: str | None  # why contradicts(older, newer) fires, if it does
    cues: str  # negation words and update markers in the older, then the newer one

    @property
    def combined(self) -> float:
        return 0.6 * self.cosine + 0.4 * self.text

    def show(self) -> str:
        near = "" if self.neighbours else ", not top-k"
        why = f", contradicts: {self.contradiction} [{self.cues}]" if self.contradiction else ""
        return f"cos {self.cosine:.3f} words {self.text:.3f} comb {self.combined:.3f}{near}{why}"


class Diagnostics:
    """What maintain sees before it runs: memories, gist vectors and top-k neighbours."""

    def __init__(self, vault: Vault):
        import numpy as np

        from vault_engine import store
        from vault_engine.governance.actions import View
        from vault_engine.governance.similarity import Neighbours, gist_vectors
        from vault_engine.index.vectors import VectorStore
        from vault_engine.vault import now

        self.view: View = View.from_scan(vault.scan(), now(), vault.config, vault.root)
        memories = list(self.view.governed())
        embedder = vault.embedder()
        vectors = VectorStore(vault.root / store.STATE_DIR / "vectors.sqlite", embedder.name, embedder.dim)
        try:
            found = gist_vectors(vectors, (m.id for m in memories))
        finally:
            vectors.close()
        self.unit: dict[str, npt.NDArray[np.float32]] = {
            i: (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32) for i, v in found.items()}
        self.similarity = Neighbours(found, memories, k=vault.config.consolidation.neighbours)

    def memory(self, memory_id: str) -> Memory | None:
        return self.view.active.get(memory_id)

    def pair(self, a_id: str, b_id: str) -> PairInfo | None:
        from vault_engine.governance.consolidate import _order, contradicts
        from vault_engine.governance.similarity import text_similarity

        a, b = self.memory(a_id), self.memory(b_id)
        if a is None or b is None:
            return None
        va, vb = self.unit.get(a_id), self.unit.get(b_id)
        cosine = float(va @ vb) if va is not None and vb is not None else float("nan")
        near = any(i == b_id for i, _ in self.similarity.neighbours(a_id)) or \
            any(i == a_id for i, _ in self.similarity.neighbours(b_id))
        older, newer = _order(a, b)
        return PairInfo(cosine, text_similarity(a, b), near, contradicts(older, newer),
                        f"{cues(older)} | {cues(newer)}")


def cues(memory: Memory) -> str:
    """The negation words and update markers maintain's contradiction test counts in ``memory``."""
    from vault_engine.governance.consolidate import _UPDATE
    from vault_engine.retrieval.statements import NEGATION as _NEGATION

    text = f"{memory.title}\n{memory.body}"
    found = [m.lower() for m in _NEGATION.findall(text)] + [f"+{m.lower()}" for m in _UPDATE.findall(text)]
    shown = ",".join(f"{w}x{n}" if n > 1 else w for w, n in Counter(found).most_common(4))
    return shown or "none"


def what_is(planted: Planted, memory_id: str) -> str:
    if memory_id in planted.duplicate_of:
        return f"{planted.duplicate_kind[memory_id]} of {planted.duplicate_of[memory_id]}"
    if memory_id in planted.supersedes:
        return f"{planted.contradiction_kind[memory_id]} reversal of {planted.supersedes[memory_id]}"
    if memory_id in planted.superseded:
        return "contradicted fact"
    if planted.cluster(memory_id) is not None:
        return "original"
    return "base"


def clip(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# ---------------------------------------------------------------- scoring


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return markdown_table(headers, rows) if rows else "  (none planted)"


def ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def score_merges(planted: Planted, actions: Sequence[Action]) -> dict[str, Any]:
    """Merges against the planted near-duplicate clusters; a planted clause pair's own merge is scored with the
    families (:func:`score_families`: right when the clause is kept), not here."""
    from stress import synthetic

    clause_pairs = {frozenset(p) for p in planted.family_pairs.items()
                    if planted.family_of[p[0]] in synthetic.CLAUSE_FAMILIES}
    merges = [a for a in actions if a.kind == "merge" and frozenset((a.memory, a.related[0])) not in clause_pairs]
    right: list[Action] = []
    wrong: list[Action] = []
    found: set[str] = set()
    for action in merges:
        survivor, absorbed = action.memory, action.related[0]
        cluster = planted.cluster(absorbed)
        if cluster is not None and cluster == planted.cluster(survivor):
            right.append(action)
            found.add(absorbed)
        else:
            wrong.append(action)
    by_kind: dict[str, dict[str, Any]] = {}
    for dup, kind in planted.duplicate_kind.items():
        entry = by_kind.setdefault(kind, {"planted": 0, "found": 0})
        entry["planted"] += 1
        entry["found"] += dup in found
    for entry in by_kind.values():
        entry["recall"] = ratio(entry["found"], entry["planted"])
    return {"predicted": len(merges), "true": len(right), "planted": len(planted.duplicate_of),
            "precision": ratio(len(right), len(merges)), "recall": ratio(len(found), len(planted.duplicate_of)),
            "by_kind": by_kind, "wrong": wrong, "found": found}


def score_distinct(planted: Planted, actions: Sequence[Action]) -> dict[str, Any]:
    """What maintain did to the planted short distinct notes: any merge or supersession between them is wrong."""
    pairs = {frozenset(p) for p in planted.distinct_of.items()}
    merged = [a for a in actions if a.kind == "merge" and frozenset((a.memory, a.related[0])) in pairs]
    superseded = [a for a in actions if a.kind == "supersede" and frozenset((a.memory, a.related[0])) in pairs]
    members = {i for pair in pairs for i in pair}
    touched = [a for a in actions if a.kind in ("merge", "supersede") and a not in merged and a not in superseded
               and ({a.memory, *a.related} & members)]
    return {"planted": len(pairs), "merged": len(merged), "superseded": len(superseded),
            "other": len(touched), "examples": [a.reason for a in (merged + superseded + touched)[:SHOW]]}


def only_words(newer: str, older: str) -> set[str]:
    """The words of ``newer`` that ``older`` does not have (lowercased): what a merge must keep."""
    def bag(text: str) -> set[str]:
        return set(re.findall(r"\w+", text.lower()))
    return bag(newer) - bag(older)


def score_families(planted: Planted, actions: Sequence[Action], text_of: dict[str, str]) -> dict[str, Any]:
    """Merges and supersessions touching the planted families (``synthetic.FAMILIES``), by family.

    Right: a value family's newer memory superseding its own older one; a clause family's pair merged when the
    survivor's text (``text_of``: the vault after the run) still has every word only the absorbed one had.
    Anything else touching a family member is wrong: a merge or supersession between two identifier facts,
    across pairs, with a memory outside the families, or a clause lost.
    """
    from stress import synthetic

    pairs = {frozenset(p) for p in planted.family_pairs.items()}
    rows: dict[str, dict[str, Any]] = {f: {"planted": 0, "merged": 0, "superseded": 0, "right": 0, "wrong": 0,
                                           "lost": 0, "examples": []} for f in synthetic.FAMILIES}
    for newer in planted.family_pairs:
        rows[planted.family_of[newer]]["planted"] += 1
    for action in actions:
        if action.kind not in ("merge", "supersede") or not action.related:
            continue
        ids = (action.memory, action.related[0])
        families = {planted.family_of[i] for i in ids if i in planted.family_of}
        if not families:
            continue
        family = sorted(families)[0]
        entry = rows[family]
        entry["merged" if action.kind == "merge" else "superseded"] += 1
        right = False
        if frozenset(ids) in pairs and len(families) == 1:
            if family in synthetic.VALUE_FAMILIES:
                right = action.kind == "supersede" and planted.family_pairs.get(action.memory) == action.related[0]
            elif family in synthetic.CLAUSE_FAMILIES and action.kind == "merge":
                newer = ids[0] if ids[0] in planted.family_pairs else ids[1]
                older = planted.family_pairs[newer]
                original = {r["id"]: r["body"] for r in planted.records if r["id"] in ids}
                missing = only_words(original[newer], original[older]) - \
                    set(re.findall(r"\w+", text_of.get(action.memory, "").lower()))
                right = not missing
                entry["lost"] += bool(missing)
        entry["right" if right else "wrong"] += 1
        if not right and len(entry["examples"]) < 3:
            entry["examples"].append(action.reason)
    for entry in rows.values():
        acted = entry["merged"] + entry["superseded"]
        entry["precision"] = ratio(entry["right"], acted)
    identifier = sum(rows[f]["wrong"] for f in synthetic.IDENTIFIER_FAMILIES)
    clause = sum(rows[f]["wrong"] for f in synthetic.CLAUSE_FAMILIES)
    return {"by_family": rows, "identifier_wrong": identifier, "clause_wrong": clause,
            "identifier_planted": sum(rows[f]["planted"] for f in synthetic.IDENTIFIER_FAMILIES),
            "clause_planted": sum(rows[f]["planted"] for f in synthetic.CLAUSE_FAMILIES)}


def score_supersede(planted: Planted, actions: Sequence[Action]) -> dict[str, Any]:
    supersedes = [a for a in actions if a.kind == "supersede"]
    right = [a for a in supersedes if planted.supersedes.get(a.memory) == a.related[0]]
    wrong = [a for a in supersedes if planted.supersedes.get(a.memory) != a.related[0]]
    found = {a.memory for a in right}
    by_kind: dict[str, dict[str, Any]] = {}
    for newer, kind in planted.contradiction_kind.items():
        entry = by_kind.setdefault(kind, {"planted": 0, "found": 0})
        entry["planted"] += 1
        entry["found"] += newer in found
    for entry in by_kind.values():
        entry["recall"] = ratio(entry["found"], entry["planted"])
    return {"predicted": len(supersedes), "true": len(right), "planted": len(planted.supersedes),
            "precision": ratio(len(right), len(supersedes)), "recall": ratio(len(found), len(planted.supersedes)),
            "by_kind": by_kind, "wrong": wrong, "found": found}


def merge_miss(diag: Diagnostics, planted: Planted, dup: str, actions: Sequence[Action],
               info: PairInfo | None) -> str:
    """Why a planted near-duplicate was not absorbed into its cluster."""
    settings = diag.view.config.consolidation
    original = planted.duplicate_of[dup]
    for action in actions:
        if action.kind == "supersede" and dup in (action.memory, *action.related):
            other = action.related[0] if action.memory == dup else action.memory
            return f"supersede with {what_is(planted, other)} ({action.reason.split('(', 1)[-1].rstrip(')')})"
        if action.kind == "merge" and action.related[0] == dup:
            return f"merged into {action.memory} ({what_is(planted, action.memory)})"
    for action in actions:
        if action.kind == "supersede" and original in (action.memory, *action.related):
            other = action.related[0] if action.memory == original else action.memory
            return f"original in a supersede with {what_is(planted, other)}"
    if any(a.kind == "merge" and a.memory == dup for a in actions):
        return "kept as the survivor of another merge"
    if info is None:
        return "not governed before maintain"
    if not info.neighbours:
        return "not among top-k neighbours"
    if info.contradiction:
        return f"blocked as a contradiction ({info.contradiction})"
    if info.text < settings.text_similarity:
        return f"words {info.text:.2f} < text_similarity {settings.text_similarity}"
    if info.combined < settings.merge_similarity:
        return f"combined {info.combined:.2f} < merge_similarity {settings.merge_similarity}"
    return "other (cluster order, veto)"


def supersede_miss(diag: Diagnostics, planted: Planted, newer: str, actions: Sequence[Action],
                   info: PairInfo | None) -> str:
    settings = diag.view.config.consolidation
    older = planted.supersedes[newer]
    for action in actions:
        if action.kind == "supersede" and (newer in (action.memory, *action.related) or older in action.related):
            return f"superseded another pair: {action.memory} over {action.related[0]}"
        if action.kind == "merge" and {newer, older} & {action.memory, *action.related}:
            return f"merged instead ({action.reason})"
    if info is None:
        return "not governed before maintain"
    if not info.neighbours:
        return "not among top-k neighbours"
    if info.cosine < settings.conflict_similarity:
        return f"cosine {info.cosine:.2f} < conflict_similarity {settings.conflict_similarity}"
    if info.text < settings.conflict_text_similarity:
        return f"words {info.text:.2f} < conflict_text_similarity {settings.conflict_text_similarity}"
    if info.contradiction is None:
        return "no negation, update marker or changed number detected"
    return "other (trust, veto)"


def what_if(diag: Diagnostics, planted: Planted) -> dict[str, Any]:
    """Pair-level precision/recall of the merge and conflict rules at other thresholds (no clustering)."""
    from vault_engine.governance.consolidate import candidate_pairs, contradicts

    started = time.perf_counter()
    settings = diag.view.config.consolidation
    pairs = candidate_pairs(diag.view, diag.similarity, min(settings.review_similarity, 0.3))
    merge_grid = [(m, t) for m in (0.65, 0.70, 0.75, 0.80, 0.85) for t in (0.4, 0.5, 0.6)]
    merge_rows = []
    reasons = {(p.older.id, p.newer.id): contradicts(p.older, p.newer) for p in pairs}
    unrelated_top: list[tuple[float, float, float]] = []  # pairs the merge rule may take that are not planted
    for pair in pairs:
        same = planted.cluster(pair.older.id) is not None and \
            planted.cluster(pair.older.id) == planted.cluster(pair.newer.id)
        if not same and not reasons[(pair.older.id, pair.newer.id)]:
            unrelated_top.append((pair.combined, pair.text, pair.cosine))
    unrelated_top.sort(reverse=True)
    for m, t in merge_grid:
        hit = [p for p in pairs if p.combined >= m and p.text >= t and not reasons[(p.older.id, p.newer.id)]]
        good = [p for p in hit if planted.cluster(p.older.id) is not None
                and planted.cluster(p.older.id) == planted.cluster(p.newer.id)]
        dups = {i for p in good for i in (p.older.id, p.newer.id) if i in planted.duplicate_of}
        merge_rows.append({"merge_similarity": m, "text_similarity": t, "pairs": len(hit), "right": len(good),
                           "precision": ratio(len(good), len(hit)),
                           "recall": ratio(len(dups), len(planted.duplicate_of))})
    conflict_rows = []
    for c, t in [(c, t) for c in (0.55, 0.65, 0.75, 0.85) for t in (0.4, 0.5, 0.6)]:
        hit = [p for p in pairs if p.cosine >= c and p.text >= t and reasons[(p.older.id, p.newer.id)]]
        good = [p for p in hit if planted.supersedes.get(p.newer.id) == p.older.id]
        conflict_rows.append({"conflict_similarity": c, "conflict_text_similarity": t, "pairs": len(hit),
                              "right": len(good), "precision": ratio(len(good), len(hit)),
                              "recall": ratio(len(good), len(planted.supersedes))})
    return {"candidate_pairs": len(pairs), "seconds": time.perf_counter() - started, "merge": merge_rows,
            "conflict": conflict_rows, "unrelated_best": unrelated_top[:5],
            "unrelated_over": {f"{x:.2f}": sum(1 for p in unrelated_top if p[0] >= x and p[1] >= 0.5)
                               for x in (0.65, 0.70, 0.75)}}


def category(why: str) -> str:
    """A miss reason without its ids and numbers, to count alike misses together."""
    text = re.sub(r" of m-\w+| m-\w+", "", why.split(" (")[0].split(":")[0])
    return re.sub(r" \d+(?:\.\d+)?", " x", text)


def quantiles(values: Iterable[float]) -> str:
    data = sorted(v for v in values if v == v)
    if not data:
        return "n/a"
    pick = [data[0], data[len(data) // 10], data[len(data) // 2], data[-1]]
    return "min {:.2f} p10 {:.2f} med {:.2f} max {:.2f}".format(*pick)


# ---------------------------------------------------------------- main run


def timed_maintain(vault: Vault, dry_run: bool = False, replan: bool = False) -> tuple[MaintainReport, float]:
    started = time.perf_counter()
    report = vault.maintain(dry_run=dry_run, replan=replan)
    return report, time.perf_counter() - started


def evaluate(args: argparse.Namespace, root: Path, planted: Planted) -> dict[str, Any]:
    from vault_engine.vault import Vault

    vault = Vault(root)
    c = vault.config.consolidation
    line("settings", "", f"merge_similarity {c.merge_similarity}, text_similarity {c.text_similarity}, "
         f"conflict_similarity {c.conflict_similarity}, conflict_text_similarity {c.conflict_text_similarity}, "
         f"neighbours {c.neighbours}")
    started = time.perf_counter()
    diag = Diagnostics(vault)
    line("diagnostics loaded", f"{time.perf_counter() - started:.1f} s",
         f"{len(diag.unit):,} gist vectors, top-{vault.config.consolidation.neighbours} neighbours (not timed below)")
    dup_info = {d: diag.pair(d, o) for d, o in planted.duplicate_of.items()}
    sup_info = {n: diag.pair(n, o) for n, o in planted.supersedes.items()}
    extra: dict[str, Any] = {}
    if not args.no_what_if:
        extra = what_if(diag, planted)
        line("what-if pairs", f"{extra['candidate_pairs']:,}", f"cosine >= 0.3, {extra['seconds']:.1f} s")

    say("\n-- full maintain --")
    full, wall = timed_maintain(vault)
    rss_after_full = rss_mb()
    counts = full.counts()
    line("full maintain", f"{full.seconds:.2f} s", f"wall {wall:.2f} s; target < {TARGET_FULL_SECONDS:.0f} s")
    line("actions", f"{len(full.actions):,}", ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())))
    merges = score_merges(planted, full.actions)
    sups = score_supersede(planted, full.actions)

    say("\n-- merges (planted near-duplicates) --")
    line("predicted / right", f"{merges['predicted']} / {merges['true']}", f"planted {merges['planted']}")
    line("precision", fmt(merges["precision"]), f"target >= {TARGET_MERGE_PRECISION}")
    line("recall", fmt(merges["recall"]), f"target >= {TARGET_MERGE_RECALL}")
    rows = []
    groups: list[tuple[str, tuple[str, ...]]] = [(kind, (kind,)) for kind in sorted(merges["by_kind"])]
    groups += [("all copies", ("copy-retitled", "copy-edited")),
               ("all paraphrases", ("paraphrase-light", "paraphrase-heavy", "condensed"))]
    for label, kinds in groups:
        dups = [d for d, k in planted.duplicate_kind.items() if k in kinds]
        infos = [i for i in (dup_info[d] for d in dups) if i is not None]
        found = sum(1 for d in dups if d in merges["found"])
        if label.startswith("all"):
            merges["by_kind"][label] = {"planted": len(dups), "found": found, "recall": ratio(found, len(dups))}
        rows.append([label, str(len(dups)), str(found), fmt(ratio(found, len(dups))),
                     quantiles(i.cosine for i in infos), quantiles(i.text for i in infos),
                     quantiles(i.combined for i in infos)])
    say(table(["kind", "planted", "merged", "recall", "cosine", "words (dice)", "combined"], rows))

    distinct = score_distinct(planted, full.actions)
    say("\n-- short distinct notes (planted: two notes sharing most words, about different things) --")
    line("pairs planted", str(distinct["planted"]))
    line("merged / superseded", f"{distinct['merged']} / {distinct['superseded']}", "target 0 / 0")
    line("other merges or supersessions touching them", str(distinct["other"]))
    for example in distinct["examples"]:
        say(f"    {example}")

    scan = vault.scan()
    text_of = {i: f"{e.memory.title}\n{e.memory.body}" for i, e in scan.entries.items() if not e.in_trash}
    families = score_families(planted, full.actions, text_of)
    say("\n-- planted families: precision of the merges and supersessions touching them --")
    rows = []
    for family, entry in families["by_family"].items():
        acted = entry["merged"] + entry["superseded"]
        rows.append([family, str(entry["planted"]), str(entry["merged"]), str(entry["superseded"]),
                     str(entry["right"]), str(entry["wrong"]), str(entry["lost"]),
                     fmt(entry["precision"]) if acted else "1.000 (none)"])
    say(table(["family", "pairs", "merged", "superseded", "right", "wrong", "clause lost", "precision"], rows))
    for family, entry in families["by_family"].items():
        for example in entry["examples"]:
            say(f"    {family}: {clip(example, 110)}")

    say("\n-- supersessions (planted contradictions) --")
    line("predicted / right", f"{sups['predicted']} / {sups['true']}", f"planted {sups['planted']}")
    line("precision", fmt(sups["precision"]))
    line("recall", fmt(sups["recall"]))
    rows = []
    for kind, entry in sorted(sups["by_kind"].items()):
        infos = [i for n, i in sup_info.items() if planted.contradiction_kind[n] == kind and i is not None]
        rows.append([kind, str(entry["planted"]), str(entry["found"]), fmt(entry["recall"]),
                     quantiles(i.cosine for i in infos), quantiles(i.text for i in infos)])
    say(table(["kind", "planted", "superseded", "recall", "cosine", "words (dice)"], rows))

    fp_merge = []
    for action in merges["wrong"][:SHOW]:
        info = diag.pair(action.memory, action.related[0])
        fp_merge.append({"survivor": action.memory, "absorbed": action.related[0],
                         "survivor_is": what_is(planted, action.memory),
                         "absorbed_is": what_is(planted, action.related[0]),
                         "pair": info.show() if info else "-", "reason": action.reason,
                         "titles": [clip(m.title) for m in (diag.memory(action.memory),
                                                            diag.memory(action.related[0])) if m]})
    fn_merge: list[dict[str, Any]] = []
    missed_reasons: Counter[str] = Counter()
    for dup, original in planted.duplicate_of.items():
        if dup in merges["found"]:
            continue
        why = merge_miss(diag, planted, dup, full.actions, dup_info[dup])
        missed_reasons[category(why)] += 1
        if len(fn_merge) < SHOW:
            info = dup_info[dup]
            fn_merge.append({"duplicate": dup, "kind": planted.duplicate_kind[dup], "original": original,
                             "pair": info.show() if info else "-", "why": why})
    fp_sup = []
    for action in sups["wrong"][:SHOW]:
        info = diag.pair(action.memory, action.related[0])
        fp_sup.append({"newer": action.memory, "older": action.related[0],
                       "newer_is": what_is(planted, action.memory), "older_is": what_is(planted, action.related[0]),
                       "pair": info.show() if info else "-", "reason": action.reason})
    fn_sup: list[dict[str, Any]] = []
    sup_missed: Counter[str] = Counter()
    for newer, older in planted.supersedes.items():
        if newer in sups["found"]:
            continue
        why = supersede_miss(diag, planted, newer, full.actions, sup_info[newer])
        sup_missed[category(why)] += 1
        if len(fn_sup) < SHOW:
            info = sup_info[newer]
            old_m, new_m = diag.memory(older), diag.memory(newer)
            fn_sup.append({"newer": newer, "kind": planted.contradiction_kind[newer], "older": older,
                           "pair": info.show() if info else "-", "why": why,
                           "texts": [clip(m.body, 90) for m in (old_m, new_m) if m]})
    wrong_sup_kinds = Counter(f"{what_is(planted, a.memory).split(' ')[0]} over "
                              f"{what_is(planted, a.related[0]).split(' ')[0]}" for a in sups["wrong"])
    wrong_merge_kinds = Counter(f"{what_is(planted, a.related[0]).split(' ')[0]} into "
                                f"{what_is(planted, a.memory).split(' ')[0]}" for a in merges["wrong"])

    say(f"\n-- false merges: {len(merges['wrong'])} ({dict(wrong_merge_kinds)}) --")
    for item in fp_merge:
        say(f"  {item['absorbed']} ({item['absorbed_is']}) -> {item['survivor']} ({item['survivor_is']}): "
            f"{item['pair']}")
        for title in item["titles"]:
            say(f"      {title}")
    say(f"\n-- missed near-duplicates: {len(planted.duplicate_of) - len(merges['found'])} "
        f"({dict(missed_reasons.most_common())}) --")
    for item in fn_merge:
        say(f"  {item['duplicate']} ({item['kind']} of {item['original']}): {item['pair']}; {item['why']}")
    say(f"\n-- false supersessions: {len(sups['wrong'])} ({dict(wrong_sup_kinds)}) --")
    for item in fp_sup:
        say(f"  {item['newer']} ({item['newer_is']}) over {item['older']} ({item['older_is']}): {item['pair']}")
    say(f"\n-- missed contradictions: {len(planted.supersedes) - len(sups['found'])} "
        f"({dict(sup_missed.most_common())}) --")
    for item in fn_sup:
        say(f"  {item['newer']} ({item['kind']} of {item['older']}): {item['pair']}; {item['why']}")
        for text in item["texts"]:
            say(f"      {text}")

    if extra:
        say("\n-- what-if: pair-level merge rule (combined >= m and words >= t and no contradiction) --")
        say(markdown_table(["merge_similarity", "text_similarity", "pairs", "right", "precision", "dup recall"],
                           [[f"{r['merge_similarity']:.2f}", f"{r['text_similarity']:.1f}", str(r["pairs"]),
                             str(r["right"]), fmt(r["precision"]), fmt(r["recall"])] for r in extra["merge"]]))
        say("  best pairs the rule would take outside the planted clusters (combined, words, cosine): " +
            ", ".join(f"({c:.3f}, {t:.3f}, {s:.3f})" for c, t, s in extra["unrelated_best"]))
        say(f"  such pairs with words >= 0.5 and combined >= x: {extra['unrelated_over']}")
        say("\n-- what-if: pair-level conflict rule (cosine >= c and words >= t and contradicts) --")
        say(markdown_table(["conflict_similarity", "conflict_text", "pairs", "right", "precision", "recall"],
                           [[f"{r['conflict_similarity']:.2f}", f"{r['conflict_text_similarity']:.1f}",
                             str(r["pairs"]), str(r["right"]), fmt(r["precision"]), fmt(r["recall"])]
                            for r in extra["conflict"]]))

    say("\n-- after the full run --")
    started = time.perf_counter()
    resync = vault.sync()
    resync_seconds = time.perf_counter() - started
    line("sync", f"{resync_seconds:.2f} s", f"{resync.plan.summary()}; {resync.embedded} texts embedded")
    noop: list[float] = []
    noop_actions: list[int] = []
    noop_kinds: Counter[str] = Counter()
    shown: list[str] = []
    for _ in range(args.repeats):  # planned in full: the idempotence check and the planning time
        report, _ = timed_maintain(vault, replan=True)
        noop.append(report.seconds)
        noop_actions.append(len(report.actions))
        noop_kinds.update(report.counts())
        if report.actions and not shown:
            shown = [f"{a.kind} {a.memory} ({what_is(planted, a.memory)}) / "
                     f"{', '.join(f'{r} ({what_is(planted, r)})' for r in a.related[:2])}: {clip(a.reason, 90)}"
                     for a in report.actions[:SHOW]]
    line("no-op maintain, planned in full", f"{statistics.median(noop):.3f} s",
         f"median of {len(noop)} ({', '.join(f'{s:.3f}' for s in noop)}); --replan")
    line("  actions planned", ", ".join(str(n) for n in noop_actions),
         f"target 0{'; ' + str(dict(noop_kinds)) if noop_kinds else ''}")
    if shown:
        say(f"  a run after the full one planned {noop_actions[0]} actions; the first {len(shown)}:")
        for text in shown:
            say(f"    {text}")
    settled: list[float] = []
    settled_flags: list[bool] = []
    for _ in range(args.repeats):  # the vault is now settled: what `maintain` costs when nothing changed
        report, _ = timed_maintain(vault)
        settled.append(report.seconds)
        settled_flags.append(report.settled)
    line("no-op maintain, settled vault", f"{statistics.median(settled):.3f} s",
         f"median of {len(settled)} ({', '.join(f'{s:.3f}' for s in settled)}); settled: {settled_flags}; "
         f"target < {TARGET_NOOP_SECONDS:.0f} s")
    dry: list[float] = []
    for _ in range(args.repeats):
        report, _ = timed_maintain(vault, dry_run=True, replan=True)
        dry.append(report.seconds)
    line("dry-run maintain, planned in full", f"{statistics.median(dry):.3f} s", f"median of {len(dry)}")

    def public(score: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in score.items() if k not in ("wrong", "found")}

    return {
        "full_seconds": full.seconds, "full_wall": wall, "actions": counts, "merges": public(merges),
        "supersede": public(sups), "distinct": distinct, "families": families,
        "false_merges": fp_merge, "missed_duplicates": fn_merge,
        "missed_duplicate_reasons": dict(missed_reasons), "false_supersede": fp_sup, "missed_contradictions": fn_sup,
        "missed_contradiction_reasons": dict(sup_missed), "false_merge_kinds": dict(wrong_merge_kinds),
        "false_supersede_kinds": dict(wrong_sup_kinds), "what_if": extra, "resync_seconds": resync_seconds,
        "resync_embedded": resync.embedded, "noop_first_actions": shown, "noop_seconds": noop,
        "noop_median": statistics.median(noop), "noop_actions": noop_actions, "noop_kinds": dict(noop_kinds),
        "dry_seconds": dry, "dry_median": statistics.median(dry), "settled_seconds": settled,
        "settled_median": statistics.median(settled), "settled_flags": settled_flags,
        "rss_after_full_mb": rss_after_full, "rss_mb": rss_mb(),
    }


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("ok" if ok else "MISSED")


def final_table(size: int, built: dict[str, Any], reused: bool, result: dict[str, Any]) -> str:
    merges, sups = result["merges"], result["supersede"]
    values = [e for k, e in sups["by_kind"].items() if k.startswith("value")]
    mp, mr = merges["precision"], merges["recall"]
    sync_note = "(kept vault: from its build)" if reused else ""
    rows = [
        ["memories", f"{size:,}", "", f"{merges['planted']} near-duplicates, {sups['planted']} contradictions"],
        ["first sync s", f"{built['sync_seconds']:.1f}", "",
         f"{built['embedded']:,} texts embedded {sync_note}".rstrip()],
        ["full maintain s", f"{result['full_seconds']:.2f}", f"< {TARGET_FULL_SECONDS:.0f}",
         verdict(result["full_seconds"] < TARGET_FULL_SECONDS)],
        ["sync after the full run s", f"{result['resync_seconds']:.2f}", "",
         f"{result['resync_embedded']:,} texts embedded (new digests); not in the no-op times"],
        ["no-op maintain s (median)", f"{result['settled_median']:.3f}", f"< {TARGET_NOOP_SECONDS:.0f}",
         verdict(result["settled_median"] < TARGET_NOOP_SECONDS and all(result["settled_flags"]))],
        ["no-op planned in full s (median)", f"{result['noop_median']:.3f}", "",
         "maintain --replan: the same run, planning skipped no step"],
        ["no-op actions planned", ",".join(map(str, result["noop_actions"])), "0",
         verdict(not any(result["noop_actions"]))],
        ["dry-run maintain s (median)", f"{result['dry_median']:.3f}", "", "--dry-run --replan"],
        ["other actions", str(sum(n for k, n in result["actions"].items() if k not in ("merge", "supersede"))), "",
         ", ".join(f"{k} {n:,}" for k, n in sorted(result["actions"].items()) if k not in ("merge", "supersede"))],
        ["merge precision", fmt(mp), f">= {TARGET_MERGE_PRECISION}",
         verdict(None if mp is None else mp >= TARGET_MERGE_PRECISION)],
        ["merge recall", fmt(mr), f">= {TARGET_MERGE_RECALL}",
         verdict(None if mr is None else mr >= TARGET_MERGE_RECALL)],
        ["short distinct notes merged / superseded", f"{result['distinct']['merged']} / "
         f"{result['distinct']['superseded']}", "0 / 0",
         f"{result['distinct']['planted']} pairs planted; "
         + verdict(not result["distinct"]["merged"] and not result["distinct"]["superseded"])],
        ["identifier families merged / superseded", str(result["families"]["identifier_wrong"]), "0",
         f"{result['families']['identifier_planted']} pairs planted; "
         + verdict(not result["families"]["identifier_wrong"])],
        ["clause families: wrong (clause lost, superseded)", str(result["families"]["clause_wrong"]), "0",
         f"{result['families']['clause_planted']} pairs planted; " + verdict(not result["families"]["clause_wrong"])],
        ["supersede precision", fmt(sups["precision"]), "", f"{sups['true']} right of {sups['predicted']}"],
        ["supersede recall", fmt(sups["recall"]), "", f"{sups['true']} of {sups['planted']} planted"],
        ["value-change recall", fmt(ratio(sum(e["found"] for e in values), sum(e["planted"] for e in values))), "",
         "reversals that change only a value: value, value-port, value-host"],
        ["peak RSS build MB", f"{built.get('build_rss_mb', 0):,.0f}", "", "import + sync (child process)"],
        ["peak RSS maintain MB", f"{result['rss_mb']:,.0f}", "",
         f"this process; {result['rss_after_full_mb']:,.0f} after the full run"],
    ]
    return markdown_table(["measure", "value", "target", "note"], rows)


# ---------------------------------------------------------------- entry


def parser() -> Parser:
    p = Parser(prog="python -m benchmarks.maintain", description=__doc__,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=positive, default=10_000, help="memories in the vault, planted ones included "
                   "(default 10000)")
    p.add_argument("--duplicates", type=share_arg, default=0.10,
                   help="share of --size that are planted near-duplicates (default 0.10)")
    p.add_argument("--contradictions", type=at_least_zero, default=None, metavar="PAIRS",
                   help="planted contradiction pairs (two memories each; default size/50)")
    p.add_argument("--distinct", type=at_least_zero, default=None, metavar="PAIRS",
                   help="planted pairs of short distinct notes sharing most words (two memories each; default "
                   "size/50)")
    p.add_argument("--families", type=at_least_zero, default=None, metavar="PAIRS",
                   help="planted pairs of each family of synthetic.FAMILIES (identifiers, clauses, values; "
                   "default size/100)")
    p.add_argument("--seed", type=int, default=7, help="seed of the synthetic memories (default 7)")
    p.add_argument("--keep", type=folder_arg, metavar="DIR",
                   help="keep the synced vault in DIR and reuse it on later runs; maintain always runs on a "
                        "fresh copy (default: a temporary vault)")
    p.add_argument("--repeats", type=positive, default=3, help="no-op and dry-run maintain runs (default 3)")
    p.add_argument("--no-what-if", action="store_true", help="skip the pair-level threshold what-if tables")
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout (progress on stderr)")
    p.add_argument("--child-build", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--vault", type=Path, help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    global out
    args = parser().parse_args(argv)
    if args.child_build:
        from vault_engine.errors import VaultError

        if args.vault is None:
            fail("--vault is required with --child-build", 2)
        try:
            return build(args)
        except (VaultError, RuntimeError, OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    if args.json:
        out = sys.stderr
    from stress import synthetic

    try:
        planted = planted_of(args)
    except ValueError as exc:
        fail(str(exc), 2)
    say(f"memvault maintain benchmark: {args.size:,} memories ({planted.base:,} base, "
        f"{len(planted.duplicate_of):,} near-duplicates, {len(planted.supersedes):,} contradiction pairs), "
        f"seed {args.seed}, generator v{synthetic.GENERATOR_VERSION}, plant v{synthetic.PLANT_VERSION}")
    if args.keep is not None:
        try:
            args.keep.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            fail(f"cannot create --keep folder {args.keep}: {exc.strerror}", 2)
    scratch = Path(tempfile.mkdtemp(prefix="memvault-bench-maintain-"))
    try:
        root, built, reused = ensure_vault(args, args.keep if args.keep is not None else scratch)
        if args.keep is not None:
            started = time.perf_counter()
            work = scratch / "vault"
            shutil.copytree(root, work, symlinks=True)
            line("fresh copy", f"{time.perf_counter() - started:.1f} s", str(work))
        else:
            work = root
        # The engine's current defaults (a kept vault's memvault.toml holds the defaults of the day it was
        # built), plus MEMVAULT_* overrides from the environment.
        (work / "memvault.toml").write_text("# defaults: see vault_template/memvault.toml\n", encoding="utf-8")
        result = evaluate(args, work, planted)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    say("\n## maintain benchmark\n")
    say(final_table(args.size, built, reused, result))
    say("\nTimings are wall-clock on a shared machine (other jobs may run); the first sync is not a target.")
    if args.json:
        document = {"size": args.size, "seed": args.seed, "planted": {
            "base": planted.base, "duplicates": len(planted.duplicate_of),
            "contradictions": len(planted.supersedes), "distinct": len(planted.distinct_of),
            "families": len(planted.family_pairs)},
            "build": built, "reused": reused, **result}
        print(json.dumps(document, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
