"""Conversation ingestion: ``memvault ingest``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import IngestDeferred, InvalidInput
from ..ingest.conversation import (
    DEFAULT_SESSION,
    FORMATS,
    IngestResult,
    check_session,
    ingest,
    parse_turns,
)
from ..limits import MAX_DOCUMENT
from .options import ProgressBar, Settings, common, echo, emit, read_bytes
from .root import cli


def _read(file: str) -> tuple[str, str]:
    """(text, source name) of FILE, or of stdin for ``-``."""
    if file == "-":
        data, source = read_bytes(sys.stdin.buffer, MAX_DOCUMENT, "the conversation", "<stdin>"), "<stdin>"
    else:
        try:
            with Path(file).open("rb") as handle:
                data, source = read_bytes(handle, MAX_DOCUMENT, "the conversation", file), file
        except OSError as exc:
            raise InvalidInput(f"cannot read file: {exc.strerror}", path=file) from None
    try:
        return data.decode("utf-8"), source
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"file is not valid UTF-8 (byte {exc.start})", path=source, line=line) from None


def _report(result: IngestResult) -> None:
    for episode in result.episodes:
        if episode.action == "created":
            tags = f"  [{', '.join(episode.tags)}]" if episode.tags else ""
            echo(f"episode {episode.id}  {episode.title}  ({episode.turns} turns){tags}")
        elif episode.action == "existing":
            echo(f"already stored {episode.id}  {episode.title}  ({episode.turns} turns)")
        else:
            echo(f"not stored: {episode.turns} turns were permanently forgotten ({episode.id})")
    skipped = f", {result.one_off} one-off instructions left out" if result.one_off else ""
    secrets = f", {result.redacted} secrets redacted" if result.redacted else ""
    closed = "; session closed" if result.closed else ""
    echo(f"buffered {result.buffered} turns{skipped}{secrets}; "
         f"session '{result.session}' holds {result.pending} turns{closed}")


AGENT_FORMATS = ("claude-code", "codex", "gemini")


@cli.command("ingest")
@click.argument("files", metavar="[FILE|-]...", nargs=-1)
@click.option("--session", default=DEFAULT_SESSION, show_default=True,
              help="Session buffer to add to (letters, digits, '.', '_', '-').")
@click.option("--flush", is_flag=True, help="Compact whatever the session still holds, even 1-2 turns, and close it.")
@click.option("--format", "fmt", type=click.Choice((*FORMATS, *AGENT_FORMATS)), default="auto", show_default=True,
              help="Input format; auto: JSONL when the file ends in .jsonl or starts with '{', else text; "
                   "claude-code, codex, gemini: the agents' own session files (several at once).")
@click.option("--project", help="Project key the episodes belong to (default: global; for agent sessions, "
                                "the project of the folder each session ran in).")
@common
@click.pass_obj
def ingest_command(settings: Settings, files: tuple[str, ...], session: str, flush: bool, fmt: str,
                   project: str | None) -> None:
    """Ingest a conversation into episode memories.

    FILE (or - for stdin) is JSONL, one {"role", "content", "ts"} object per
    line (role: user, assistant, system or tool), or plain text where
    "User: ..." / "Assistant: ..." lines, else paragraphs, are turns. A JSONL
    file with a bad line is refused whole. Turns wait in the session's buffer
    until the topic shifts, the buffer grows heavy or full; each closed span
    becomes an episode keeping every turn verbatim. Secrets are redacted and
    one-off instructions ("not this time") left out before anything is kept.

    With --format claude-code, codex or gemini, each FILE is an agent's session
    file (Claude Code transcripts, Codex rollouts, Gemini CLI chat files under
    ~/.gemini/tmp/*/chats/), stored as its own closed session; a session
    imported again stores only what is new.

    \b
    Example:
        memvault ingest chat.jsonl --session review-42
        memvault ingest --flush --session review-42
        memvault ingest --format claude-code ~/.claude/projects/*/*.jsonl
    """
    if fmt in AGENT_FORMATS:
        _ingest_agent_files(settings, files, fmt, project)
        return
    check_session(session)
    if len(files) > 1:
        raise click.UsageError(f"--format {fmt} takes one FILE (or -); several are for --format claude-code, codex "
                               "or gemini")
    file = files[0] if files else None
    if file is None and not flush:
        raise click.UsageError("name a FILE (or - for stdin), or give --flush")
    turns = []
    if file is not None:
        text, source = _read(file)
        turns = parse_turns(text, source=source, fmt=fmt)
    vault = settings.open_vault(write=True)
    llm = vault.llm()
    try:
        result = ingest(vault, turns, session=session, llm=llm, flush=flush, project=project)
    except IngestDeferred as exc:  # episodes written before the failure are reported, then the error
        partial, message, code = exc.result, exc.one_line(), exc.exit_code
        emit(settings, {**partial.to_json(), "error": message}, lambda: _report(partial))
        for warning in [*(f"warning: {w}" for w in partial.warnings), *settings.index_warnings()]:
            echo(warning, err=True)
        echo(f"error: {message}", err=True)
        sys.exit(code)
    emit(settings, result.to_json(), lambda: _report(result))
    for warning in result.warnings:
        echo(f"warning: {warning}", err=True)


def _ingest_agent_files(settings: Settings, files: tuple[str, ...], fmt: str, project: str | None) -> None:
    """Agent session files, each captured as a closed session (see :func:`capture_files`)."""
    from ..agents.capture import capture_files

    if not files or "-" in files:
        raise click.UsageError(f"--format {fmt} reads session files: name one or more FILEs (not -)")
    vault = settings.open_vault(write=True)
    bar = None if settings.as_json or not sys.stderr.isatty() else ProgressBar("reading", unit="sessions")
    results = capture_files(vault, [Path(f) for f in files], fmt, project=project, progress=bar)
    failed = [r for r in results if r.error]

    def human() -> None:
        stored = [r.result for r in results if r.result is not None]
        episodes = sum(len(r.ingest.episodes) for r in stored if r.ingest is not None)
        echo(f"{len(stored)} sessions read, {sum(r.new_messages for r in stored)} new messages, "
             f"{episodes} episodes, {sum(len(r.outputs) for r in stored)} tool outputs kept")

    emit(settings, {"format": fmt, "files": [r.to_json() for r in results]}, human)
    for result in failed:
        echo(f"error: {result.error}", err=True)
    if failed:
        sys.exit(1)
