"""Options shared by every command, and output helpers."""

from __future__ import annotations

import codecs
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import click

from ..errors import InvalidInput

if TYPE_CHECKING:
    from ..index.prefetch import QueryPrefetch
    from ..vault import Vault
from ..format.memory import TRUSTS
from ..format.text import printable, printable_json
from ..limits import too_long

F = TypeVar("F", bound=Callable[..., Any])
ANY_TRUST = "any"  # every trust level
READ_BLOCK = 1 << 16  # bytes read from an input at a time


class ProgressBar:
    """A progress bar on stderr with the rate and the time left, drawn only on a terminal; a
    callable ``(done, total)``."""

    WIDTH = 24

    def __init__(self, label: str, unit: str = "memories"):
        self.label = label
        self.unit = unit
        self._started: float | None = None
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        import time

        if total < 1:
            return
        now = time.monotonic()
        if self._started is None:
            self._started = now
        elapsed = now - self._started
        rate = done / elapsed if elapsed > 0 and done else 0.0
        filled = self.WIDTH * min(done, total) // total
        left = f", {_duration((total - done) / rate)} left" if rate and done < total else ""
        line = (f"{self.label} [{'#' * filled}{'-' * (self.WIDTH - filled)}] {100 * done // total:3d}% "
                f"{done}/{total} {self.unit}" + (f", {rate:.0f}/s{left}" if rate else ""))
        sys.stderr.write(f"\r{line}\x1b[K")
        sys.stderr.flush()
        self._drawn = True
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
        self._started = None
        self._drawn = False


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


@dataclass(slots=True)
class Settings:
    vault_path: str | None = None
    as_json: bool = False
    opened: list[Vault] = field(default_factory=list)

    def open_vault(self, *, write: bool = False, query: str | None = None) -> Vault:
        """The vault; a ``write`` command keeps the indexes current (with a bar on a terminal).  A search
        names its ``query``: a child embeds it while the vault opens (:mod:`~vault_engine.index.prefetch`)."""
        explicit = Path(self.vault_path) if self.vault_path else None
        prefetch = _prefetch(explicit, query) if query is not None else None
        from ..vault import Vault

        interactive = not self.as_json and sys.stderr.isatty()
        vault = Vault.open(explicit, auto_sync=write, progress=ProgressBar("vectors") if interactive else None)
        if prefetch is not None:
            vault.take_vector_from(prefetch)
        from ..vault.indexes import spawn_filler

        # A write of many memories (or a first search of an unindexed vault) returns once they are
        # searchable by their words; a background process computes their vectors.
        vault.fill_in_background = lambda: spawn_filler(vault)
        self.opened.append(vault)
        return vault

    def index_warnings(self) -> list[str]:
        lines = [v.index_warning for v in self.opened if v.index_warning]
        for vault in self.opened:
            report = vault.last_sync
            if report is not None and report.pending > 0 and not vault.index_warning:
                lines.append(f"notice: {report.pending} memories are searchable by their words now; their vectors "
                             "are being computed in the background (`memvault status` shows how far)")
        return lines


def _prefetch(explicit: Path | None, query: str) -> QueryPrefetch | None:
    """A child embedding ``query`` for the vault the command opens (none when it does not exist yet)."""
    from .. import location
    from ..config import environment
    from ..index.prefetch import QueryPrefetch

    root = location.find(explicit, environment(), Path.cwd())
    return QueryPrefetch.start(root, query) if root is not None else None


def _merge_vault(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    settings = ctx.find_object(Settings)
    if settings is not None and value:
        settings.vault_path = value
    return value


def _merge_json(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    settings = ctx.find_object(Settings)
    if settings is not None and value:
        settings.as_json = True
    return value


def common(func: F) -> F:
    """Give a command ``--vault`` and ``--json`` (also accepted before the command)."""
    func = click.option("--json", "_json", is_flag=True, expose_value=False, callback=_merge_json,
                        help="Print one JSON document.")(func)
    func = click.option("--vault", "_vault", type=click.Path(file_okay=False), expose_value=False,
                        callback=_merge_vault, help="Vault folder.")(func)
    return func


def trust_option(help: str) -> Callable[[F], F]:
    """``--trust LEVEL``, repeatable: a trust level or ``any``; the same values for every command
    that filters by trust (``search``, ``list``)."""
    return click.option("--trust", "trust", multiple=True, type=click.Choice((*TRUSTS, ANY_TRUST)), help=help)


def echo(message: str = "", *, err: bool = False, nl: bool = True) -> None:
    """Print ``message`` (to stderr with ``err``) with every control character but tab and newline shown as
    ``\\xNN``: a title or a file name cannot recolour the terminal or set its title. The command line prints
    through this and :func:`echo_json` only."""
    click.echo(printable(message), err=err, nl=nl)


def echo_json(text: str, *, nl: bool = True) -> None:
    """Print JSON text as it is, DEL and the C1 controls written as ``\\u`` escapes (the same JSON value)."""
    click.echo(printable_json(text), nl=nl)


def emit(settings: Settings, data: Any, human: Callable[[], None]) -> None:
    """Print ``data`` as JSON with --json, else call ``human``."""
    if settings.as_json:
        echo_json(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        human()


def read_stdin(limit: int, what: str, *, hint: str = "") -> str:
    """Standard input as text, refused past ``limit`` characters (no more than ``limit + 1`` are read).

    Raises:
        InvalidInput: it holds more than ``limit`` characters, or is not UTF-8.
    """
    try:
        text = sys.stdin.read(limit + 1)
    except UnicodeDecodeError:
        raise InvalidInput(f"{what} is not valid UTF-8 text", path="<stdin>") from None
    if len(text) > limit:
        raise too_long(what, limit, hint=hint, path="<stdin>")
    return text


def read_bytes(stream: BinaryIO, limit: int, what: str, where: str) -> bytes:
    """The bytes of ``stream``, refused past ``limit`` characters of UTF-8 text: reading stops at the first
    block past the limit (an invalid byte counts as one character; the caller decodes).

    Raises:
        InvalidInput: more than ``limit`` characters.
    """
    counter = codecs.getincrementaldecoder("utf-8")(errors="replace")
    data = bytearray()
    characters = 0
    while block := stream.read(READ_BLOCK):
        data += block
        characters += len(counter.decode(block))
        if characters > limit:
            raise too_long(what, limit, path=where)
    return bytes(data)
