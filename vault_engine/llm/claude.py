"""The Anthropic implementation of :class:`~.base.Llm`: structured output through tool use.

Each method sends one ``messages.create`` with a single tool whose
``input_schema`` describes the answer and ``tool_choice`` forcing that tool,
then validates the tool call's ``input`` strictly: a reply that does not fit
raises :class:`~vault_engine.errors.LlmUnavailable` instead of writing junk.

- **sense** (fast model): ``report_topic`` {topic_shift, load}.
- **digest** (strong model for ``kind="conversation"``, which is compaction;
  fast model otherwise): ``write_digest`` {title, summary, trigger, recall, tags}.
- **detail** (fast model): ``write_detail`` {detail}.
- **reflect** (strong model): ``propose_deltas`` {deltas: [{op, target, title,
  text, reason}]}; an unknown op, an update/supersede/forget without a
  target, or a create/update without text makes the whole reply unusable.
- **compress** (fast model): ``write_compressed`` {text}.
- **dormant**, **stale** (fast model): ``report_judgement`` {answer,
  confident}; an answer given without confidence is no answer (``LlmUnsure``).
- **synthesize** (strong model): ``write_synthesis`` {title, text}.

:attr:`ClaudeLlm.name` is ``anthropic:<fast_model>``, the model behind most
calls; conversation digests use ``strong_model`` (both are in the settings).

Rate limits (429), overload and other 5xx answers, request timeouts (408),
connection errors and timeouts are retried up to ``max_retries`` times with
exponential backoff (1 s, 2 s, 4 s ... capped at 30 s, or the server's
``retry-after``); other errors are not.  Every failure leaves as a one-line
``LlmUnavailable`` naming the cause, never with the API key in it.

The ``anthropic`` package is imported only when a :class:`ClaudeLlm` is made.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from ..config import LlmSettings
from ..errors import LlmUnavailable, LlmUnsure
from ..format.text import clip
from .base import DELTA_OPS, RECALLS, Delta, Digest, Sense, Synthesis, Turn
from .claude_tools import (
    COMPRESS_TOOL,
    DETAIL_TOOL,
    DIGEST_TOOL,
    JUDGE_TOOL,
    MAX_DELTA_TEXT,
    MAX_DELTAS,
    MAX_DETAIL,
    MAX_INPUT_CHARS,
    MAX_REASON,
    MAX_SUMMARY,
    MAX_TAG,
    MAX_TITLE,
    MAX_TRIGGER,
    REFLECT_TOOL,
    SENSE_TOOL,
    SYNTHESIS_TOOL,
    SYSTEM,
    TRIGGER_START,
)

if TYPE_CHECKING:
    from anthropic import APIStatusError
    from anthropic.types import ToolParam

BACKOFF_BASE = 1.0  # seconds before the first retry; doubles after each
BACKOFF_CAP = 30.0  # the longest computed wait
RETRY_AFTER_CAP = 60.0  # the longest wait a server's retry-after can ask for
class ClaudeLlm:
    """:class:`~.base.Llm` through the Anthropic Messages API.

    ``http_client`` (an ``httpx2.Client``) and ``sleep`` are for tests: a mock
    transport and a clock that does not wait.
    """

    def __init__(self, settings: LlmSettings, api_key: str, *, http_client: Any = None,
                 sleep: Callable[[float], None] = time.sleep):
        if not api_key.strip():
            raise LlmUnavailable("no Anthropic API key (set ANTHROPIC_API_KEY)")
        try:
            import anthropic
        except ImportError:
            raise LlmUnavailable("the anthropic package is not installed (pip install anthropic)") from None
        self.settings = settings
        self._key = api_key
        self._sleep = sleep
        self._client = anthropic.Anthropic(api_key=api_key, timeout=settings.timeout, max_retries=0,
                                           http_client=http_client)

    @property
    def name(self) -> str:
        return f"anthropic:{self.settings.fast_model}"

    # ------------------------------------------------------------ the methods

    def sense(self, buffer: Sequence[Turn], turn: Turn) -> Sense:
        prompt = (
            "Below is a buffer of conversation turns not yet saved to memory, then a new turn.\n\n"
            f"<buffer>\n{_cut(_transcript(buffer)) or '(empty)'}\n</buffer>\n\n"
            f"<new_turn>\n{_cut(_transcript([turn]))}\n</new_turn>\n\n"
            "Does the new turn shift the topic away from the buffer, and how loaded is the buffer with it?"
        )
        answer = self._call(self.settings.fast_model, prompt, SENSE_TOOL, max_tokens=200)
        shift = answer.get("topic_shift")
        load = answer.get("load")
        if not isinstance(shift, bool):
            raise _unusable("report_topic", "topic_shift is not a boolean")
        if isinstance(load, bool) or not isinstance(load, int | float) or not math.isfinite(load):
            raise _unusable("report_topic", "load is not a number")
        return Sense(topic_shift=shift, load=min(1.0, max(0.0, float(load))))

    def digest(self, text: str, existing_tags: Sequence[str], kind: str = "conversation") -> Digest:
        what = "a conversation transcript" if kind == "conversation" else f"a part of a {kind}"
        tags = ", ".join(existing_tags) if existing_tags else "(none yet)"
        prompt = (
            f"Write the head of one memory for {what}.\n\n"
            f"<text>\n{_cut(text)}\n</text>\n\n"
            f"The vault's existing tags: {tags}\n\n"
            "- title: short and specific.\n"
            "- summary: what was said, decided or learned, in one to three sentences.\n"
            "- trigger: when the agent should recall this, written from the agent's side, "
            f"starting '{TRIGGER_START}'.\n"
            "- recall: passive (always in context: standing rules, preferences), active (found by search), or both.\n"
            "- tags: 1 to 3; reuse the existing tags that fit before inventing new ones."
        )
        model = self.settings.strong_model if kind == "conversation" else self.settings.fast_model
        answer = self._call(model, prompt, DIGEST_TOOL, max_tokens=1024)
        recall = answer.get("recall")
        if recall not in RECALLS:
            raise _unusable("write_digest", f"recall is not one of {'|'.join(RECALLS)}")
        trigger = _text(answer, "trigger", "write_digest", MAX_TRIGGER)
        if not trigger.casefold().startswith("when i"):
            trigger = clip(f"{TRIGGER_START} {trigger}", MAX_TRIGGER)
        return Digest(
            title=_text(answer, "title", "write_digest", MAX_TITLE),
            summary=_text(answer, "summary", "write_digest", MAX_SUMMARY),
            trigger=trigger,
            recall=str(recall),
            tags=_tags(answer.get("tags"), existing_tags),
        )

    def detail(self, text: str) -> str:
        prompt = f"Write a detailed summary of this text in 3 to 8 sentences.\n\n<text>\n{_cut(text)}\n</text>"
        answer = self._call(self.settings.fast_model, prompt, DETAIL_TOOL, max_tokens=1024)
        return _text(answer, "detail", "write_detail", MAX_DETAIL)

    def reflect(self, evidence: Sequence[Mapping[str, Any]], memories: Sequence[Mapping[str, Any]]) -> list[Delta]:
        prompt = (
            "Below are recent events from the agent's experience journal (outcomes reported for memories it was "
            "given, corrections a person made, tasks it was given memories for) and the memories they involve.\n\n"
            f"<events>\n{_cut(json.dumps(list(evidence), ensure_ascii=False, default=str))}\n</events>\n\n"
            f"<memories>\n{_cut(json.dumps(list(memories), ensure_ascii=False, default=str))}\n</memories>\n\n"
            "Propose what the agent should learn, as deltas on its inferred memories:\n"
            "- create: a lasting lesson the evidence shows and no memory states yet;\n"
            "- update: an inferred memory whose text the evidence shows should say something else;\n"
            "- supersede: an inferred memory the evidence shows no longer holds;\n"
            "- forget: an inferred memory that is repeatedly ignored or overridden and never helps;\n"
            "- noop: nothing to change.\n"
            "Memories with authority explicit were set by a person: do not propose to change them. "
            "Propose only what the evidence supports, and an empty list when nothing is to be learned."
        )
        answer = self._call(self.settings.strong_model, prompt, REFLECT_TOOL, max_tokens=2048)
        return _deltas(answer.get("deltas"))

    def compress(self, text: str) -> str:
        prompt = (
            "This is a standing rule an AI agent keeps in its always-loaded memory. Rewrite it shorter: keep "
            "every instruction, name, number and condition, drop repetition and filler, add nothing.\n\n"
            f"<rule>\n{_cut(text)}\n</rule>"
        )
        answer = self._call(self.settings.fast_model, prompt, COMPRESS_TOOL, max_tokens=1024)
        return _text(answer, "text", "write_compressed", MAX_DETAIL)

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool:
        tasks = "\n".join(f"- {clip(t, 200)}" for t in recent_tasks[:50]) or "(none)"
        prompt = (
            "An AI agent keeps this standing rule in its always-loaded memory.\n\n"
            f"<rule>\n{_cut(text)}\n</rule>\n\nThe tasks it was given lately:\n<tasks>\n{_cut(tasks)}\n</tasks>\n\n"
            "Is the rule dormant: none of these tasks needed it, and nothing suggests it will be needed soon? "
            "Answer confident=false when you cannot tell."
        )
        return self._judge(prompt)

    def stale(self, text: str) -> bool:
        prompt = (
            "An AI agent keeps this note about work in progress.\n\n"
            f"<note>\n{_cut(text)}\n</note>\n\n"
            "Is it stale: the work it tracks is finished, abandoned or superseded, so the note no longer helps? "
            "Answer confident=false when you cannot tell."
        )
        return self._judge(prompt)

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis:
        listed = "\n\n".join(f"<memory id=\"{m.get('id', '')}\" title=\"{m.get('title', '')}\">\n"
                              f"{clip(m.get('text', ''), 4000)}\n</memory>" for m in members)
        prompt = (
            "These memories of an AI agent are related (one theme, person or project). Write one higher-level "
            "memory over them: a short title and an overview of what they establish together.\n\n"
            f"{_cut(listed)}"
        )
        answer = self._call(self.settings.strong_model, prompt, SYNTHESIS_TOOL, max_tokens=1024)
        return Synthesis(title=_text(answer, "title", "write_synthesis", MAX_TITLE),
                         text=_text(answer, "text", "write_synthesis", MAX_DETAIL))

    def _judge(self, prompt: str) -> bool:
        answer = self._call(self.settings.fast_model, prompt, JUDGE_TOOL, max_tokens=200)
        verdict, confident = answer.get("answer"), answer.get("confident")
        if not isinstance(verdict, bool) or not isinstance(confident, bool):
            raise _unusable("report_judgement", "answer and confident are not booleans")
        if not confident:
            raise LlmUnsure("the model could not tell")
        return verdict

    # ------------------------------------------------------------ the call

    def _call(self, model: str, prompt: str, tool: ToolParam, *, max_tokens: int) -> Mapping[str, object]:
        """The forced tool call's input; retries what is temporary, raises ``LlmUnavailable`` otherwise."""
        import anthropic

        attempts = max(0, self.settings.max_retries) + 1
        cause = "failed"
        for attempt in range(attempts):
            wait: float | None = None
            try:
                reply = self._client.messages.create(
                    model=model,
                    max_tokens=max_tokens,
                    system=SYSTEM,
                    messages=[{"role": "user", "content": prompt}],
                    tools=[tool],
                    tool_choice={"type": "tool", "name": tool["name"]},
                )
            except anthropic.APIStatusError as exc:
                cause = self._status_cause(exc, model)
                if not _retryable(exc.status_code):
                    raise LlmUnavailable(f"Anthropic API {cause}") from None
                wait = _retry_after(exc.response.headers)
            except anthropic.APITimeoutError:
                cause = f"timed out ({self.settings.timeout:g} s)"
            except anthropic.APIConnectionError:
                cause = "unreachable (connection error)"
            except anthropic.AnthropicError as exc:  # an unparseable response, bad credentials setup ...
                raise LlmUnavailable(f"Anthropic API failed ({type(exc).__name__})") from None
            else:
                return _tool_input(reply, tool["name"])
            if attempt + 1 < attempts:
                self._sleep(wait if wait is not None else min(BACKOFF_CAP, BACKOFF_BASE * 2**attempt))
        plural = "s" if attempts > 1 else ""
        raise LlmUnavailable(f"Anthropic API {cause} after {attempts} attempt{plural}")

    def _status_cause(self, exc: APIStatusError, model: str) -> str:
        status = exc.status_code
        if status == 429:
            return "rate limited (429)"
        if status == 529:
            return "overloaded (529)"
        if status >= 500:
            return f"server error ({status})"
        if status == 401:
            return "rejected the API key (401)"
        if status == 403:
            return "refused access (403)"
        if status == 404:
            return f"does not know model {model!r} (404)"
        message = exc.api_message if isinstance(exc.api_message, str) else ""  # any JSON in practice
        detail = f": {clip(self._scrub(message), 200)}" if message.strip() else ""
        return f"rejected the request ({status}){detail}"

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "[key]") if self._key else text


