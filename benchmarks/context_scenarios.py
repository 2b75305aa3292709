#!/usr/bin/env python3
"""Evaluate the context director on a hand-labelled scenario suite.

The suite (``benchmarks/context_scenarios.json``) holds memories of three
projects plus global ones and 30 tasks, each with the memories a careful
engineer would want the agent to know (labelled by judgement, not copied
from the engine's output).  The script builds a fresh vault in a temporary
folder (real offline embedding model), runs ``context.build(...,
record=False)`` for every task at each budget and prints:

* recall of the relevant memories (delivered anywhere: resident or manifest),
  also without the always-delivered profile memories ("task-specific");
* precision of the resident part and of the manifest;
* the share of the budget used;
* cross-project leaks, computed from the suite's own data (a delivered
  memory that belongs to another project): any leak makes the exit status 1.

Then, at the largest budget: recall per project and the relevant memories
missed most often, each with the reason it was missed.

    .venv/bin/python -m benchmarks.context_scenarios [--budgets 2000,4000,6000] [--json] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vault_engine.context.director import TaskRequest, build, match, search_depth
from vault_engine.context.manifest import Manifest
from vault_engine.format.ids import new_memory_id
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.retrieval.selectors import path_matches
from vault_engine.store import create_vault
from vault_engine.vault import Vault

DATA = Path(__file__).with_name("context_scenarios.json")
TARGET_RECALL = 0.9
TARGET_BUDGET = 6000
UNLIMITED = 10**7  # a budget nothing is cut for: tells "cut by the budget" from "never a candidate"


# ---------------------------------------------------------------- the suite


@dataclass(frozen=True, slots=True)
class Task:
    number: int
    project: str
    task: str
    relevant: frozenset[str]  # names, including the ones relevant to every task
    specific: frozenset[str]  # names labelled for this task alone
    path: str | None = None
    operation: str | None = None
    phase: str | None = None
    kind: str | None = None

    def request(self, budget: int) -> TaskRequest:
        return TaskRequest(self.task, path=self.path, operation=self.operation, phase=self.phase, kind=self.kind,
                           project=self.project, budget=budget)


@dataclass(slots=True)
class Suite:
    memories: list[dict[str, Any]]  # records with a "name" key
    tasks: list[Task]
    projects: list[str]
    always: frozenset[str]
    project_of: dict[str, str | None] = field(default_factory=dict)  # name -> project (None: global)


def load_suite(path: Path) -> Suite:
    data = json.loads(path.read_text(encoding="utf-8"))
    memories: list[dict[str, Any]] = data["memories"]
    names = [m["name"] for m in memories]
    duplicates = [n for n, c in Counter(names).items() if c > 1]
    if duplicates:
        raise ValueError(f"duplicate memory names: {', '.join(duplicates)}")
    projects = list(data["projects"])
    project_of: dict[str, str | None] = {}
    for memory in memories:
        project = memory.get("project")
        if project is not None and project not in projects:
            raise ValueError(f"memory {memory['name']}: unknown project {project}")
        project_of[memory["name"]] = project if memory.get("scope", "project") == "project" else None
    always = frozenset(data.get("relevant_to_every_task", []))
    tasks: list[Task] = []
    for number, raw in enumerate(data["tasks"], 1):
        specific = frozenset(raw["relevant"])
        unknown = sorted((specific | always) - set(names))
        if unknown:
            raise ValueError(f"task {number}: unknown relevant memories {', '.join(unknown)}")
        if raw["project"] not in projects:
            raise ValueError(f"task {number}: unknown project {raw['project']}")
        foreign = sorted(n for n in specific if project_of[n] not in (None, raw["project"]))
        if foreign:
            raise ValueError(f"task {number}: labels memories of another project: {', '.join(foreign)}")
        tasks.append(Task(number, raw["project"], raw["task"], specific | always, specific, raw.get("path"),
                          raw.get("operation"), raw.get("phase"), raw.get("kind")))
    return Suite(memories, tasks, projects, always, project_of)


def load_vault(root: Path, suite: Suite) -> tuple[Vault, dict[str, str], float]:
    """A fresh vault holding the suite's memories; (vault, id -> name, seconds to sync)."""
    create_vault(root, git=False)
    vault = Vault(root, auto_sync=False)
    name_of: dict[str, str] = {}
    lines = []
    for memory in suite.memories:
        record = {k: v for k, v in memory.items() if k != "name"}
        record["id"] = new_memory_id()
        name_of[record["id"]] = memory["name"]
        lines.append(json.dumps(record))
    result = vault.import_jsonl(lines, "context_scenarios.json")
    if result.errors or len(result.added) != len(lines):
        problems = "; ".join(str(e) for e in result.errors) or f"{len(result.added)} of {len(lines)} added"
        raise ValueError(f"import failed: {problems}")
    started = time.perf_counter()
    vault.sync()
    return vault, name_of, time.perf_counter() - started


