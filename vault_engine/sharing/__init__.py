"""Sharing a vault through git: merge drivers for memvault\x27s own files, and their set-up."""
