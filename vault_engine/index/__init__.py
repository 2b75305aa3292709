"""Derived, rebuildable indexes: embeddings, vectors and full text.

Sync is plan, then apply: disk (what the files hold) and plan (pure: the changes) feed sync
(applying them to the catalog, vectors, full text, pages and vocabulary, from what derived says
each index holds of a memory).  The watcher that runs sync as files change is
:mod:`vault_engine.daemon.watch`.
"""
