"""The tools Claude answers through: one JSON schema per question memvault asks, and the limits of each field.

Each call in :mod:`.claude` forces one of these tools, so the answer is the
tool call's ``input``, checked against the same limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import DELTA_OPS, RECALLS

if TYPE_CHECKING:
    from anthropic.types import ToolParam

MAX_TITLE, MAX_SUMMARY, MAX_TRIGGER, MAX_TAG, MAX_DETAIL = 120, 400, 200, 40, 2000
MAX_DELTAS, MAX_DELTA_TEXT, MAX_REASON = 20, 4000, 300
MAX_INPUT_CHARS = 60_000  # text sent per call; longer text is cut (callers chunk documents already)
TRIGGER_START = "When I need"

SYSTEM = (
    "You maintain the long-term memory of an AI agent. Memories are short markdown files the agent "
    "reads later. Answer only by calling the tool you are given, with every field filled in."
)

SENSE_TOOL: ToolParam = {
    "name": "report_topic",
    "description": "Report whether the new turn changes the topic of the buffered conversation "
    "and how loaded the buffer is.",
    "input_schema": {
        "type": "object",
        "properties": {
            "topic_shift": {
                "type": "boolean",
                "description": "True when the new turn starts a different subject from the buffer; "
                "false for follow-ups, acknowledgements and short replies.",
            },
            "load": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "How complete and substantial the buffer plus the new turn is as one memory: "
                "0 = just started, 1 = a finished exchange that should be saved now.",
            },
        },
        "required": ["topic_shift", "load"],
    },
}

DIGEST_TOOL: ToolParam = {
    "name": "write_digest",
    "description": "Write the head of one memory: title, summary, trigger, recall mode and tags.",
    "input_schema": {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": MAX_TITLE, "description": "A short specific title."},
            "summary": {"type": "string", "maxLength": MAX_SUMMARY,
                        "description": "One to three sentences: what was said, decided or learned."},
            "trigger": {"type": "string", "maxLength": MAX_TRIGGER,
                        "description": "When the agent should recall this, from the agent's side, "
                        "starting 'When I need'."},
            "recall": {"type": "string", "enum": list(RECALLS),
                       "description": "passive: always in context (standing rules, preferences); "
                       "active: found by search when relevant; both."},
            "tags": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string"},
                     "description": "1 to 3 short lower-case tags, reusing existing tags where they fit."},
        },
        "required": ["title", "summary", "trigger", "recall", "tags"],
    },
}

DETAIL_TOOL: ToolParam = {
    "name": "write_detail",
    "description": "Write a detailed summary of the text.",
    "input_schema": {
        "type": "object",
        "properties": {
            "detail": {"type": "string", "description": "A detailed summary in 3 to 8 sentences of plain prose."},
        },
        "required": ["detail"],
    },
}

REFLECT_TOOL: ToolParam = {
    "name": "propose_deltas",
    "description": "Propose learning deltas for the agent's inferred memories from the recent evidence.",
    "input_schema": {
        "type": "object",
        "properties": {
            "deltas": {
                "type": "array",
                "maxItems": MAX_DELTAS,
                "description": "One entry per change worth making; an empty list when nothing is to be learned.",
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": list(DELTA_OPS),
                               "description": "create: a new memory; update: new text for the target; "
                               "supersede: the target no longer holds; forget: the target is useless; "
                               "noop: the evidence needs no change."},
                        "target": {"type": "string",
                                   "description": "The id of the memory changed (required for update, "
                                   "supersede and forget; empty for create)."},
                        "title": {"type": "string", "maxLength": MAX_TITLE,
                                  "description": "A short specific title (for create and update)."},
                        "text": {"type": "string", "maxLength": MAX_DELTA_TEXT,
                                 "description": "The memory's full new text (required for create and update)."},
                        "reason": {"type": "string", "maxLength": MAX_REASON,
                                   "description": "One sentence: which evidence supports this."},
                    },
                    "required": ["op", "reason"],
                },
            },
        },
        "required": ["deltas"],
    },
}


COMPRESS_TOOL: ToolParam = {
    "name": "write_compressed",
    "description": "Rewrite a standing rule shorter, keeping every instruction it gives.",
    "input_schema": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": MAX_DETAIL,
                     "description": "The rule, shorter: every instruction, name, number and condition kept; "
                     "no new content."},
        },
        "required": ["text"],
    },
}

JUDGE_TOOL: ToolParam = {
    "name": "report_judgement",
    "description": "Answer the yes-or-no question about the memory.",
    "input_schema": {
        "type": "object",
        "properties": {
            "answer": {"type": "boolean", "description": "The answer to the question."},
            "confident": {"type": "boolean", "description": "False when the memory does not let you tell."},
        },
        "required": ["answer", "confident"],
    },
}

SYNTHESIS_TOOL: ToolParam = {
    "name": "write_synthesis",
    "description": "Write one higher-level memory over related memories: what they say together.",
    "input_schema": {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": MAX_TITLE,
                      "description": "A short title naming the theme, person or project they share."},
            "text": {"type": "string", "maxLength": MAX_DETAIL,
                     "description": "An overview in 2 to 6 sentences: what the memories establish together, "
                     "with names, dates and numbers; only what they say."},
        },
        "required": ["title", "text"],
    },
}
