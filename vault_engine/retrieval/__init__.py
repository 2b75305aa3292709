"""Retrieval: the searcher, a short pipeline over its stages.

request (what is asked and answered) -> filters -> lanes and feedback (candidates) -> fusion
(RRF, boosts) -> rerank -> hits and explain (why-lines) -> neighbours -> collapse (true
duplicates, conflicts side by side, limit, budget).  Beside them: statements (the values a text
names, for collapse), selectors (path globs), threads (conversation turns), temporal (the dates
a question names) and dates (a memory's day in words, spans, the calendar).
"""
