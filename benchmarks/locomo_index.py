#!/usr/bin/env python3
"""Indexing a LoCoMo conversation against the embedder's own speed, in one run.

For each development conversation, in this one process and with the model
loaded once beforehand:

- **fastembed, each turn once**: the same model (the int8 all-MiniLM-L6-v2
  memvault ships) embeds every turn's text once, two ways: as fastembed's
  defaults do it (the turns in order, ``batch_size=256``), and tuned (the
  turns sorted by length, memvault's ``[embedding] batch_size``), the
  strongest baseline there is.  memvault runs the model as its int8 graph
  (``[embedding] int8``, the default), and so do these two; a third, tuned,
  runs the packaged float graph, what fastembed runs when given the model as
  it ships.
- **memvault**: the turns as a chat importer writes them (the ``chat`` format
  of ``benchmarks/locomo_eval.py``: no summary, a thread source, the speaker as a
  tag) through ``Vault.import_jsonl`` and ``Vault.sync``, what ``memvault import``
  then ``memvault sync`` run, with an empty embedding cache: nothing is
  reused from an earlier run.  The split: until the full text answers (the
  first half of the sync), and the vectors after.
- **rebuilt with a warm cache**: ``rm -rf .memvault``, then ``sync`` again.

It prints each conversation's times (median of ``--repeats``), the ratios to
both baselines, the texts and tokens the model read per memory, and the
medians over the conversations.

    .venv/bin/python -m benchmarks.locomo_index [--data ../shared/bench/locomo_dev.json]
        [--conversations 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from benchmarks import locomo
from vault_engine import config as config_mod
from vault_engine.index.embedder import FastEmbedder
from vault_engine.index.embedding_cache import model_text
from vault_engine.store import STATE_DIR, create_vault
from vault_engine.vault import Vault


def _tokens(tokenizer: Any, texts: list[str], window: int) -> int:
    """Tokens the model reads for ``texts`` ([CLS] and [SEP] included, each cut at ``window``)."""
    return sum(min(window, len(encoding.ids)) for encoding in tokenizer.encode_batch(texts))


def _vault(folder: Path, cache: Path) -> Vault:
    if folder.exists():
        shutil.rmtree(folder)
    create_vault(folder, git=False)
    loaded = config_mod.load(folder)
    settings = dataclasses.replace(loaded, cache=dataclasses.replace(loaded.cache, dir=str(cache)))
    return Vault(folder, settings)


def measure(sample: dict[str, Any], repeats: int, work: Path) -> dict[str, Any]:
    records, _owners = locomo.memory_records(locomo.turns_of(sample), "chat",
                                             str(sample.get("sample_id", "x")))
    lines = [json.dumps(record) for record in records]
    turns = [record["body"] for record in records]
    probe = _vault(work / "probe", work / "probe-cache")
    embedder = cast(FastEmbedder, probe.embedder())  # the real model: its loaded session and tokenizer are read below
    window = probe.config.embedding.max_tokens
    batch = probe.config.embedding.batch_size
    model = embedder._load()  # the loaded fastembed TextEmbedding (warm: not timed)
    list(model.embed(["warm up"]))
    exact = FastEmbedder(dataclasses.replace(probe.config.embedding, int8=False), work / "float-models")
    float_model = exact._load()  # the packaged float graph
    list(float_model.embed(["warm up"]))
    default, tuned, floats, imports, words, vectors, rebuilt = [], [], [], [], [], [], []
    embedded = cached = 0
    texts_read: list[str] = []
    for attempt in range(repeats):
        started = time.perf_counter()
        list(model.embed(turns))  # fastembed's defaults: batch_size 256, in order
        default.append(time.perf_counter() - started)
        started = time.perf_counter()
        list(model.embed(sorted(turns, key=len), batch_size=batch))
        tuned.append(time.perf_counter() - started)
        started = time.perf_counter()
        list(float_model.embed(sorted(turns, key=len), batch_size=batch))
        floats.append(time.perf_counter() - started)

        vault = _vault(work / "vault", work / f"cache-{attempt}")  # an empty cache every time
        vault._embedder = embedder
        calls: list[str] = []  # every text the model reads: embedded, or a host whose sentences are pooled
        original, original_spans = embedder.embed, embedder.embed_spans

        def counting(texts: Any, original: Any = original, calls: list[str] = calls) -> Any:
            calls.extend(texts)
            return original(texts)

        def counting_spans(texts: Any, spans: Any, original: Any = original_spans, calls: list[str] = calls) -> Any:
            calls.extend(texts)
            return original(texts, spans)

        embedder.embed = counting  # type: ignore[method-assign]
        embedder.embed_spans = counting_spans  # type: ignore[method-assign]
        try:
            started = time.perf_counter()
            imported = vault.import_jsonl(lines, "locomo")
            imports.append(time.perf_counter() - started)
            if imported.errors:
                raise SystemExit(f"import failed: {imported.errors[0].one_line()}")
            started = time.perf_counter()
            first = vault.sync(vectors=False)
            words.append(time.perf_counter() - started)
            started = time.perf_counter()
            filled = vault.fill_vectors()
            vectors.append(time.perf_counter() - started)
            if first.pending != len(records) or filled.remaining:
                raise SystemExit(f"expected {len(records)} memories to fill, got {first.pending}")
            embedded, cached, texts_read = filled.embedded, filled.cached, list(calls)
            shutil.rmtree(vault.root / STATE_DIR)
            started = time.perf_counter()
            again = Vault(vault.root, vault.config, embedder=embedder).sync()
            rebuilt.append(time.perf_counter() - started)
            if again.embedded:
                raise SystemExit(f"the rebuild embedded {again.embedded} texts; the cache should have had them")
        finally:
            embedder.embed = original  # type: ignore[method-assign]
            embedder.embed_spans = original_spans  # type: ignore[method-assign]
    tokenizer = embedder._token_tool()
    model_tokens = _tokens(tokenizer, [model_text(t, window) for t in texts_read], window)
    turn_tokens = _tokens(tokenizer, turns, window)
    memvault = statistics.median(i + w + v for i, w, v in zip(imports, words, vectors, strict=True))
    return {
        "conversation": str(sample.get("sample_id", "?")), "memories": len(records),
        "fastembed_default": statistics.median(default), "fastembed_tuned": statistics.median(tuned),
        "fastembed_float": statistics.median(floats),
        "import": statistics.median(imports), "words": statistics.median(words),
        "vectors": statistics.median(vectors), "memvault": memvault, "rebuilt": statistics.median(rebuilt),
        "embedded": embedded, "cached": cached, "model_tokens": model_tokens, "turn_tokens": turn_tokens,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations (0: all)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per conversation (median; default 3)")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"error: benchmark data not found at {args.data} (use --data)")
    if args.repeats < 1:
        raise SystemExit("error: --repeats must be at least 1")
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        data = data[: args.conversations]
    rows = []
    work = Path(tempfile.mkdtemp(prefix="memvault-bench-locomo-index-"))
    try:
        for sample in data:
            row = measure(sample, args.repeats, work)
            rows.append(row)
            print(f"  {row['conversation']}: {row['memories']} turns, memvault {row['memvault']:.2f} s, "
                  f"fastembed {row['fastembed_default']:.2f} s (defaults) / {row['fastembed_tuned']:.2f} s (tuned) / "
                  f"{row['fastembed_float']:.2f} s (tuned, float graph)",
                  file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n## indexing a LoCoMo conversation (chat format, `import` + `sync`, empty embedding cache)\n")
    print("| conversation | turns | fastembed defaults s | fastembed tuned s | fastembed tuned, float graph s "
          "| memvault s | full text ready s | vectors s | x defaults | x tuned | x tuned float | texts / memory "
          "| tokens / memory (turn) | warm-cache rebuild s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        n = r["memories"]
        print(f"| {r['conversation']} | {n} | {r['fastembed_default']:.2f} | {r['fastembed_tuned']:.2f} "
              f"| {r['fastembed_float']:.2f} | {r['memvault']:.2f} | {r['import'] + r['words']:.2f} "
              f"| {r['vectors']:.2f} "
              f"| {r['memvault'] / r['fastembed_default']:.2f} | {r['memvault'] / r['fastembed_tuned']:.2f} "
              f"| {r['memvault'] / r['fastembed_float']:.2f} "
              f"| {r['embedded'] / n:.2f} | {r['model_tokens'] / n:.1f} ({r['turn_tokens'] / n:.1f}) "
              f"| {r['rebuilt']:.2f} |")
    ratio_default = statistics.median(r["memvault"] / r["fastembed_default"] for r in rows)
    ratio_tuned = statistics.median(r["memvault"] / r["fastembed_tuned"] for r in rows)
    ratio_float = statistics.median(r["memvault"] / r["fastembed_float"] for r in rows)
    print(f"\nmedian over {len(rows)} conversations: memvault / fastembed each turn once = {ratio_default:.2f} "
          f"(fastembed's defaults), {ratio_tuned:.2f} (tuned: sorted by length, batch "
          f"{config_mod.EmbeddingSettings().batch_size}), {ratio_float:.2f} (tuned, the packaged float graph); "
          f"warm-cache rebuild / first index = "
          f"{statistics.median(r['rebuilt'] / r['memvault'] for r in rows):.2f}")


if __name__ == "__main__":
    main()
