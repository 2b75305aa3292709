"""Retrieval: the searcher, its lanes, fusion, re-ranking, selectors, threads and dates."""
