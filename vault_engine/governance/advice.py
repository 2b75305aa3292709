"""What governance asks a language model, each question asked once and remembered.

Planners are pure functions of the view.  The few steps that need a model's
judgement (compressing a long hot rule, whether a rule is dormant, whether an
in-progress note is stale, the text of a synthesis) ask an :class:`Advisor`,
which asks each question once: answers are kept in ``.memvault/advice.json``
(derived state), keyed by the model, the kind of question and a hash of what
was asked.  A second plan (the settled check, a dry run and then the real
run, the next ``maintain``) asks nothing again and plans the same.

No answer is ``None``: offline, the model unavailable, its reply unusable or
the model unsure.  Every caller then does what is safe (nothing is
compressed, no rule is stubbed); an unavailable model is asked again on the
next run, not in this one.  :meth:`Advisor.failed` tells a model that failed
(asked, and it could not answer) from one that answered it cannot tell (an
answer, remembered like any other) and from no model at all (offline).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import LlmUnavailable, LlmUnsure
from ..fsio import write_atomic

if TYPE_CHECKING:
    from ..llm.base import Llm, Synthesis

ADVICE_FILE = Path(".memvault") / "advice.json"
MAX_ANSWERS = 20_000  # the cache keeps the newest answers beyond this


class Advisor:
    """Asks ``llm`` on behalf of the planners; ``Advisor()`` has no model and answers nothing."""

    def __init__(self, llm: Llm | None = None, root: Path | None = None):
        self.llm = llm
        self.path = root / ADVICE_FILE if root is not None else None
        self._answers: dict[str, Any] = self._load()
        self._unavailable: set[str] = set()  # kinds the model failed on in this run: not asked again
        self.asked = 0  # questions sent to the model in this run
        self._dirty = False

    @property
    def model(self) -> str | None:
        return self.llm.name if self.llm is not None else None

    def compress(self, text: str) -> str | None:
        found = self._ask("compress", {"text": text}, lambda llm: llm.compress(text), str)
        return found if isinstance(found, str) else None

    def dormant(self, text: str, recent_tasks: Sequence[str]) -> bool | None:
        tasks = list(recent_tasks)
        found = self._ask("dormant", {"text": text, "tasks": tasks}, lambda llm: llm.dormant(text, tasks), bool)
        return found if isinstance(found, bool) else None

    def stale(self, text: str) -> bool | None:
        found = self._ask("stale", {"text": text}, lambda llm: llm.stale(text), bool)
        return found if isinstance(found, bool) else None

    def synthesize(self, members: Sequence[Mapping[str, str]]) -> Synthesis | None:
        from ..llm.base import Synthesis

        listed = [dict(m) for m in members]
        found = self._ask("synthesize", {"members": listed},
                          lambda llm: _synthesis_json(llm.synthesize(listed)), dict)
        if not isinstance(found, dict) or not isinstance(found.get("title"), str) or not isinstance(
                found.get("text"), str):
            return None
        return Synthesis(found["title"], found["text"])

    def failed(self, kind: str | None = None) -> bool:
        """Whether a model was asked in this run and failed (on questions of ``kind``, or of any kind):
        unreachable, timed out, an unusable reply.  Offline and "cannot tell" are not failures."""
        return bool(self._unavailable) if kind is None else kind in self._unavailable

    def save(self) -> None:
        """Keep the answers for the next run (derived state: losing them only means asking again)."""
        if not self._dirty or self.path is None:
            return
        answers = self._answers
        if len(answers) > MAX_ANSWERS:
            answers = dict(list(answers.items())[-MAX_ANSWERS:])
        try:
            write_atomic(self.path, json.dumps(answers, ensure_ascii=False, sort_keys=False).encode("utf-8"))
        except OSError:
            return  # a read-only or full disk: the model is asked again next time
        self._dirty = False

    # ------------------------------------------------------------ internals

    def _ask(self, kind: str, question: Mapping[str, Any], call: Callable[[Llm], object], shape: type) -> object:
        if self.llm is None or kind in self._unavailable:
            return None
        key = _key(self.llm.name, kind, question)
        if key in self._answers:
            return self._answers[key]
        try:
            self.asked += 1
            answer = call(self.llm)
        except LlmUnsure:  # an answer: the model cannot tell, and asking again would not tell more
            if self.llm.name != "offline":
                self._answers[key] = None
                self._dirty = True
            return None
        except LlmUnavailable:
            if self.llm.name == "offline":
                return None  # offline answers nothing, and that needs no remembering
            self._unavailable.add(kind)
            return None
        if not isinstance(answer, shape):
            return None
        if self.llm.name != "offline":  # offline answers are rules of thumb: made again at no cost
            self._answers[key] = answer
            self._dirty = True
        return answer

    def _load(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # missing or damaged: asked again
        return data if isinstance(data, dict) else {}


def _key(model: str, kind: str, question: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(json.dumps(question, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()
    return f"{model}|{kind}|{digest[:32]}"


def _synthesis_json(found: Synthesis) -> dict[str, str]:
    return {"title": found.title, "text": found.text}
