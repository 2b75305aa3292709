"""Sharing a vault through git: ``memvault git sync``, merging memvault's own files, settling a merge."""