# ---------------------------------------------------------------- scoring


@dataclass(slots=True)
class Outcome:
    task: Task
    budget: int
    resident: list[str]  # names
    manifest: list[str]
    used: int
    leaks: list[str]

    @property
    def delivered(self) -> set[str]:
        return set(self.resident) | set(self.manifest)

    @property
    def missed(self) -> list[str]:
        return sorted(self.task.relevant - self.delivered)

    def recall(self, labels: frozenset[str] | None = None) -> float | None:
        wanted = self.task.relevant if labels is None else labels
        return len(wanted & self.delivered) / len(wanted) if wanted else None


def leaks_of(task: Task, names: list[str], suite: Suite) -> list[str]:
    """Delivered memories that belong to another project (from the suite's data, not the engine's logic)."""
    return [n for n in names if n.startswith("<unknown ") or suite.project_of[n] not in (None, task.project)]


def run(vault: Vault, suite: Suite, name_of: dict[str, str], task: Task, budget: int) -> tuple[Outcome, Manifest]:
    manifest = build(vault, task.request(budget), record=False)
    resident = [name_of.get(item.id, f"<unknown {item.id}>") for item in manifest.resident]
    listed = [name_of.get(item.id, f"<unknown {item.id}>") for item in manifest.manifest]
    if len(manifest.markdown) > budget:
        raise AssertionError(f"task {task.number}: {len(manifest.markdown)} characters for a budget of {budget}")
    return Outcome(task, budget, resident, listed, manifest.used, leaks_of(task, resident + listed, suite)), manifest


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def precision(names: list[str], relevant: frozenset[str]) -> float | None:
    return sum(1 for n in names if n in relevant) / len(names) if names else None


def summarise(outcomes: list[Outcome], budget: int) -> dict[str, Any]:
    return {
        "budget": budget,
        "recall": mean([r for o in outcomes if (r := o.recall()) is not None]),
        "specific_recall": mean([r for o in outcomes if (r := o.recall(o.task.specific)) is not None]),
        "resident_precision": mean([p for o in outcomes if (p := precision(o.resident, o.task.relevant)) is not None]),
        "manifest_precision": mean([p for o in outcomes if (p := precision(o.manifest, o.task.relevant)) is not None]),
        "budget_used": mean([o.used / budget if budget else 0.0 for o in outcomes]),
        "delivered": mean([float(len(o.delivered)) for o in outcomes]),
        "resident": mean([float(len(o.resident)) for o in outcomes]),
        "leaks": sum(len(o.leaks) for o in outcomes),
    }


# ---------------------------------------------------------------- why a relevant memory was missed


def selector_reason(row: Any, request: TaskRequest) -> str:
    """Which selector of ``row`` shut it out of ``request`` (mirrors the documented selector semantics)."""
    if row.paths and request.path is not None and not path_matches(tuple(row.paths), request.path):
        return f"path globs {list(row.paths)} do not match {request.path}"
    if row.tasks and request.kind is not None:
        return f"tasks {list(row.tasks)} do not include kind {request.kind!r} (nor a word of the task)"
    if row.operations and request.operation is not None:
        return f"operations {list(row.operations)} do not include {request.operation!r}"
    if row.phases and request.phase is not None:
        return f"phases {list(row.phases)} do not include {request.phase!r}"
    return "excluded by a selector"


