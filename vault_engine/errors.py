"""The one exception tree of memvault.

Every domain failure raised by ``vault_engine`` is a :class:`VaultError`;
the CLI turns any of them into one stderr line and a non-zero exit code.

* VaultError
  + VaultNotFound          no vault at the given or discovered location
  + ConfigError            memvault.toml or a MEMVAULT_* variable is invalid
  + MemoryFileError        a memory file cannot be used (carries path and line)
    - FrontmatterError     the YAML header is malformed or not a mapping
    - ValidationError      a key is missing, has the wrong type or an unknown enum value
    - EncodingError        the file is not UTF-8
    - ForgottenFile        the file holds a permanently forgotten memory (back from git or a backup)
  + MemoryNotFound         no memory with that id
  + InvalidInput           a command argument or an import line is unusable
  + PathEscapeError        a path would leave the vault
  + UnreadableWrite        a file about to be written would not read back as the same memory (nothing written)
  + VaultBusy              another process holds the writer lock for too long
  + ForgottenContent       the text was permanently forgotten and may not be re-learned
  + NothingToUndo          rollback found no correct/forget to undo
  + JournalError           the journal cannot be read or written
  + ModelUnavailable       the embedding model cannot be loaded
  + IndexStale             a derived index must be rebuilt from the files
  + IndexNewer             a derived index was written by a newer memvault (neither read nor rebuilt)
  + LlmUnavailable         the language model could not answer; retry later (exit 75)
    - ReflectionFailed     a reflection run's model call failed; journaled, retried with back-off
  + IngestDeferred         a compaction could not finish; the turns stay buffered (nothing lost)
    - LlmDeferred          ... because the language model could not answer (also an LlmUnavailable)

Example::

    try:
        vault.show(memory_id)
    except MemoryNotFound:
        ...
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from .patterns import lazy_pattern

# What would break the one line (every separator str.splitlines knows), and other control
# characters, which a file name could use to move the cursor or recolour the terminal.
_BREAKS = lazy_pattern("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_CONTROLS = lazy_pattern("[\x00-\x08\x0e-\x1f\x7f-\x9f]")


class VaultError(Exception):
    """Base class of every memvault error."""

    exit_code = 1

    def __init__(self, message: str, *, path: Path | str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line

    def one_line(self) -> str:
        """The error as one line: ``<file>:<line>: <what is wrong>``."""
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        text = _BREAKS.sub(" ", where + self.message)
        return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)

    def __str__(self) -> str:
        return self.one_line()


class VaultNotFound(VaultError):
    """No vault exists where one was asked for."""


class ConfigError(VaultError):
    """The vault configuration is invalid."""


class MemoryFileError(VaultError):
    """A memory file cannot be used."""


class FrontmatterError(MemoryFileError):
    """The YAML frontmatter is malformed."""


class ValidationError(MemoryFileError):
    """A frontmatter key is missing or has an invalid value."""


class EncodingError(MemoryFileError):
    """The file is not valid UTF-8."""


class ForgottenFile(MemoryFileError):
    """The file holds a memory that was permanently forgotten: it is reported, never read or indexed."""


class MemoryNotFound(VaultError):
    """No memory has the requested id."""


class InvalidInput(VaultError):
    """An argument or input record is unusable."""


class PathEscapeError(VaultError):
    """A path would escape the vault root."""


class UnreadableWrite(VaultError):
    """A memory file about to be written would not read back as the memory meant; nothing was written."""


class VaultBusy(VaultError):
    """Another writer holds the vault lock."""

    exit_code = 75  # EX_TEMPFAIL: retrying later may succeed


class ForgottenContent(VaultError):
    """The text was permanently forgotten and is blocked from re-learning."""


class NothingToUndo(VaultError):
    """There is no correction or forget to roll back."""


class JournalError(VaultError):
    """The experience journal cannot be read or written."""


class ModelUnavailable(VaultError):
    """The configured embedding model cannot be loaded (offline, missing package, bad name)."""


class IndexStale(VaultError):
    """A derived index is missing, corrupt or from another version; rebuild it from the files."""


class IndexNewer(VaultError):
    """A derived index was written by a newer memvault (a higher schema version): this one neither
    reads it nor rebuilds it, so two installed versions never rebuild each other's indexes in turn.
    ``memvault sync --full`` rebuilds it for this version on purpose."""


class LlmUnavailable(VaultError):
    """The language model could not answer (no key, network, rate limit, timeout, an unusable reply).

    Callers keep their input and retry later; nothing is lost.
    """

    exit_code = 75  # temporary: retry later


class LlmUnsure(LlmUnavailable):
    """The model answered that it cannot tell: no answer, but not a failure (asking again tells no more)."""


class ReflectionFailed(LlmUnavailable):
    """The model could not answer; the failure is journaled.

    ``next_try`` is when the next run will ask again; None when this was the
    last attempt and the window was skipped.
    """

    def __init__(self, message: str, *, attempt: int, next_try: datetime | None):
        super().__init__(message)
        self.attempt = attempt
        self.next_try = next_try


class IngestDeferred(VaultError):
    """A compaction could not finish; every turn of the input is buffered and nothing is lost.

    ``cause`` is the original error, ``result`` (an ``IngestResult``) what the call did before it
    stopped (episodes already written stay written).  The next ingest of the
    session, or a flush, retries.  When the cause is the language model this
    is also an :class:`LlmUnavailable` (see :class:`LlmDeferred`).
    """

    def __init__(self, cause: VaultError, result: Any):
        turns = f"{result.pending} turn{'' if result.pending == 1 else 's'}"
        super().__init__(f"{cause.one_line()}; {turns} kept in the buffer of session '{result.session}' "
                         "(nothing lost; the next ingest or flush retries)")
        self.cause = cause
        self.result = result
        self.exit_code = cause.exit_code


class LlmDeferred(IngestDeferred, LlmUnavailable):
    """:class:`IngestDeferred` because the language model could not answer."""
