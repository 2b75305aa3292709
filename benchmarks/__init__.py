"""memvault's benchmarks, one module each, run as ``python -m benchmarks.NAME`` from the checkout.

- ``small_vaults``: a new user's vault of 1 to 300 everyday memories: questions asked in a person's
  own words found, unrelated ones quiet;
- ``longmemeval``: retrieval on LongMemEval's development pool: turn recall and the sessions'
  recall_any / recall_all / nDCG per question type, beside plain BM25, and what indexing cost;
- ``floor_longmemeval``: the relevance floor on LongMemEval's development pool;
- ``import_haystacks``: every haystack of that pool through ``import``: the lines refused (none) and
  the records kept with escapes;
- ``haystacks``: LongMemEval's haystacks imported as a user's vaults (what the two above share);
  ``bm25``, a plain BM25 baseline; ``reading``, what indexing makes the model read and a naive
  fastembed pass to compare it with;
- ``choose_floors``: the relevance floors chosen on the floor benchmarks' kept answers together,
  checked leave-one-out;
- ``floors``: the floor arithmetic they share (and ``scripts/eval_floor.py``, LoCoMo's);
- ``cjk_probe``: Chinese and Japanese searches, found and answered;
- ``cache_check``: what checking the caches costs (every vector the embedding cache reads, the
  int8 graph's digest);
- ``context_recall``: how much of a LoCoMo question's evidence the context manifest lists, per budget;
- ``locomo``: the LoCoMo conversations as a user's vaults, the questions and their gold turns (shared
  with ``scripts/eval_locomo.py`` and the scripts built on it).

The older benchmarks and the stress tools still live in ``scripts/`` beside the harness they share
(``bench_sync.py``, ``synthetic.py``).
"""