# ---------------------------------------------------------------- helpers


def _retryable(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a ``retry-after`` header asks for (seconds or an HTTP date), capped; None without one."""
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if not math.isfinite(seconds):
        return None
    return min(RETRY_AFTER_CAP, max(0.0, seconds))


def _tool_input(reply: object, tool: str) -> Mapping[str, object]:
    """The input of the ``tool`` call in ``reply`` (which the SDK leaves unchecked: any JSON, or text)."""
    content = getattr(reply, "content", None)
    if not isinstance(content, list):
        raise LlmUnavailable("Anthropic reply is not a message")
    for block in content:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == tool:
            value = getattr(block, "input", None)
            if not isinstance(value, dict):
                raise _unusable(tool, "input is not an object")
            return value
    stop = getattr(reply, "stop_reason", None)
    raise LlmUnavailable(f"Anthropic reply has no {tool} tool call (stop reason: {stop})")


def _unusable(tool: str, why: str) -> LlmUnavailable:
    return LlmUnavailable(f"Anthropic reply unusable: {tool} {why}")


def _text(answer: Mapping[str, object], key: str, tool: str, limit: int) -> str:
    value = answer.get(key)
    if not isinstance(value, str) or not value.strip():
        raise _unusable(tool, f"{key} is not a non-empty string")
    return clip(value, limit)


def _tags(value: object, existing: Sequence[str]) -> tuple[str, ...]:
    """1-3 distinct tags, spelled as the vault already spells them."""
    if not isinstance(value, list) or not 1 <= len(value) <= 3:
        raise _unusable("write_digest", "tags is not a list of 1 to 3 strings")
    if not all(isinstance(t, str) and t.strip() for t in value):
        raise _unusable("write_digest", "tags holds an empty or non-string tag")
    spelling = {t.casefold(): t for t in reversed(existing)}
    tags: dict[str, str] = {}
    for tag in (" ".join(str(t).split()) for t in value):
        tags.setdefault(tag.casefold(), spelling.get(tag.casefold(), clip(tag, MAX_TAG)))
    return tuple(tags.values())


def _deltas(value: object) -> list[Delta]:
    """The proposed deltas, checked strictly (any unusable entry makes the reply unusable)."""
    tool = "propose_deltas"
    if not isinstance(value, list) or len(value) > MAX_DELTAS:
        raise _unusable(tool, f"deltas is not a list of at most {MAX_DELTAS}")
    out = []
    for n, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise _unusable(tool, f"delta {n} is not an object")
        op = item.get("op")
        if op not in DELTA_OPS:
            raise _unusable(tool, f"delta {n} op is not one of {'|'.join(DELTA_OPS)}")
        fields = {}
        for key in ("target", "title", "text", "reason"):
            field = item.get(key, "")
            if field is None:
                field = ""
            if not isinstance(field, str):
                raise _unusable(tool, f"delta {n} {key} is not a string")
            fields[key] = field.strip()
        if op in ("update", "supersede", "forget") and not fields["target"]:
            raise _unusable(tool, f"delta {n} ({op}) has no target")
        if op in ("create", "update") and not fields["text"]:
            raise _unusable(tool, f"delta {n} ({op}) has no text")
        out.append(Delta(
            op=str(op),
            target=None if op == "create" or not fields["target"] else fields["target"],
            title=clip(" ".join(fields["title"].split()), MAX_TITLE),
            text=fields["text"][:MAX_DELTA_TEXT],
            reason=clip(" ".join(fields["reason"].split()), MAX_REASON),
        ))
    return out


def _transcript(turns: Sequence[Turn]) -> str:
    return "\n\n".join(f"{t.role.capitalize()}: {t.content.strip()}" for t in turns)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_INPUT_CHARS else text[:MAX_INPUT_CHARS] + "\n[... cut ...]"
