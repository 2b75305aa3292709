"""What each index derives from one memory: the texts to embed (and their fingerprint), and the
full-text document."""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..format import threads
from ..format.dates import date_words
from ..format.memory import Memory, content_digest
from ..format.text import HEADING, make_summary, paragraphs, sentence_starts, sentences
from ..store import Entry
from .embedder import Embedder

SENTENCES_PER_MEMORY = 8  # memories with more sentences get no sentence lane
# A turn's context vector is composed from the vectors of the turn and its neighbours (the mean
# of the three, normalised), not embedded from their concatenation: each part is a text some
# memory's summary lane embeds anyway, so the lane costs the model nothing.  Embedding the
# concatenation made indexing a chat log twice as slow for 0.005 R@10 (docs/decisions/derived-summaries.md).
COMPOSED_LANES = frozenset({"context"})
PART_BREAK = "\x1f"  # between a composed lane's parts (a unit separator: never in a summary or title)
# A sentence's vector is read from the model's pass over a text some other lane embeds anyway (its
# host: the summary or a body passage): the mean of the token states of the sentence's words and of
# the memory's subject, each read in context.  Embedding each sentence alone (with its subject
# written in front) doubled the tokens the model reads for a chat log, for the same recall
# (docs/decisions/indexing.md).  A span lane's text names its host and the character ranges it pools.
SPAN_LANES = frozenset({"sentence"})
SPAN_MARK = "\x1e"  # between a span lane's host text and its ranges (a record separator: never in a text)
GIST_CHARS = 1000  # about 250 tokens of English: one passage of the model's window
_PROBE_CHARS = 4096  # the first prefix the model is asked to cut: a 512-token window of prose is ~2,500 characters


def embedding_texts(memory: Memory, embedder: Embedder,
                    context: tuple[str, str] = ("", "")) -> list[tuple[str, int, str]]:
    """(lane, chunk, text) to embed for a memory: the dual path of summary, trigger and body,
    and for a turn of a conversation the turn between its neighbours (``context``: before, after)."""
    summary = gist(memory)
    out = [("summary", 0, summary)]
    if memory.trigger.strip():
        out.append(("trigger", 0, memory.trigger))
    body = memory.body.strip()
    if body:
        out += [("body", n, piece) for n, piece in enumerate(passages(body, embedder))]
    parts = threads.context_parts(summary, *context)
    if parts:
        out.append(("context", 0, PART_BREAK.join(parts)))
    # Each sentence apart: a passage's mean embedding blurs the one sentence a question is about.
    # Only short memories (a fact, a turn of a conversation): long ones are covered by body chunks,
    # and a sentence lane for them would multiply the vectors search scans.  A sentence alone
    # also loses its subject ("She gave it to me"): read in its host, it keeps its context, and
    # its vector takes in the subject's words (the memory's first tag, or its title, in the host).
    pieces = sentences(f"{summary}\n\n{body}", limit=SENTENCES_PER_MEMORY + 1)
    if 1 < len(pieces) <= SENTENCES_PER_MEMORY:
        hosts = [" ".join(text.split()) for lane, _, text in out if lane in ("summary", "body")]
        subjects = [*memory.tags, memory.title]
        out += [("sentence", n, sentence_span(piece, hosts, subjects)) for n, piece in enumerate(pieces)]
    return out


def sentence_span(piece: str, hosts: Sequence[str], subjects: Sequence[str]) -> str:
    """A sentence lane's text: the first host that holds ``piece`` with the ranges to pool (the
    piece's, and the first subject's found in the host outside it), or the piece itself when no
    host holds it (then it is embedded alone)."""
    for host in hosts:
        at = host.find(piece)
        if at < 0:
            continue
        ranges = [(at, at + len(piece))]
        folded = host.casefold()
        for subject in subjects:
            where = folded.find(subject.casefold()) if subject.strip() else -1
            if where >= 0 and not (at <= where and where + len(subject) <= at + len(piece)):
                ranges.append((where, where + len(subject)))
                break
        return span_text(host, ranges)
    return piece


def span_text(host: str, ranges: Sequence[tuple[int, int]]) -> str:
    return host + SPAN_MARK + ",".join(f"{start}:{end}" for start, end in ranges)


def parse_span(text: str) -> tuple[str, list[tuple[int, int]]] | None:
    """(host, ranges) of a span lane's text; None for a text embedded alone."""
    host, mark, ranges = text.rpartition(SPAN_MARK)
    if not mark:
        return None
    try:
        pairs = [tuple(int(n) for n in item.split(":", 1)) for item in ranges.split(",")]
    except ValueError:
        return None
    return host, [(pair[0], pair[1]) for pair in pairs if len(pair) == 2]


