"""Documents and tool outputs: ``memvault ingest-doc`` and ``memvault remember-output``."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

import click

from ..errors import InvalidInput
from ..limits import MAX_DOCUMENT
from ..patterns import lazy_pattern
from .options import Settings, common, echo, emit, read_bytes
from .root import cli

_SCHEME = lazy_pattern(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def _local_path(location: str) -> Path:
    """The local file a FILE argument names: a path or a ``file://`` URI.

    Raises:
        InvalidInput: any other URI scheme, or a ``file://`` URI of another host.
    """
    match = _SCHEME.match(location)
    if match is None or len(match.group(1)) == 1:  # no scheme, or a Windows drive letter
        return Path(location)
    scheme = match.group(1).lower()
    if scheme != "file":
        if "://" not in location and not location.startswith(scheme + ":/"):
            return Path(location)  # a file name that happens to hold a colon, e.g. notes:2026.md
        raise InvalidInput(f"only local files can be ingested (a path or a file:// URI), got a {scheme}: URI",
                           path=location)
    parsed = urlparse(location)
    if parsed.netloc not in ("", "localhost"):
        raise InvalidInput(f"only local files can be ingested; file URI names host {parsed.netloc!r}",
                           path=location)
    if not parsed.path:
        raise InvalidInput("file URI names no file", path=location)
    return Path(unquote(parsed.path))


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")  # a BOM is not part of the text
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not valid UTF-8 text (byte {exc.start}); only text files can be ingested",
                           path=where) from None


def _read(location: str) -> tuple[str, str]:
    """The text of FILE (``-``: stdin) and its default source."""
    if location == "-":
        return _decode(read_bytes(sys.stdin.buffer, MAX_DOCUMENT, "the document", "<stdin>"), "<stdin>"), \
            "document:stdin"
    path = _local_path(location)
    try:
        with path.open("rb") as handle:
            data = read_bytes(handle, MAX_DOCUMENT, "the document", location)
    except IsADirectoryError:
        raise InvalidInput("is a folder, not a file", path=location) from None
    except OSError as exc:
        raise InvalidInput(f"cannot read file: {exc.strerror or exc}", path=location) from None
    return _decode(data, location), "document:" + path.resolve().as_uri()


@cli.command("ingest-doc")
@click.argument("file", metavar="FILE|-")
@click.option("--source", help="Where it came from (default: document:file:///... of FILE, document:stdin for -).")
@click.option("--chunk-size", type=int, help="Characters per part (default: [ingest] chunk_size, 2000).")
@click.option("--overlap", type=int, help="Characters each part repeats of the one before (default: [ingest] "
                                          "overlap, 200).")
@click.option("--project", help="Project key, e.g. github.com/acme/api (default: global).")
@common
@click.pass_obj
def ingest_doc(settings: Settings, file: str, source: str | None, chunk_size: int | None, overlap: int | None,
               project: str | None) -> None:
    """Store a local text file (a path, a file:// URI, or - for stdin) as linked document memories.

    The text is cut into parts at paragraph, line or sentence boundaries; each
    part keeps its text in full and links to the previous and next part.
    Secrets are redacted first. The same content ingested again is a no-op.

    \b
    Example:
        memvault ingest-doc docs/architecture.md --project github.com/acme/api
    """
    from ..ingest.documents import ingest_document

    text, default_source = _read(file)
    vault = settings.open_vault(write=True)
    llm = vault.llm()
    result = ingest_document(vault, text, source=source or default_source, llm=llm, chunk_size=chunk_size,
                             overlap=overlap, project=project)

    def human() -> None:
        if result.duplicate:
            echo(f"already ingested: {' '.join(result.ids)} ({result.chunks} "
                 f"part{'' if result.chunks == 1 else 's'}, nothing written)")
        else:
            for part in result.parts:
                echo(f"{part.id}  {part.path}  {part.title}")
        if result.redactions and not result.duplicate:
            echo(f"redacted {result.redactions} secret{'' if result.redactions == 1 else 's'} "
                 "before writing", err=True)

    emit(settings, result.to_json(), human)


@cli.command("remember-output")
@click.option("--source", required=True, metavar="tool:NAME", help="The tool that produced the output.")
@click.option("--min-chars", type=click.IntRange(min=0),
              help="Outputs shorter than this are not stored (default: [ingest] tool_output_min_chars, 1500).")
@click.option("--project", help="Project key (default: global).")
@click.option("--session", metavar="ID", help="The agent's session: its first 2 long outputs are printed back "
                                              "whole (and stored), later ones as a reference.")
@common
@click.pass_obj
def remember_output(settings: Settings, source: str, min_chars: int | None, project: str | None,
                    session: str | None) -> None:
    """Keep a long tool output (read from stdin) and print a short reference in its place.

    A short output is not stored and is printed back unchanged. A stored one
    prints its id, title, summary and the command that shows it in full. With
    --session, the session's first two long outputs are stored and printed
    back unchanged too; from the third on, the reference stands in.

    \b
    Example:
        pytest -q 2>&1 | memvault remember-output --source tool:pytest
        pytest -q 2>&1 | memvault remember-output --source tool:pytest --session "$SESSION_ID"
    """
    from ..ingest.documents import remember_output as remember
    from ..ingest.documents import tool_source

    source = tool_source(source)
    data = read_bytes(sys.stdin.buffer, MAX_DOCUMENT, "the tool output", "<stdin>")
    text = _decode(data, "<stdin>")
    vault = settings.open_vault(write=True)
    llm = vault.llm()
    if session is not None:
        from ..ingest.outputs import remember_session_output

        kept = remember_session_output(vault, text, session=session, source=source, llm=llm, min_chars=min_chars,
                                       project=project)
        result, raw, shown = kept.result, kept.raw, kept.to_json()
    else:
        result = remember(vault, text, source=source, llm=llm, min_chars=min_chars, project=project)
        raw, shown = not result.stored, result.to_json()

    def human() -> None:
        if not raw:
            echo(result.reference, nl=False)
        else:  # byte for byte: click.echo would drop colour codes when stdout is not a terminal
            stdout = sys.stdout.buffer
            stdout.write(data)
            stdout.flush()
            if result.stored and result.ids:
                echo(f"kept as {result.ids[0]} (expand: memvault show {result.ids[0]} --depth 2)", err=True)

    emit(settings, shown, human)
