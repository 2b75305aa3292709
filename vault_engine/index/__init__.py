"""Derived, rebuildable indexes: embeddings, vectors and full text."""
