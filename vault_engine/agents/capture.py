"""Capture: an agent's session, read from its transcript, stored as episodes of its project.

:func:`capture` takes the messages of a transcript that are not stored yet (their
keys are not in the vault's record, :mod:`.captured`: a message that a fork or a
resumed session copied from another is stored once), turns them into
conversation turns and hands them to :func:`~vault_engine.ingest.conversation.ingest`,
which redacts secrets, leaves out one-off instructions and cuts the session into
episodes.  A tool's long result (``ingest.tool_output_min_chars`` or more) is kept
as a document through the ``remember-output`` path and the turn names it; a short
one is left out.  Only once the turns are buffered are their keys recorded, so an
interrupted capture stores them on the next one; capturing the same transcript
again, or the same session grown longer, stores each message once.

The whole capture of one session holds a lock, so the agent's PreCompact and
SessionEnd hooks (or a hook and a bulk ``ingest``) never store a message twice;
two sessions sharing messages (a fork captured while its parent is) leave each
shared message to whichever took it first (:meth:`.CapturedKeys.take`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import locks
from ..errors import IngestDeferred, InvalidInput, VaultError
from ..limits import MAX_DOCUMENT
from ..llm.base import Turn
from .captured import CapturedKeys
from .messages import Message, Transcript
from .session import AGENTS_DIR, AgentSession

if TYPE_CHECKING:
    from ..ingest.conversation import IngestResult
    from ..llm.base import Llm
    from ..vault import Vault

CAPTURE_LOCK_TIMEOUT = 300.0  # seconds another capture of the same session may take (it may ask the model)


@dataclass(slots=True)
class CaptureResult:
    """What one capture stored."""

    session: str
    project: str | None
    new_messages: int = 0  # messages not captured before
    turns: int = 0  # turns handed to ingest (consecutive parts of one answer are one turn)
    outputs: list[str] = field(default_factory=list)  # ids of tool outputs kept as documents
    ingest: IngestResult | None = None

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "project": self.project, "new_messages": self.new_messages,
                "turns": self.turns, "outputs": list(self.outputs),
                "ingest": self.ingest.to_json() if self.ingest is not None else None}


def capture(vault: Vault, transcript: Transcript, *, name: str, project: str | None, flush: bool,
            llm: Llm) -> CaptureResult:
    """Store the messages of ``transcript`` not stored before, as session ``name`` of ``project``.

    ``flush`` closes the session: whatever it still buffers becomes an episode (the agent's session ended).

    Raises:
        VaultError: ingest could not finish (see :func:`~vault_engine.ingest.conversation.ingest`);
            what was buffered stays buffered and is recorded as captured.
    """
    from ..ingest.conversation import ingest

    lock = locks.WriterLock(_lock_of(vault.root, name), CAPTURE_LOCK_TIMEOUT, what=f"capturing session '{name}'")
    record = CapturedKeys(vault.root)
    with lock.hold():
        state = AgentSession.load(vault.root, name)
        state.project = state.project or project
        legacy = set(state.captured)  # what an older memvault recorded in the session's own file
        new = record.take(name, transcript.messages, legacy, lambda other: _lock_of(vault.root, other))
        result = CaptureResult(name, project, new_messages=len(new))
        try:
            turns = _turns(vault, new, llm, project, result)
            result.turns = len(turns)
            if turns or flush:
                result.ingest = ingest(vault, turns, session=name, llm=llm, flush=flush, project=project)
        except IngestDeferred:  # every turn is buffered, only a compaction waits: never buffer them again
            _record(vault, record, state, new, legacy)
            raise
        except BaseException:
            record.release(name)
            raise
        _record(vault, record, state, new, legacy)
    return result


def _lock_of(root: Path, name: str) -> Path:
    return root / AGENTS_DIR / f"{name}.lock"


def _record(vault: Vault, record: CapturedKeys, state: AgentSession, captured: Sequence[Message],
            legacy: set[str]) -> None:
    record.record(state.name, captured, legacy)
    state.captured.clear()  # now in the vault's record
    state.save(vault.root)


def _turns(vault: Vault, messages: Sequence[Message], llm: Llm, project: str | None,
           result: CaptureResult) -> list[Turn]:
    """The turns for ``messages``: consecutive parts of one answer joined, long tool outputs kept apart."""
    from ..ingest.documents import remember_output

    limit = vault.config.ingest.tool_output_min_chars
    turns: list[Turn] = []
    group = None
    for message in messages:
        texts = [message.text] if message.text.strip() else []
        for output in message.outputs:
            if len(output.text.strip()) < limit:
                continue  # a short result: the call above it says what was done
            if len(output.text) > MAX_DOCUMENT:  # more than memvault keeps at once: named, not kept
                texts.append(f"[output of {output.tool}, {len(output.text)} characters: too long to keep]")
                continue
            kept = remember_output(vault, output.text, source=f"tool:{_tool_name(output.tool)}", llm=llm,
                                   project=project)
            if kept.stored and kept.ids:
                result.outputs.append(kept.ids[0])
                failed = " (an error)" if output.error else ""
                texts.append(f"[output of {output.tool}{failed} kept as {kept.ids[0]}, {len(output.text)} characters]")
        if not texts:
            continue
        text = "\n\n".join(texts)
        ts = _timestamp(message.ts)
        if message.group and message.group == group and turns and turns[-1].role == message.role:
            last = turns[-1]
            turns[-1] = Turn(last.role, f"{last.content}\n\n{text}", last.ts)
        else:
            turns.append(Turn(message.role, text, ts))
        group = message.group or None
    return turns


def _tool_name(name: str) -> str:
    """A tool name as a ``tool:NAME`` source allows (letters, digits, ``._-``)."""
    clean = "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip("-.") or "tool"
    return clean[:64]


def _timestamp(ts: str | None) -> str | None:
    """``ts`` when it is a date-time ingest reads, else None (a turn without a time is still a turn)."""
    if not ts:
        return None
    from ..format.chat_turns import parse_ts

    try:
        parse_ts(ts)
    except ValueError:
        return None
    return ts


# ---------------------------------------------------------------- transcripts in bulk


def read_transcript(fmt: str, path: Path) -> Transcript:
    """``path`` read as a transcript of the agent ``fmt`` (``claude-code``, ``codex``, ``opencode``, ...:
    each agent module's reader; one that writes no readable transcript raises ``NoTranscript``).

    Raises:
        InvalidInput: an unknown format, a file that cannot be read, or one too large.
    """
    from . import claude_code, codex, copilot, cursor, gemini, opencode

    readers: dict[str, Callable[[Path], Transcript]] = {
        m.AGENT: m.read_transcript for m in (claude_code, codex, gemini, cursor, opencode, copilot)}
    if fmt not in readers:
        raise InvalidInput(f"unknown transcript format {fmt!r}; expected {', '.join(readers)}")
    try:
        return readers[fmt](path)
    except OSError as exc:
        raise InvalidInput(f"cannot read file: {exc.strerror or exc}", path=str(path)) from None
    except ValueError as exc:
        raise InvalidInput(str(exc), path=str(path)) from None


@dataclass(frozen=True, slots=True)
class FileCaptured:
    """One transcript file of a bulk capture: what it stored, or why it could not."""

    path: str
    result: CaptureResult | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, **({"error": self.error} if self.error else {}),
                **(self.result.to_json() if self.result is not None else {})}


def capture_files(vault: Vault, paths: Sequence[Path], fmt: str, *, project: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> list[FileCaptured]:
    """Capture each agent transcript in ``paths`` as a closed session (old sessions imported in bulk).

    A file's project is ``project`` when given, else that of the folder its session ran in, when
    that folder is still there (else its episodes are global).  A file that cannot be read or
    stored is reported and the others go on.
    """
    from ..context.project import current_project
    from .session import session_name

    llm = vault.llm()
    out: list[FileCaptured] = []
    for done, path in enumerate(paths, start=1):
        try:
            transcript = read_transcript(fmt, path)
            key = project
            if key is None and transcript.cwd and Path(transcript.cwd).is_dir():
                key = current_project(Path(transcript.cwd), vault.root)
            name = session_name(fmt, transcript.session or path.stem)
            out.append(FileCaptured(str(path), capture(vault, transcript, name=name, project=key, flush=True,
                                                       llm=llm)))
        except VaultError as exc:
            error = exc.one_line()
            out.append(FileCaptured(str(path), error=error if str(path) in error else f"{path}: {error}"))
        if progress is not None:
            progress(done, len(paths))
    return out
