#!/usr/bin/env python3
"""Every LongMemEval haystack of the development pool through ``import``: how many lines are refused.

Each question's haystack is imported into a vault of its own, each session as the chat export a
chat tool writes (``{"role", "content", "ts"}`` per line, both roles, a file named by the session's
place, never its id: :func:`benchmarks.haystacks.export_lines`), through :meth:`Vault.import_jsonl`, what
``memvault import`` calls, with the indexes left alone (no sync: the question is what the files
keep).  It counts the lines refused, and the records kept with ``⟨U+XXXX⟩`` escapes (with the
code points escaped).

Usage:
    .venv/bin/python -m benchmarks.import_haystacks [--data FILE] [--limit N]

The data is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.haystacks import DEFAULT_DATA, export_lines, export_name, sessions_of
from vault_engine.store import create_vault
from vault_engine.vault import Vault


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=0, help="only the first N haystacks (default: all)")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"error: benchmark data not found at {args.data} (use --data)")
    with gzip.open(args.data, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    if args.limit:
        data = data[: args.limit]
    lines = refused = escaped = 0
    codes: collections.Counter[str] = collections.Counter()
    examples: list[str] = []
    started = time.perf_counter()
    for item in data:
        sessions, _evidence = sessions_of(item)
        with tempfile.TemporaryDirectory(prefix="lme-import-") as folder:
            root = Path(folder) / "vault"
            create_vault(root, git=False)
            vault = Vault(root)
            for turns in sessions:
                records = export_lines(turns)
                result = vault.import_jsonl(records, export_name(turns))
                lines += len(records)
                refused += len(result.errors)
                examples += [f"{item['question_id']}: {e.one_line()}" for e in result.errors[:2]]
                for record in getattr(result, "escaped", []):
                    escaped += 1
                    codes.update(code for _field, found in record.fields for code in found)
    seconds = time.perf_counter() - started
    print(f"haystacks {len(data)}, lines {lines}, refused {refused}, kept with escapes {escaped} "
          f"({', '.join(f'{code} x{n}' for code, n in sorted(codes.items())) or 'none'}), {seconds:.0f} s")
    for example in examples[:10]:
        print(f"  refused: {example[:200]}", file=sys.stderr)


if __name__ == "__main__":
    main()