def explain(vault: Vault, name: str, memory_id: str, task: Task, name_of: dict[str, str]) -> tuple[str, str]:
    """(category, detail) of why ``name`` was not delivered for ``task`` at the budget under study."""
    unlimited, _ = run_unlimited(vault, task, name_of)
    if name in unlimited:
        return "budget", "a candidate, cut to fit the budget"
    row = vault.searcher().rows({memory_id}).get(memory_id)
    if row is None:
        return "index", "not in the catalog"
    request = task.request(UNLIMITED)
    admitted, _why, matched = match(row, request, task.project)
    if not admitted:
        return "selector", selector_reason(row, request)
    standing = row.type == "core-profile" or row.recall in ("passive", "both") or matched > 0
    if standing:
        return "other", "standing candidate yet not delivered"
    depth = search_depth(UNLIMITED)  # as deep as the director searched for the unlimited budget
    result = vault.search(SearchQuery(task.task, limit=depth, project=task.project, path=task.path, candidates=True))
    hit = next((h for h in result.hits if h.id == memory_id), None)
    if hit is None:
        return "search", f"no selector matched and not in the search's top {depth}"
    best = max(hit.similarity.values(), default=0.0)
    return "search", (f"no selector matched; in the search hits but below the relevance floor, sharing no word "
                      f"and cosine {best:.2f} < min_similarity {vault.config.context.min_similarity}")


_UNLIMITED_CACHE: dict[int, tuple[set[str], Manifest]] = {}


def run_unlimited(vault: Vault, task: Task, name_of: dict[str, str]) -> tuple[set[str], Manifest]:
    if task.number not in _UNLIMITED_CACHE:
        manifest = build(vault, task.request(UNLIMITED), record=False)
        _UNLIMITED_CACHE[task.number] = ({name_of.get(i, i) for i in manifest.ids}, manifest)
    return _UNLIMITED_CACHE[task.number]


# ---------------------------------------------------------------- output


def fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def print_report(rows: list[dict[str, Any]], focus: int, per_project: dict[str, float | None],
                 missed: list[dict[str, Any]], outcomes: list[Outcome], suite: Suite, verbose: bool,
                 sync_seconds: float) -> None:
    print(f"Context director evaluation: {len(suite.memories)} memories "
          f"({len(suite.projects)} projects + global), {len(suite.tasks)} tasks; vault synced in {sync_seconds:.1f} s")
    print(f"Always-relevant labels added to every task: {', '.join(sorted(suite.always))}\n")
    print("| budget | recall | recall (task-specific) | resident precision | manifest precision | budget used "
          "| delivered / resident (mean) | cross-project leaks |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['budget']:,} | {fmt(row['recall'])} | {fmt(row['specific_recall'])} "
              f"| {fmt(row['resident_precision'])} | {fmt(row['manifest_precision'])} "
              f"| {fmt(row['budget_used'])} | {fmt(row['delivered'], 1)} / {fmt(row['resident'], 1)} "
              f"| {row['leaks']} |")
    focus_row = next(r for r in rows if r["budget"] == focus)
    recall_ok = focus_row["recall"] is not None and focus_row["recall"] >= TARGET_RECALL
    leaks = sum(r["leaks"] for r in rows)
    print(f"\nTargets: recall >= {TARGET_RECALL} at {focus:,}: {fmt(focus_row['recall'])} "
          f"{'MET' if recall_ok else 'NOT MET'};  cross-project leaks = 0: {leaks} {'MET' if not leaks else 'FAILED'}")
    print(f"\nRecall per project at {focus:,}:")
    for project, value in per_project.items():
        print(f"  {project:24} {fmt(value)}")
    print(f"\nRelevant memories most often missed at {focus:,} (tasks missing it; why):")
    if not missed:
        print("  none")
    for item in missed:
        reasons = "; ".join(f"{r} (x{c})" if c > 1 else r for r, c in item["reasons"].items())
        print(f"  {item['name']:32} {item['tasks']:2}  {reasons}")
    categories = Counter(c for item in missed for c in item["categories"].elements())
    if categories:
        print("\nMisses by cause: " + ", ".join(f"{c} {n}" for c, n in categories.most_common()))
    leaked = [(o.budget, o.task.number, n) for o in outcomes for n in o.leaks]
    if leaked:
        print("\nLEAKS (budget, task, memory): " + ", ".join(f"({b}, {t}, {n})" for b, t, n in leaked))
    if verbose:
        print(f"\nPer task at {focus:,}:")
        for outcome in (o for o in outcomes if o.budget == focus):
            t = outcome.task
            extra = ", ".join(f"{k}={v}" for k, v in (("path", t.path), ("kind", t.kind),
                                                      ("operation", t.operation), ("phase", t.phase)) if v)
            print(f"  {t.number:2}. [{t.project.rsplit('/', 1)[-1]}] {t.task} ({extra})  "
                  f"recall {fmt(outcome.recall())}, used {outcome.used}")
            print(f"      resident: {', '.join(outcome.resident) or '-'}")
            print(f"      manifest: {', '.join(outcome.manifest) or '-'}")
            if outcome.missed:
                print(f"      MISSED:   {', '.join(outcome.missed)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budgets", default="2000,4000,6000", help="comma-separated budgets (default 2000,4000,6000)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    parser.add_argument("--verbose", action="store_true", help="also list what each task got at the focus budget")
    parser.add_argument("--data", type=Path, default=DATA, help=f"the scenario file (default {DATA.name})")
    args = parser.parse_args()
    try:
        budgets = sorted({int(b) for b in args.budgets.split(",") if b.strip()})
    except ValueError:
        parser.error(f"--budgets must be comma-separated integers, got {args.budgets!r}")
    if not budgets or min(budgets) < 0:
        parser.error("--budgets needs at least one budget >= 0")
    focus = TARGET_BUDGET if TARGET_BUDGET in budgets else budgets[-1]
    try:
        suite = load_suite(args.data)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: bad scenario file {args.data}: {exc}", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="memvault-eval-context-"))
    try:
        vault, name_of, sync_seconds = load_vault(work / "vault", suite)
        id_of = {name: memory_id for memory_id, name in name_of.items()}
        outcomes: list[Outcome] = []
        for budget in budgets:
            for task in suite.tasks:
                outcomes.append(run(vault, suite, name_of, task, budget)[0])
        rows = [summarise([o for o in outcomes if o.budget == b], b) for b in budgets]
        at_focus = [o for o in outcomes if o.budget == focus]
        per_project = {p: mean([r for o in at_focus if o.task.project == p and (r := o.recall()) is not None])
                       for p in suite.projects}
        reasons: dict[str, Counter[str]] = defaultdict(Counter)
        categories: dict[str, Counter[str]] = defaultdict(Counter)
        for outcome in at_focus:
            for name in outcome.missed:
                category, detail = explain(vault, name, id_of[name], outcome.task, name_of)
                reasons[name][detail] += 1
                categories[name][category] += 1
        missed = [{"name": n, "tasks": sum(reasons[n].values()), "reasons": dict(reasons[n]),
                   "categories": categories[n]} for n in sorted(reasons, key=lambda n: (-sum(reasons[n].values()), n))]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    leaks = sum(r["leaks"] for r in rows)
    if args.json:
        print(json.dumps({
            "memories": len(suite.memories), "tasks": len(suite.tasks), "budgets": rows,
            "targets": {"recall": TARGET_RECALL, "recall_budget": focus, "leaks": 0},
            "per_project_recall": per_project,
            "missed": [{k: (dict(v) if isinstance(v, Counter) else v) for k, v in m.items()} for m in missed],
            "per_task": [{"budget": o.budget, "task": o.task.number, "project": o.task.project, "text": o.task.task,
                          "recall": o.recall(), "used": o.used, "resident": o.resident, "manifest": o.manifest,
                          "missed": o.missed, "leaks": o.leaks} for o in outcomes],
        }, indent=2))
    else:
        print_report(rows, focus, per_project, missed, outcomes, suite, args.verbose, sync_seconds)
    if leaks:
        print(f"error: {leaks} cross-project leak(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
