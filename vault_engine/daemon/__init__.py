"""The daemon: the watcher that keeps a vault current while it runs (``memvault watch``, and inside
the servers): sync as files change, vectors filled, maintenance, learning and git sync when due."""
