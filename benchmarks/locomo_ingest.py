#!/usr/bin/env python3
"""LoCoMo through conversation ingestion: are the gold turns inside the episodes search finds?

Each LoCoMo conversation is replayed into its own fresh vault through
``vault_engine.ingest.conversation.ingest`` on the offline path (``ANTHROPIC_API_KEY``
is removed from this process's environment and ``[llm] provider`` is forced to
``offline``): one ingest session per LoCoMo session, ``flush=True`` at its end,
so every turn lands in an episode whose body holds it verbatim under a
``### role · ts`` heading.  A turn is ingested as::

    {"role": "user" (speaker_a) | "assistant" (speaker_b),
     "content": "<speaker name>: <text>[ [shares a photo: <caption>]]",
     "ts": "<session date, ISO 8601>"}

which is what a chat exporter gives: the gold turns are found in the episode bodies by their
verbatim text (unique per conversation with the heading).  ``--dia-ids`` (a diagnostic, not
the user's path) appends `` [#<session>:<turn>]`` to each turn's content.

With ``--dia-ids`` the trailing marker (``[#12:3]`` for dia_id ``D12:3``) makes each turn's
dia_id recoverable from the episode body.  It is written without the letter
on purpose: ``D12`` would be a content word to the offline model (three
characters), shared by every turn of sessions 10 and up, so it would change
where episodes are cut and show up in triggers.  This marker leaves the
segmentation exactly as without it, but its digits are indexed, which no user's turn has.
Questions never contain a dia id; the benchmark checks and prints it.

The indexes are then built by the real sync engine with the bundled embedding
model, and each question (categories 1-4 with evidence after cleaning; 5
reported apart) is one ``MemoryService.search`` (what ``POST /v1/search`` and MCP
``memory_search`` call) with ``limit`` 5 and
``types: ["episode"]`` in the question's own vault.  Printed:

* evidence R@1 / R@3 / R@5: the share of gold turns whose ingested text lies
  verbatim in the raw body of one of the top-k episodes; MRR of the first
  episode holding a gold turn;
* context: characters of the top-5 episodes (full bodies, and title + summary
  as a manifest shows them) against the whole stored conversation;
* completeness: every ingested turn, with its heading, found verbatim in
  exactly one episode body ("turns findable: N of N");
* timing: ingest and sync seconds, median query milliseconds.

Usage:
    .venv/bin/python -m benchmarks.locomo_ingest [--data ../shared/bench/locomo_dev.json]
        [--limit-conversations N] [--cache DIR] [--json]

The data is CC BY-NC 4.0 and is read from where it lies; nothing is copied.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.episodes import measure, print_report
from benchmarks.locomo import DEFAULT_DATA


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the LoCoMo JSON (default: %(default)s)")
    parser.add_argument("--limit-conversations", type=int, default=0, metavar="N",
                        help="only the first N conversations (0: all)")
    parser.add_argument("--cache", type=Path, metavar="DIR",
                        help="keep the built vaults here (per version and conversation id) and reuse them")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--dia-ids", action="store_true",
                        help="diagnostic, not the user's path: append a [#s:t] marker to each turn, so every "
                             "turn's dia id can be read back from the episode bodies")
    args = parser.parse_args()
    if not args.data.is_file():
        raise SystemExit(f"error: benchmark data not found at {args.data} (use --data)")
    data: list[dict[str, Any]] = json.loads(args.data.read_text(encoding="utf-8"))
    if args.limit_conversations:
        data = data[: args.limit_conversations]
    result = measure(data, args.cache, dia_ids=args.dia_ids, quiet=args.json)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_report(result)
    if result["turns_findable"] != result["turns"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