def gist(memory: Memory) -> str:
    """What the indexes read as a memory's summary: the summary a person wrote, or the whole
    body when the engine derived the summary (its leading sentences) and the body fits one
    passage (``GIST_CHARS``, about the model's window).

    A derived summary is for showing (a manifest line); as a lane's text it clips what a short
    memory says: a chat turn of 300 characters loses its last sentences, and with them what the
    question asks about (chat-log R@10 0.790 against 0.778, better on four of five development
    conversations; docs/decisions/derived-summaries.md).  A summary someone wrote says what they meant: kept."""
    body = memory.body.strip()
    if body and len(body) <= GIST_CHARS and memory.summary == make_summary(body):
        return " ".join(body.split())
    return threads.turn_text(memory.title, memory.summary)


def passages(body: str, embedder: Embedder) -> list[str]:
    """The body lane's passages: the body's paragraphs (a heading joined to the paragraph after
    it), each cut into the windows the model reads whole (:func:`windows`).

    One vector for several turns of a conversation (an episode: a heading and a paragraph per
    turn) or several sections of a note is the mean of what they say, close to none of them;
    a paragraph is what a question is about (``memvault ingest`` episodes: R@5 0.722 against
    0.698 with the body cut only at the token window, better on four of five development
    conversations; docs/decisions/ingestion.md).  A memory's vector score in the lane is its best passage,
    so every part of a long memory is searched by meaning, not only the part the model's window
    holds."""
    pieces: list[str] = []
    heading = ""
    for paragraph in paragraphs(body):
        if "\n" not in paragraph and HEADING.match(paragraph):
            heading = f"{heading}\n\n{paragraph}" if heading else paragraph
            continue
        pieces.append(f"{heading}\n\n{paragraph}" if heading else paragraph)
        heading = ""
    if heading:
        pieces.append(heading)
    return [window for piece in pieces for window in windows(piece, embedder)]


def windows(piece: str, embedder: Embedder) -> list[str]:
    """``piece`` cut into windows the model reads whole: each as many whole sentences as its token
    window holds (:meth:`~.embedder.Embedder.chunks` says how much that is), a sentence longer than
    the window cut at the last word that fits.  A window cut mid-sentence (or mid-word, where the
    token window ends) splits what it says between two vectors, close to neither."""
    starts = sentence_starts(piece)
    out: list[str] = []
    begin = 0
    while begin < len(piece):
        rest = piece[begin:]
        head = _first_window(rest, embedder)
        if len(head) >= len(rest.rstrip()):
            out.append(rest.strip())
            break
        end = begin + len(head)
        if end <= begin:  # nothing the model reads: what is left goes whole
            out.append(rest.strip())
            break
        while end < len(piece) and piece[end].isspace():  # a sentence starting right after it fits
            end += 1
        at = bisect.bisect_right(starts, end) - 1
        cut = starts[at] if at >= 0 and starts[at] > begin else None
        if cut is None:
            space = max(piece.rfind(" ", begin, end + 1), piece.rfind("\n", begin, end + 1))
            cut = space if space > begin else end
        out.append(piece[begin:cut].strip())
        begin = cut
        while begin < len(piece) and piece[begin].isspace():
            begin += 1
    return [window for window in out if window]


def _first_window(text: str, embedder: Embedder) -> str:
    """The model's first window of ``text``, reading no more of it than that window needs: the
    model is asked about a prefix that doubles until the window ends inside it, so cutting a long
    body costs time in proportion to its length, not to its length squared."""
    probe = _PROBE_CHARS
    while True:
        prefix = text[:probe]
        head = embedder.chunks(prefix)[0]
        if probe >= len(text) or len(head) <= max(prefix.rfind(" "), prefix.rfind("\n")):
            return head  # it ends before the prefix's last word, which the prefix may have cut
        probe *= 2


def embedded_parts(lane: str, text: str) -> list[str]:
    """The texts the model embeds for one (lane, text): a composed lane's parts, else the text."""
    return text.split(PART_BREAK) if lane in COMPOSED_LANES else [text]


def composed(vectors: Sequence[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
    """A composed lane's vector: the normalised mean of its parts' vectors."""
    total: npt.NDArray[np.float32] = np.asarray(vectors, dtype=np.float32).sum(axis=0)
    norm = float(np.linalg.norm(total))
    return total / np.float32(norm) if norm else total


def text_fingerprint(texts: Sequence[tuple[str, int, str]]) -> str:
    """What the vectors of a memory depend on: re-embed only when this changes."""
    return content_digest(json.dumps(texts, ensure_ascii=False).encode("utf-8"))


def fulltext_document(entry: Entry, digest: str, context: tuple[str, str] = ("", "")) -> dict[str, Any]:
    m = entry.memory
    when = m.occurred_at.date() if isinstance(m.occurred_at, datetime) else m.occurred_at
    return {
        "id": m.id, "title": m.title, "summary": m.summary, "trigger": m.trigger, "body": m.body,
        "tags": list(m.tags), "context": "\n".join(part for part in context if part),
        "when": date_words(when) if when is not None else "",
        "type": m.type, "scope": m.scope, "project": m.project or "", "trust": m.trust, "lifecycle": m.lifecycle,
        "tier": m.tier,
        "status": "trashed" if entry.in_trash else "active", "hash": digest, "path": entry.path,
    }
