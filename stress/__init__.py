"""memvault under bad input, crashes, concurrency and hostile content, one module each, run as
``python -m stress.NAME`` from the checkout (``python -m stress``: all of them, one table).

- ``fuzz_files``: seeded malformed memory files into parse, scan, sync, search, context and maintain;
- ``crash``: SIGKILL ``memvault`` at random points of import, sync, maintain and correct, then recovery;
- ``concurrency``: many writers, syncs and readers at once with ``memvault watch`` running;
- ``edges``: sizes past the limits, HTTP requests no client should send, values of the wrong type;
- ``inputs``: characters no file can hold, and ids two files claim;
- ``secret_paths``: every kind of secret of the corpus through every way text enters a vault;
- ``sharing``: a shared vault under hostile commits and killed syncs: what leaks, what breaks;
- ``synthetic``: deterministic synthetic memories (the crash harness's and the benchmarks' vaults);
- ``secret_corpus``: the kinds of secret and their look-alikes (the tests', ``secret_paths``' and
  ``benchmarks.secret_detection``'s corpus).

This package imports only ``vault_engine``; the tests may import it, and so may the benchmarks.
"""
