"""memvault's benchmarks, one module each, run as ``python -m benchmarks.NAME`` from the checkout.

Speed (synthetic vaults from ``stress.synthetic`` unless said otherwise):

- ``core``: ``memvault import``, ``list --json`` and ``--help`` through the real CLI, and peak memory;
- ``sync``: the first full sync, an unchanged re-sync and peak memory, per vault size;
- ``search``: in-process latency, a cold ``memvault search`` process and peak memory, per vault size;
- ``watch``: how soon an edited file is searchable under ``memvault watch``;
- ``freshness``: the check every read makes (what changed on disk since the last sync);
- ``context_latency``: ``memvault context`` in process and as a cold process on a built vault;
- ``servers``: ``memvault serve`` and ``memvault mcp`` against a cold CLI;
- ``maintain``: merges and supersessions against planted truth, and their time;
- ``hook_sizes``: the Claude Code hooks on 1,000 and 10,000 memories, cold and through a server;
- ``hook_latency``: every hook and ``memvault mcp``'s handshake as the agent runs them, cold, warm
  and through a server;
- ``git_sync``: ``memvault git sync`` with nothing to do and after 100 remote changes;
- ``segment``: what splitting the scripts written without spaces costs text that has none;
- ``locomo_index``: indexing a LoCoMo conversation against the embedder's own speed;
- ``cache_check``: what checking the caches costs.

Quality:

- ``locomo_eval``: LoCoMo retrieval, R@5, R@10 and MRR of the gold turns, per record format;
- ``locomo_ingest``: LoCoMo through conversation ingestion (gold turns inside the episodes found);
- ``context_recall``: how much of a LoCoMo question's evidence the context manifest lists, per budget;
- ``context_scenarios``: the context director on the hand-labelled suite ``context_scenarios.json``;
- ``small_vaults``: a new user's vault of 1 to 300 everyday memories: questions asked in a person's
  own words found, unrelated ones quiet;
- ``longmemeval``: retrieval on LongMemEval's development pool: turn recall and the sessions'
  recall_any / recall_all / nDCG per question type, beside plain BM25, and what indexing cost;
- ``import_haystacks``: every haystack of that pool through ``import``: the lines refused (none) and
  the records kept with escapes;
- ``floor_locomo`` and ``floor_longmemeval``: the relevance floor, foreign questions left unanswered
  against own questions' recall; ``choose_floors``: the floors chosen on their kept answers
  together, checked leave-one-out;
- ``cjk_probe``: Chinese and Japanese searches, found and answered;
- ``secret_detection``: redaction on the secrets corpus (``stress.secret_corpus``), against
  detect-secrets;
- ``agent_sessions``: whole agent sessions with and without memvault.

Probes: ``ranking_probe`` (re-orderings of ``locomo_eval``'s dumped rankings), ``rerank_probe``
(what a learned re-ranker could add).

Shared, not run: ``harness`` (arguments, child processes, timing, tables, ``--json``, where the
data lies), ``locomo`` (the LoCoMo conversations as vaults, the questions and their gold turns),
``episodes`` (LoCoMo through ingestion, scored), ``haystacks`` (LongMemEval's haystacks as vaults),
``bm25`` (a plain BM25 baseline), ``reading`` (what indexing makes the model read, and a naive
fastembed pass), ``floors`` (the floor arithmetic).

A benchmark imports shared modules, never another benchmark; see docs/development.md for what may
import what.
"""
