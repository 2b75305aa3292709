"""The language-model layer: one narrow interface, two implementations.

:class:`~.base.Llm` is what ingestion, the detail tier and reflection call.
:class:`~.offline.OfflineLlm` is deterministic and needs nothing (extractive
summaries, keyword triggers, tag reuse, rule-based classification);
:class:`~.claude.ClaudeLlm` uses the official Anthropic SDK with structured
output through tool use.  Both give the same shapes, so files look the same
whichever wrote them.  :func:`select` picks one from the settings.
"""
