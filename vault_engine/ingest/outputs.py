"""A session's long tool outputs: the first two given back whole, the later ones as references.

:func:`remember_session_output` keeps a long output exactly as
:func:`~vault_engine.ingest.documents.remember_output` does (one ``document``
memory per part, ``trust: external``) and then gives it its place among the
long outputs of the agent's session.  The first :data:`RAW_OUTPUTS` are given
back raw, so the agent reads them whole; from the next one on, the short
reference stands in for the output (its id expands it).  A short output is
neither stored nor counted.  The same output again in one session (a retry)
keeps the place it had.

The places are derived state, one small JSON file per session under
``.memvault/outputs/`` (never in git; deleting one only starts that session's
count again), written atomically under one lock, so two outputs of a session
kept at once never take the same place.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import fsio, locks
from ..errors import InvalidInput
from ..format.redact import holds_secret, redact
from ..patterns import lazy_pattern
from .documents import OutputResult, remember_output

if TYPE_CHECKING:
    from ..llm.base import Llm
    from ..vault import Vault

RAW_OUTPUTS = 2  # long outputs of a session given back whole before references stand in
OUTPUTS_DIR = ".memvault/outputs"
_PLAIN = lazy_pattern(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True)
class SessionOutput:
    """What :func:`remember_session_output` did, and what to show in place of the output."""

    result: OutputResult
    session: str
    position: int | None = None  # its place among the session's long outputs (1: the first); None: not kept

    @property
    def raw(self) -> bool:
        """Whether the output is given back as it came (short, or one of the session's first long ones)."""
        return self.position is None or self.position <= RAW_OUTPUTS

    @property
    def shown(self) -> str:
        """What stands in the output's place: the output itself, or the reference to the stored one."""
        return self.result.text if self.raw else self.result.reference

    def to_json(self) -> dict[str, Any]:
        return {**self.result.to_json(), "session": self.session, "position": self.position, "raw": self.raw}


def session_file(root: Path, session: str) -> Path:
    """The file holding the places of ``session``'s long outputs (an id that is not plain is hashed).

    Raises:
        InvalidInput: the session id is blank.
    """
    if not session.strip():
        raise InvalidInput("name the session: --session ID")
    plain = _PLAIN.fullmatch(session) and not holds_secret(session)  # a secret never names a file
    name = session if plain else hashlib.sha256(session.encode("utf-8")).hexdigest()[:24]
    return root / OUTPUTS_DIR / f"{name}.json"


def remember_session_output(vault: Vault, text: str, /, *, session: str, source: str, llm: Llm,
                            min_chars: int | None = None, project: str | None = None) -> SessionOutput:
    """Keep a long tool output of ``session`` (see the module docs) and say whether it is shown raw.

    Raises:
        InvalidInput: a blank session id, no tool name, or ``min_chars`` below 0.
        LlmUnavailable: the model could not digest a part (nothing is written or counted).
    """
    path = session_file(vault.root, session)
    result = remember_output(vault, text, source=source, llm=llm, min_chars=min_chars, project=project)
    if not result.stored or not result.ids:
        return SessionOutput(result, session)
    return SessionOutput(result, session, place(vault, path, session, result.ids[0]))


def place(vault: Vault, path: Path, session: str, output: str) -> int:
    """The place of ``output`` (the id of its first part) among the long outputs the file at ``path``
    counts: the place it had, else the next one, recorded."""
    lock = locks.WriterLock(path.parent / "lock", vault.config.vault.lock_timeout,
                           what="counting the outputs of a session")
    with lock.hold():
        outputs = _load(path)
        if output in outputs:
            return outputs.index(output) + 1
        outputs.append(output)
        data = {"session": redact(session), "outputs": outputs}
        fsio.write_atomic(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
        return len(outputs)


def _load(path: Path) -> list[str]:
    """The ids the file lists in order; none when it is missing or unreadable (the count starts again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    outputs = data.get("outputs") if isinstance(data, dict) else None
    return [o for o in outputs if isinstance(o, str)] if isinstance(outputs, list) else []
