"""Seeded fuzzing of the memory file format: malformed files into parse, scan, sync, search, context and maintain.

Generates ``count`` files in many categories (valid memories and plain notes as
the control group; broken YAML, wrong types, unknown enum values, huge values,
duplicate ids, git conflict markers, binary bytes, non-UTF-8 text, BOMs, CRLF
and lone CR line endings, 10 MB bodies and files over the size limit, deeply
nested YAML, alias bombs, missing fences, empty files, symlinks, folders named
``*.md``, odd file names, random mutations of valid files, dates at the ends of
the calendar, odd keys) and checks, for every one of them:

1. parse (in process, every file): nothing but a ``MemoryFileError`` is ever
   raised; each file is what its generator says it is (a memory with its id, a
   plain note, or a bad file); an untouched valid file renders to its own bytes.
2. a vault holding all the files (in process, ``Vault.sync`` with the
   ``HashEmbedder`` stand-in, then search, context and maintain): every bad file
   is reported exactly once with its path; exactly the valid files are indexed
   (duplicate ids resolved as documented in ``vault_engine/copies.py``: outside
   the trash first, then the oldest, then by name and path), whatever order the
   copies were created in; sync, search and context change no file; maintain
   changes only the files its journal events name and never a bad one.
3. the real CLI in subprocesses (``python -m vault_engine --vault V sync|search|
   context|maintain --json``) on a sample of every category: exit 0, no
   traceback, every stderr line one line, each bad file's path on exactly one
   ``warning:`` line of sync, and the same index and byte checks.  Without
   ``--real-model`` the subprocess swaps the embedding model for the
   ``HashEmbedder`` (so a 10 MB body embeds in seconds); with it, the shipped
   model runs and bodies over 64 KB stay out of the sample (the model embeds
   about ten 256-token chunks a second on two cores).

    .venv/bin/python -m stress.fuzz_files --seed 7 --count 5000
    .venv/bin/python -m stress.fuzz_files --count 500 --json

``run()`` returns the figures (``python -m stress`` prints them in its table).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from vault_engine import store
from vault_engine.errors import MemoryFileError
from vault_engine.format import memory as memory_mod
from vault_engine.format.memory import Memory, render

REPO = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------- cases

MEMORY, NOTE, BAD, IGNORED, ANY = "memory", "note", "bad", "ignored", "any"
LARGE = 64 * 1024  # bodies above this stay out of a real-model CLI sample


@dataclass
class Case:
    """One file (or link, folder, FIFO) to put in a vault, and what the engine must make of it.

    ``expect``: ``memory`` (indexed under ``memory_id``), ``note`` (indexed as a plain
    note), ``bad`` (reported once, not indexed), ``ignored`` (neither reported nor
    indexed), ``any`` (a random mutation: whatever parse says, the vault must agree).
    """

    category: str
    rel: str  # relative path; a name that is not UTF-8 is kept as os.fsdecode does (surrogates)
    data: bytes = b""
    expect: str = MEMORY
    memory_id: str | None = None
    kind: str = "file"  # file | symlink | dir | fifo | sparse (a file of ``size`` bytes never read)
    target: str = ""  # symlink target; "{outside}" is replaced by a folder outside the vault
    size: int = 0
    companions: tuple[tuple[str, bytes | None], ...] = ()  # extra non-memory files (None: a folder)

    @property
    def shown(self) -> str:
        """The path as the engine reports it."""
        return store._shown(self.rel)

    @property
    def regular(self) -> bool:
        return self.kind == "file"


def note_id(rel: str) -> str:
    return "note-" + hashlib.sha256(rel.encode("utf-8")).hexdigest()[:20]


VOCAB = (
    "deploy", "staging", "pytest", "fixture", "conftest", "rollback", "migration", "latency", "cache",
    "café", "naïve", "日本語", "Ünïcödé", "emoji 😀", "tab\there", 'quote "x"', "colon: inside", "# hash",
    "- dash", "[bracket]", "{brace}", "yes", "no", "null", "~", "1.5", "0x1F", "2026-01-01", "'single'",
    "a|b", "> fold", "*star", "&amp", "!bang", "%pct", "@at", "`tick`", "back\\slash", "line\u2028sep",
    "nbsp\xa0x", "zero\u200bwidth", "---", "...", "? q", "key: value", "<<", "=", "\u00e9\u0301",
)
FOLDERS = ("memories/global", "memories/projects/acme", "profile", "episodes", "notes", "deep/a/b/c", "trash", "")
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo",
         "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango")


class Gen:
    """Draws names, ids and memories from one seeded random source."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seed = seed
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n

    def token(self, n: int) -> str:
        return f"zq{self.seed % 1000}n{n}x"

    def mid(self, n: int, prefix: str = "m-fz") -> str:
        return f"{prefix}-{n:06d}"

    def folder(self, trash: bool = True) -> str:
        choices = FOLDERS if trash else tuple(f for f in FOLDERS if f != "trash")
        return self.rng.choice(choices)

    def rel(self, category: str, n: int, folder: str | None = None, name: str | None = None) -> str:
        folder = self.folder() if folder is None else folder
        name = name or f"{category}-{n:06d}.md"
        return f"{folder}/{name}" if folder else name

    def words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high)))

    def title(self, n: int) -> str:
        return " ".join([*self.rng.sample(VOCAB, self.rng.randint(0, 3)), self.token(n), self.words(1, 4)])

    def body(self, n: int) -> str:
        paragraphs = [self.words(3, 40) for _ in range(self.rng.randint(0, 4))]
        if self.rng.random() < 0.3:
            paragraphs.append("## Heading\n\n- item\n- item " + self.rng.choice(VOCAB))
        if self.rng.random() < 0.2:
            paragraphs.append("---\n\nafter a rule")
        return "\n\n".join([self.token(n), *paragraphs]) + ("\n" if self.rng.random() < 0.9 else "")

    def moment(self) -> datetime:
        start = datetime(2020, 1, 1, tzinfo=UTC)
        return start + timedelta(seconds=self.rng.randint(0, 6 * 365 * 86400))

    def memory(self, n: int, memory_id: str | None = None, **changes: Any) -> Memory:
        rng = self.rng
        scope = rng.choice(memory_mod.SCOPES)
        created = self.moment()
        fields: dict[str, Any] = {
            "id": memory_id or self.mid(n),
            "title": self.title(n),
            "type": rng.choice(memory_mod.TYPES),
            "body": self.body(n),
            "klass": rng.choice((None, *memory_mod.CLASSES)),
            "scope": scope,
            "project": "github.com/acme/api" if scope == "project" else None,
            "paths": tuple(rng.sample(("src/**", "tests/**", "*.py", "docs/*.md"), rng.randint(0, 2))),
            "tasks": tuple(rng.sample(("test", "refactor", "deploy"), rng.randint(0, 2))),
            "authority": rng.choice(memory_mod.AUTHORITIES),
            "trust": rng.choice(("system", "learned", "learned", "external")),
            "lifecycle": rng.choice(("trial", "proven", "proven", "superseded")),
            "recall": rng.choice(memory_mod.RECALLS),
            "tier": rng.choice(("cold", "cold", "cold", "hot")),
            "importance": round(rng.random(), 3),
            "summary": self.words(0, 12),
            "trigger": ("When I " + self.words(1, 6)) if rng.random() < 0.5 else "",
            "tags": tuple(dict.fromkeys(rng.sample(WORDS, rng.randint(0, 3)))),
            "links": tuple(f"[[{w}]]" for w in rng.sample(WORDS, rng.randint(0, 2))),
            "proof_count": rng.randint(0, 9),
            "created": created,
            "updated": created + timedelta(days=rng.randint(0, 300)),
            "extra": {"x-fuzz": n} if rng.random() < 0.3 else {},
        }
        if rng.random() < 0.2:
            fields["evidence"] = ({"event": f"e-{n}", "quote": self.words(1, 5)},)
        if rng.random() < 0.2:
            fields["occurred_at"] = created.date()
        fields.update(changes)
        return Memory(**fields)

    def text(self, n: int, memory_id: str | None = None, **changes: Any) -> str:
        """A valid memory file in the canonical form."""
        return render(self.memory(n, memory_id, **changes))


def _file(category: str, rel: str, text: str | bytes, expect: str, memory_id: str | None = None) -> Case:
    data = text.encode("utf-8") if isinstance(text, str) else text
    if expect == NOTE:
        memory_id = note_id(rel)
    return Case(category, rel, data, expect, memory_id)


# ---------------------------------------------------------------- generators (one case list per call)


def gen_valid(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    text = g.text(n, mid)
    style = g.rng.choice(("canonical", "crlf", "bom", "bom-crlf", "comments", "hand", "fence-spaces", "no-body"))
    if style == "crlf":
        text = text.replace("\n", "\r\n")
    elif style == "bom":
        text = "\ufeff" + text
    elif style == "bom-crlf":
        text = "\ufeff" + text.replace("\n", "\r\n")
    elif style == "comments":
        lines = text.split("\n")
        lines[1] += "   # the id: never reused"
        lines.insert(1, "# written by hand")
        text = "\n".join(lines)
    elif style == "hand":
        text = (f"---\n# hand-written\nid: '{mid}'\ntitle: 'It''s {g.token(n)}: by hand'\ntype: procedure\n"
                f"tags:\n  - one\n  - two\nsummary: >\n  folded\n  text\nanchor: &a [x, y]\nreuse: *a\n"
                f"---\n{g.body(n)}")
    elif style == "fence-spaces":
        text = text.replace("---\n", "---  \n", 2)
    elif style == "no-body":
        text = text[: text.index("\n---\n") + 4]
    return [_file("valid", g.rel("valid", n), text, MEMORY, mid)]


def gen_note(g: Gen) -> list[Case]:
    n = g.next()
    t = g.token(n)
    text = g.rng.choice((
        f"# Note {t}\n\nplain markdown, no frontmatter\n",
        f"{t} just text\nno heading at all",
        f"---\ntitle: Frontmatter without an id {t}\ntags: [a]\n---\n# Heading {t}\n",
        f"---\n---\n# Empty frontmatter {t}\n",
        f"----\nid: not-a-fence\n---\n{t}\n",
        f" ---\nid: m-indented-fence\n---\n{t}\n",
        f"***\n\n{t} a rule\n",
        f"```\n# not a heading {t}\n```\n",
        f"---\n# only a comment\n---\n{t}\n",
        f"---\nsummary: \"\\u00e9\"\n---\n{t}\n",
        f"\r\n# CRLF note {t}\r\nbody\r\n",
        f"# lone CR note {t}\rsecond\r",
        f"---\n{t}: x\nbomb: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        f"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\nno id\n",
    ))
    return [_file("note", g.rel("note", n), text, NOTE)]


BROKEN_YAML = (
    "title: [unclosed\ntype: fact",
    'title: "unclosed quote\ntype: fact',
    "title: T\n  type: fact",
    "title: T\n\ttype: fact",
    "title: T: U: V\ntype: fact",
    "title: T\ntype: fact\n- a list item",
    "title: T\ntype: fact\nx: *undefined_alias",
    "title: T\ntype: fact\nx: !custom tag",
    "title: T\ntype: fact\nx: !!python/object/apply:os.system [echo]",
    "title: T\ntype: fact\n: no key",
    "title: T\ntype: fact\nx: {a: 1",
    "title: T\ntype: fact\nx: [a, b]]",
    "title: T\ntype: fact\nx: 'a' junk",
    "title: T\ntitle: again\ntype: fact",
    "title: T\ntype: fact\nx: \x07bell",
    "title: T\ntype: fact\nx: |\n  ok\n bad indent",
    "title: T\ntype: fact\n? [complex, key]\n: value",
    "title: T\ntype: fact\ncreated: 2026-13-45",
    "title: T\ntype: fact\ncreated: 2026-02-30T10:00:00Z",
    "title: T\ntype: fact\nx: 1" + "0" * 5000,
)


def gen_broken_yaml(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    body = g.rng.choice(BROKEN_YAML)
    shape = g.rng.choice(("with-id", "with-id", "no-id", "scalar", "list", "unclosed"))
    if shape == "with-id":
        text = f"---\nid: {mid}\n{body}\n---\n{g.body(n)}"
    elif shape == "no-id":  # broken YAML is bad even where a valid header would make a plain note
        text = f"---\n{body}\n---\n{g.body(n)}"
    elif shape == "scalar":
        text = f"---\njust a sentence {g.token(n)}\n---\nbody\n"
    elif shape == "list":
        text = f"---\n- id: {mid}\n- title: T\n---\nbody\n"
    else:
        text = f"---\nid: {mid}\ntitle: T\ntype: fact\n{g.body(n)}"
        text = text.replace("\n---", "\n- - -")
    return [_file("broken_yaml", g.rel("broken_yaml", n), text, BAD)]


WRONG_TYPES: tuple[tuple[str, str], ...] = (
    ("id", "[a, b]"), ("id", "{a: 1}"), ("id", '""'), ("id", "Bad Id"), ("id", "a..b"), ("id", "true"),
    ("id", "null"), ("id", "-leading-dash"), ("id", "x" * 200),
    ("title", "[a, b]"), ("title", "{a: 1}"), ("title", "true"), ("title", "null"), ("title", '""'),
    ("title", '"   "'), ("title", "2020-01-01"),
    ("type", "[fact]"), ("type", "5"), ("type", "true"),
    ("importance", "high"), ("importance", "1.5"), ("importance", "-0.1"), ("importance", "[0.5]"),
    ("importance", ".nan"), ("importance", "true"), ("importance", ".inf"),
    ("proof_count", "-1"), ("proof_count", "1.5"), ("proof_count", '"3"'), ("proof_count", "true"),
    ("proof_count", str(2**60)), ("proof_count", "99999999999999999999999"),
    ("tags", "{a: 1}"), ("tags", "[[nested]]"), ("tags", "[{a: 1}]"), ("tags", "true"), ("tags", "[true]"),
    ("tags", "5"), ("paths", "{a: b}"), ("links", "[null]"),
    ("created", "yesterday"), ("created", "12345"), ("created", "[2020-01-01]"), ("updated", "{a: 1}"),
    ("created", "'9999-12-31T23:59:59-10:00'"), ("updated", "0001-01-01T00:00:00+10:00"),
    ("last_applied", "9999-12-31T23:59:59-12:00"),
    ("applied", "[1, 2]"), ("applied", "{unknown: 1}"), ("applied", "{ignored: -1}"), ("applied", '{ignored: "x"}'),
    ("applied", "x"), ("applied", "{ignored: 99999999999999999999}"),
    ("evidence", "quote"), ("evidence", "[1, 2]"), ("evidence", "{a: 1}"), ("evidence", "[{a: !!binary aGk=}]"),
    ("summary", "[a]"), ("summary", "{a: b}"), ("trigger", "[a]"), ("source", "{a: 1}"),
    ("occurred_at", "not a date"), ("occurred_at", "[1]"), ("supersedes", "[a]"),
    ("x-set", "!!set {a, b}"), ("x-binary", "!!binary aGVsbG8="), ("x-self", "&s [*s]"),
    ("x-deep", "[" * 40 + "]" * 40),
)


def gen_wrong_types(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    key, value = g.rng.choice(WRONG_TYPES)
    keys = {"id": mid, "title": f"T {g.token(n)}", "type": "fact"}
    keys[key] = value
    lines = "\n".join(f"{k}: {v}" for k, v in keys.items())
    if g.rng.random() < 0.3:
        lines += "\nscope: project"  # and no project: bad on its own too
    return [_file("wrong_types", g.rel("wrong_types", n), f"---\n{lines}\n---\n{g.body(n)}", BAD)]


def gen_unknown_enum(g: Gen) -> list[Case]:
    n = g.next()
    key = g.rng.choice(sorted(memory_mod.ENUMS))
    allowed = memory_mod.ENUMS[key]
    value = g.rng.choice((g.rng.choice(allowed).upper(), g.rng.choice(allowed).title(), "unknown", "memo",
                          g.rng.choice(allowed) + " ", f"'{g.rng.choice(allowed)}x'", "hot-ish", "Fact"))
    if value.strip() in allowed:
        value = value.strip() + "-x"
    keys = {"id": g.mid(n), "title": f"T {g.token(n)}", "type": "fact", key: value}
    lines = "\n".join(f"{k}: {v}" for k, v in keys.items())
    return [_file("unknown_enum", g.rel("unknown_enum", n), f"---\n{lines}\n---\nbody\n", BAD)]


def gen_huge_values(g: Gen, heavy: Counter[str]) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    limit = memory_mod.MAX_HEADER_CHARS
    options = ["long-title", "long-summary", "header-over-limit", "long-key", "long-token"]
    if heavy["list-20k"] < 1:
        options.append("list-20k")
    if heavy["million"] < 2:
        options.append("list-1e6")
    if heavy["mb-body"] < 3:
        options.append("body-1mb")
    kind = g.rng.choice(options)
    rel = g.rel("huge_values", n)
    if kind == "long-title":
        return [_file("huge_values", rel, g.text(n, mid, title=g.token(n) + " " + "word " * (limit // 6)), MEMORY, mid)]
    if kind == "long-summary":
        return [_file("huge_values", rel, g.text(n, mid, summary="s" * (limit - 4096)), MEMORY, mid)]
    if kind == "header-over-limit":
        return [_file("huge_values", rel, g.text(n, mid, summary="long " * (limit // 4)), BAD)]
    if kind == "list-20k":
        return [_file("huge_values", rel, g.text(n, mid, tags=tuple(f"t{i}" for i in range(20_000))), MEMORY, mid)]
    if kind == "list-1e6":
        heavy["million"] += 1
        items = ", ".join(["x"] * 1_000_000)
        return [_file("huge_values", rel, f"---\nid: {mid}\ntitle: T\ntype: fact\ntags: [{items}]\n---\n", BAD)]
    if kind == "long-key":  # written back as an explicit "? key" by the engine
        return [_file("huge_values", rel, g.text(n, mid, extra={"k" * 900: 1}), MEMORY, mid)]
    if kind == "long-token":
        return [_file("huge_values", rel, g.text(n, mid, body="x" * 200_000 + "\n"), MEMORY, mid)]
    heavy["mb-body"] += 1
    return [_file("huge_values", rel, g.text(n, mid, body=(g.words(50, 50) + "\n") * 3500), MEMORY, mid)]


def gen_duplicate_ids(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n, "m-dup")
    copies = g.rng.randint(2, 3)
    shape = g.rng.choice(("spread", "one-in-trash", "same-text", "note-collision"))
    out = []
    if shape == "note-collision":  # a memory whose id is the id a plain note gets from its path
        note_rel = g.rel("duplicate_ids", n, "notes", f"duplicate-note-{n:06d}.md")
        out.append(_file("duplicate_ids", note_rel, f"# plain {g.token(n)}\n", NOTE))
        clash = note_id(note_rel)
        rel = g.rel("duplicate_ids", n, g.folder(), f"duplicate-ids-{n:06d}-0.md")
        return [*out, _file("duplicate_ids", rel, g.text(n, clash), MEMORY, clash)]
    same = g.text(n, mid)
    for i in range(copies):
        folder = "trash" if shape == "one-in-trash" and i == 0 else g.folder(trash=False)
        text = same if shape == "same-text" else g.text(n, mid)
        rel = g.rel("duplicate_ids", n, folder, f"duplicate-ids-{n:06d}-{i}.md")
        out.append(_file("duplicate_ids", rel, text, MEMORY, mid))
    return out


def gen_conflict_markers(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    t = g.token(n)
    choices = (
        (f"---\nid: {mid}\n<<<<<<< HEAD\ntitle: Ours {t}\n=======\ntitle: Theirs {t}\n>>>>>>> feature\n"
         f"type: fact\n---\nbody\n", BAD),
        (f"---\nid: {mid}\ntitle: T {t}\ntype: fact\ntags: [a,\n<<<<<<< HEAD\n  b]\n=======\n  c]\n>>>>>>> x\n---\n",
         BAD),
        (f"---\nid: {mid}\ntitle: \"x {t}\n<<<<<<< HEAD\n\"\ntype: fact\n---\n", BAD),
        (f"---\nid: {mid}\ntitle: T {t}\n||||||| base\ntype: fact\n---\n", BAD),
        (f"---\r\nid: {mid}\r\ntitle: T {t}\r\n=======\r\ntype: fact\r\n---\r\n", BAD),
        (f"<<<<<<< HEAD\n---\nid: {mid}\ntitle: Ours {t}\ntype: fact\n---\nours\n=======\n---\nid: {mid}\n"
         f"title: Theirs\ntype: fact\n---\ntheirs\n>>>>>>> b\n", BAD),
        (f"---\nid: {mid}\ntitle: T {t}\ntype: fact\n---\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b\n", MEMORY),
        (f"---\nid: {mid}\ntitle: T {t}\ntype: fact\nsummary: a\n  <<<<<<< HEAD\n  b\n  =======\n  c\n---\nbody\n",
         MEMORY),
        (f"# note {t}\n\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b\n", NOTE),
    )
    text, expect = g.rng.choice(choices)
    return [_file("conflict_markers", g.rel("conflict_markers", n), text, expect, mid if expect == MEMORY else None)]


MAGIC = (b"\x89PNG\r\n\x1a\n", b"PK\x03\x04", b"%PDF-1.7\n", b"\x7fELF\x02\x01\x01", b"\x1f\x8b\x08", b"GIF89a")


def gen_binary(g: Gen) -> list[Case]:
    n = g.next()
    rng = g.rng
    noise = bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000)))
    kind = rng.choice(("random", "magic", "nul-body", "nul-header", "nul-text"))
    if kind == "random":
        data = b"\x00" + noise
    elif kind == "magic":
        data = rng.choice(MAGIC) + noise + b"\x00"
    elif kind == "nul-body":
        data = g.text(n).encode() + b"tail\x00tail\n"
    elif kind == "nul-header":
        data = f"---\nid: {g.mid(n)}\ntitle: T\x00U\ntype: fact\n---\n".encode()
    else:
        data = f"# note {g.token(n)}\n\nsome\x00text\n".encode()
    return [_file("binary", g.rel("binary", n), data, BAD)]


def gen_non_utf8(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    text = g.text(n, mid, title=f"Café crème {g.token(n)} naïve")
    kind = g.rng.choice(("latin-1", "cp1252", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "overlong",
                         "surrogate", "truncated"))
    if kind == "latin-1":
        data = text.encode("latin-1", "replace")
    elif kind == "cp1252":
        data = text.replace("crème", "“crème”").encode("cp1252", "replace")
    elif kind in ("utf-16", "utf-16-le", "utf-16-be", "utf-32"):
        data = text.encode(kind)
    elif kind == "overlong":
        data = text.encode() + b"\xc0\xaf\n"
    elif kind == "surrogate":
        data = text.encode() + b"\xed\xa0\x80\n"
    else:
        data = text.encode() + "é".encode()[:1]
    return [_file("non_utf8", g.rel("non_utf8", n), data, BAD)]


def gen_bom(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    kind = g.rng.choice(("memory", "note", "broken", "bom-only", "crlf-memory"))
    if kind == "memory":
        return [_file("bom", g.rel("bom", n), "\ufeff" + g.text(n, mid), MEMORY, mid)]
    if kind == "crlf-memory":
        return [_file("bom", g.rel("bom", n), "\ufeff" + g.text(n, mid).replace("\n", "\r\n"), MEMORY, mid)]
    if kind == "note":
        return [_file("bom", g.rel("bom", n), f"\ufeff# Note {g.token(n)}\n", NOTE)]
    if kind == "bom-only":
        return [_file("bom", g.rel("bom", n), "\ufeff", NOTE)]
    return [_file("bom", g.rel("bom", n), f"\ufeff---\nid: {mid}\ntitle: [\n---\n", BAD)]


def gen_line_endings(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    text = g.text(n, mid)
    kind = g.rng.choice(("crlf", "lone-cr", "mixed", "cr-in-body", "crlf-note", "cr-fence"))
    rel = g.rel("line_endings", n)
    if kind == "crlf":
        return [_file("line_endings", rel, text.replace("\n", "\r\n"), MEMORY, mid)]
    if kind == "lone-cr":
        return [_file("line_endings", rel, text.replace("\n", "\r"), BAD)]
    if kind == "mixed":  # CRLF fences, LF inside
        return [_file("line_endings", rel, text.replace("---\n", "---\r\n"), MEMORY, mid)]
    if kind == "cr-in-body":
        return [_file("line_endings", rel, text + "one\rtwo\r", MEMORY, mid)]
    if kind == "crlf-note":
        return [_file("line_endings", rel, f"# CRLF {g.token(n)}\r\n\r\nbody\r\n", NOTE)]
    return [_file("line_endings", rel, "---\r" + text[4:], BAD)]


def gen_big_body(g: Gen, heavy: Counter[str]) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    rel = g.rel("big_body", n, g.folder(trash=False))
    if heavy["10mb"] < 1:
        heavy["10mb"] += 1
        line = g.words(12, 12) + "\n"
        body = line * (10 * 1024 * 1024 // len(line))
        return [_file("big_body", rel, g.text(n, mid, body=body), MEMORY, mid)]
    if heavy["over-limit"] < 1:
        heavy["over-limit"] += 1
        return [Case("big_body", rel, b"", BAD, kind="sparse", size=store.MAX_FILE_BYTES + 1)]
    line = g.words(10, 10) + "\n"
    return [_file("big_body", rel, g.text(n, mid, body=line * g.rng.randint(1000, 5000)), MEMORY, mid)]


def gen_deep_nesting(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    depth = g.rng.choice((40, 999, 1000, 10_000))
    kind = g.rng.choice(("list", "map", "mixed", "block", "title", "no-id", "ok"))
    if kind == "list":
        value = "[" * depth + "]" * depth
    elif kind == "map":
        value = "{a: " * depth + "1" + "}" * depth
    elif kind == "mixed":
        value = "[{a: " * (depth // 2) + "1" + "}]" * (depth // 2)
    elif kind == "block":
        value = "\n" + "".join("  " * i + "- \n" for i in range(1, 200))
    elif kind == "title":
        return [_file("deep_nesting", g.rel("deep_nesting", n),
                      f"---\nid: {mid}\ntitle: {'[' * depth}{']' * depth}\ntype: fact\n---\n", BAD)]
    elif kind == "no-id":
        return [_file("deep_nesting", g.rel("deep_nesting", n), f"---\nx: {'[' * 10_000}{']' * 10_000}\n---\n", BAD)]
    else:  # 20 levels: kept
        text = f"---\nid: {mid}\ntitle: T {g.token(n)}\ntype: fact\nx: {'[' * 20}1{']' * 20}\n---\n"
        return [_file("deep_nesting", g.rel("deep_nesting", n), text, MEMORY, mid)]
    text = f"---\nid: {mid}\ntitle: T {g.token(n)}\ntype: fact\nx: {value.rstrip()}\n---\n"
    return [_file("deep_nesting", g.rel("deep_nesting", n), text, BAD)]


def _bomb(levels: int, fan: int = 9, key: str = "x") -> str:
    lines = [f"{key}0: &a0 [{', '.join(['lol'] * fan)}]"]
    for i in range(1, levels):
        lines.append(f"{key}{i}: &a{i} [{', '.join([f'*a{i - 1}'] * fan)}]")
    return "\n".join(lines)


def gen_alias_bomb(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    head = f"---\nid: {mid}\ntitle: T {g.token(n)}\ntype: fact\n"
    kind = g.rng.choice(("extra", "tags", "evidence", "summary", "self", "small", "no-id", "merge"))
    rel = g.rel("alias_bomb", n)
    if kind == "extra":
        return [_file("alias_bomb", rel, head + _bomb(9) + "\n---\n", BAD)]
    if kind == "tags":
        return [_file("alias_bomb", rel, head + _bomb(6) + "\ntags: *a5\n---\n", BAD)]
    if kind == "evidence":
        return [_file("alias_bomb", rel, head + _bomb(6, key="y") + "\nevidence: [{event: e, quote: *a5}]\n---\n",
                      BAD)]
    if kind == "summary":
        return [_file("alias_bomb", rel, head + "s: &s text\nsummary: *s\nt: &t [*s, *s]\n---\n", MEMORY, mid)]
    if kind == "self":
        return [_file("alias_bomb", rel, head + "loop: &l {self: *l}\n---\n", BAD)]
    if kind == "small":  # 9 + 81 + 729 nodes: under the limit for unknown keys
        return [_file("alias_bomb", rel, head + _bomb(3) + "\n---\n", MEMORY, mid)]
    if kind == "merge":  # the required keys come from a merge key
        text = f"---\nbase: &b {{id: {mid}, title: Merged {g.token(n)}, type: fact}}\n<<: *b\n---\n"
        return [_file("alias_bomb", rel, text, MEMORY, mid)]
    return [_file("alias_bomb", rel, "---\n" + _bomb(9) + "\n---\nno id here\n", NOTE)]


def gen_fences(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    text = g.text(n, mid)
    kind = g.rng.choice(("no-open", "no-close", "open-only", "open-eof", "frontmatter-only", "dash-body",
                         "dots-close", "close-spaces"))
    rel = g.rel("fences", n)
    if kind == "no-open":
        return [_file("fences", rel, text[4:], NOTE)]
    if kind == "no-close":
        return [_file("fences", rel, text.replace("\n---\n", "\n", 1), BAD)]
    if kind == "open-only":
        return [_file("fences", rel, "---\n", BAD)]
    if kind == "open-eof":
        return [_file("fences", rel, "---", NOTE)]
    if kind == "frontmatter-only":
        return [_file("fences", rel, text[: text.index("\n---\n") + 4], MEMORY, mid)]
    if kind == "dash-body":
        return [_file("fences", rel, text + "\n---\nmore\n---\n", MEMORY, mid)]
    if kind == "dots-close":  # YAML's document end marker is not a closing fence
        return [_file("fences", rel, text.replace("\n---\n", "\n...\n", 1), BAD)]
    return [_file("fences", rel, text.replace("\n---\n", "\n---   \t\n", 1), MEMORY, mid)]


def gen_empty(g: Gen) -> list[Case]:
    n = g.next()
    data = g.rng.choice((b"", b"\n", b"\n\n\n", b"   ", b"\t\n", b"\r\n"))
    return [_file("empty", g.rel("empty", n), data, NOTE)]


def gen_symlink(g: Gen) -> list[Case]:
    n = g.next()
    folder = g.folder(trash=False)
    rel = g.rel("symlink", n, folder)
    kind = g.rng.choice(("inside", "outside", "dangling-inside", "dangling-outside", "loop", "dir-inside",
                         "dir-outside", "parent"))
    companion = f"{folder}/target-{n:06d}.txt" if folder else f"target-{n:06d}.txt"
    if kind == "inside":
        return [Case("symlink", rel, expect=IGNORED, kind="symlink", target=f"target-{n:06d}.txt",
                     companions=((companion, b"# text\n"),))]
    if kind == "outside":
        return [Case("symlink", rel, expect=BAD, kind="symlink", target="{outside}/outside.md")]
    if kind == "dangling-inside":
        return [Case("symlink", rel, expect=IGNORED, kind="symlink", target=f"missing-{n}.md")]
    if kind == "dangling-outside":
        return [Case("symlink", rel, expect=BAD, kind="symlink", target=f"/nonexistent-{n}/x.md")]
    if kind == "loop":
        return [Case("symlink", rel, expect=BAD, kind="symlink", target=rel.rsplit("/", 1)[-1])]
    if kind == "parent":  # a link to the folder holding it: never followed, so no endless walk
        return [Case("symlink", rel[:-3], expect=IGNORED, kind="symlink", target=".")]
    if kind == "dir-inside":
        dir_companion = companion[:-4] + "-dir"
        return [Case("symlink", rel[:-3], expect=IGNORED, kind="symlink", target=dir_companion.rsplit("/", 1)[-1],
                     companions=((dir_companion, None),))]
    return [Case("symlink", rel[:-3], expect=BAD, kind="symlink", target="{outside}")]


def gen_dir_md(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    folder = g.folder(trash=False)
    base = g.rel("dir_md", n, folder, f"folder-{n:06d}.md")
    if g.rng.random() < 0.5:
        return [Case("dir_md", base, expect=IGNORED, kind="dir")]
    return [_file("dir_md", f"{base}/inner.md", g.text(n, mid), MEMORY, mid)]


ODD_NAMES = (
    "with space {n}.md", "  leading spaces {n}.md", "trailing space {n} .md", "café {n}.md", "cafe\u0301 {n}.md",
    "日本語-{n}.md", "emoji-😀-{n}.md", "-dash-{n}.md", "#hash-{n}.md", "%percent%20-{n}.md", "question?-{n}.md",
    "star*-{n}.md", "back\\slash-{n}.md", "new\nline-{n}.md", "carriage\rreturn-{n}.md", "tab\there-{n}.md",
    "quote'\"-{n}.md", "semi;colon:{n}.md", "[[wiki]]-{n}.md", "x.md.md.{n}.md", "UPPER-{n}.MD", "{n}.markdown",
    ".hidden-{n}.md", "INDEX.md", "README-{n}.md", "\u202eright-to-left-{n}.md", "zero\u200bwidth-{n}.md",
    "esc\x1b[31mred-{n}.md", "bell\x07-{n}.md", "vtab\x0b-{n}.md", "sep\u2028-{n}.md", "del\x7f-{n}.md",
    "nel\x85-{n}.md",
)


def gen_odd_names(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    folder = g.folder(trash=False)
    pattern = g.rng.choice((*ODD_NAMES, "long", "non-utf8", "non-utf8-dir"))
    if pattern == "long":
        name = f"{n}-" + "x" * (251 - len(str(n))) + ".md"
    elif pattern == "non-utf8":
        name = os.fsdecode(f"bad-{n}-".encode() + g.rng.choice((b"\xff", b"\xe9", b"\xc0\xaf")) + b".md")
    elif pattern == "non-utf8-dir":
        name = os.fsdecode(f"folder-{n}-".encode() + b"\xfe")
        rel = f"{folder}/{name}" if folder else name
        return [Case("odd_names", rel, expect=BAD, kind="dir", companions=((f"{rel}/inside.md", b"# hidden\n"),))]
    else:
        name = pattern.format(n=n)
        if pattern == "INDEX.md" and folder in ("", "memories/projects/acme"):
            folder = "notes"  # the engine's own pages live there
        if pattern == "README-{n}.md":
            folder = ""
    rel = f"{folder}/{name}" if folder else name
    if name.startswith(".") or not name.endswith(".md") or name == "INDEX.md":
        return [_file("odd_names", rel, g.text(n, mid), IGNORED)]
    if not store._is_utf8(name):
        return [_file("odd_names", rel, g.text(n, mid), BAD)]
    draw = g.rng.random()
    if draw < 0.3:  # a bad file with an odd name: its warning line must still be one line naming it
        return [_file("odd_names", rel, f"---\nid: {mid}\ntitle: [oops\n---\n", BAD)]
    if draw < 0.65:
        return [_file("odd_names", rel, g.text(n, mid), MEMORY, mid)]
    return [_file("odd_names", rel, f"# Odd name {g.token(n)}\n", NOTE)]


SPECIAL = ":[]{}\"'\n\t-#&*!|>%@`,?~\r\\"


def gen_mutation(g: Gen) -> list[Case]:
    n = g.next()
    rng = g.rng
    data = bytearray(g.text(n, g.mid(n, "m-mut")).encode())
    for _ in range(rng.randint(1, 3)):
        if not data:
            break
        op = rng.randrange(9)
        at = rng.randrange(len(data))
        if op == 0:
            del data[at]
        elif op == 1:
            data[at:at] = rng.choice(SPECIAL).encode()
        elif op == 2:
            data[at:at] = bytes([rng.randrange(256)])
        elif op == 3:
            del data[at:]
        elif op == 4:
            lines = bytes(data).split(b"\n")
            i = rng.randrange(len(lines))
            lines.insert(i, lines[rng.randrange(len(lines))])
            data = bytearray(b"\n".join(lines))
        elif op == 5:
            lines = bytes(data).split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
        elif op == 6:
            data[at:at] = b"\n  "
        elif op == 7:
            data = bytearray(bytes(data).replace(b": ", b":", 1))
        else:
            data[at:at] = rng.choice((b"\n<<<<<<< HEAD\n", b"\n=======\n", b"\x00", b"\xef\xbb\xbf", b"\r"))
    return [Case("mutation", g.rel("mutation", n), bytes(data), ANY)]


EDGE_DATES = (
    ("created", "9999-12-31T23:59:59Z", MEMORY), ("created", "0001-01-01T00:00:00Z", MEMORY),
    ("updated", "9999-12-31", MEMORY), ("expires_at", "9999-12-31", MEMORY), ("occurred_at", "0001-01-01", MEMORY),
    ("last_applied", "9999-12-31T23:59:59.999999Z", MEMORY), ("trashed_at", "1970-01-01T00:00:00Z", MEMORY),
    ("created", "9999-12-31T23:59:59-10:00", BAD), ("updated", "0001-01-01T00:00:00+10:00", BAD),
    ("created", "2026-11-20T25:00:00Z", BAD), ("occurred_at", "2026-02-29", BAD),
    ("created", "'2026-11-20T09:14:00+05:30'", MEMORY), ("created", "2026-11-20 09:14:00", MEMORY),
)


def gen_edge_dates(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    key, value, expect = g.rng.choice(EDGE_DATES)
    tier = g.rng.choice(("hot", "cold"))
    text = (f"---\nid: {mid}\ntitle: Dates {g.token(n)}\ntype: episode\ntier: {tier}\nimportance: 0.3\n"
            f"{key}: {value}\n---\ndone yesterday {g.words(2, 6)}\n")
    return [_file("edge_dates", g.rel("edge_dates", n), text, expect, mid if expect == MEMORY else None)]


ODD_KEYS = (
    ("~: 1", MEMORY), ("true: x", MEMORY), ("1: x", MEMORY), ("2026-01-01: x", MEMORY), ('"quoted key": x', MEMORY),
    ("clé: x", MEMORY), ("'': empty key", MEMORY), ("x: {1: a, '1': b}", MEMORY), ("x: {a: 1, a: 2}", BAD),
    ('"\\ud800": 1', BAD), ('x: "\\ud83d\\ude00"', BAD), ('x: "\\ud800"', BAD), ("x: !!float 1", MEMORY),
    ("x: !!str 1", MEMORY), ("x: 0o17", MEMORY), ("x: 1_000", MEMORY), ("x: .NaN", MEMORY), ("x: -.inf", MEMORY),
    ("x: !!timestamp 2026-01-01", MEMORY), ("x: !!null ''", MEMORY), ("x: !!omap [a: 1]", BAD),
    ("x: !!pairs [a: 1]", BAD), ("? x\n: 1", MEMORY), ("x: &anchor 1\ny: *anchor", MEMORY),
)


def gen_odd_keys(g: Gen) -> list[Case]:
    n = g.next()
    mid = g.mid(n)
    line, expect = g.rng.choice(ODD_KEYS)
    text = f"---\nid: {mid}\ntitle: Keys {g.token(n)}\ntype: fact\n{line}\n---\nbody\n"
    return [_file("odd_keys", g.rel("odd_keys", n), text, expect, mid if expect == MEMORY else None)]


def gen_fifo(g: Gen) -> list[Case]:
    n = g.next()
    return [Case("fifo", g.rel("fifo", n, g.folder(trash=False)), expect=BAD, kind="fifo")]


Generator = Callable[[Gen], list[Case]]
# (category, weight); heavy categories cap their own big files.
CATEGORIES: tuple[tuple[str, float], ...] = (
    ("valid", 14), ("note", 5), ("broken_yaml", 8), ("wrong_types", 8), ("unknown_enum", 4), ("huge_values", 2),
    ("duplicate_ids", 4), ("conflict_markers", 4), ("binary", 4), ("non_utf8", 4), ("bom", 3),
    ("line_endings", 4), ("big_body", 0.3), ("deep_nesting", 3), ("alias_bomb", 3), ("fences", 4), ("empty", 2),
    ("symlink", 2), ("dir_md", 1.5), ("odd_names", 4), ("mutation", 16), ("edge_dates", 3), ("odd_keys", 3),
    ("fifo", 0.3),
)


def generate(seed: int, count: int, *, light: bool = False) -> list[Case]:
    """``count`` cases (about: duplicate groups add a copy or two), every category at least once.

    ``light`` leaves out the costliest files (the 10 MB body, the million-item and 20,000-item lists).
    """
    g = Gen(seed)
    heavy: Counter[str] = Counter({"10mb": 1, "million": 2, "mb-body": 3, "list-20k": 1} if light else {})
    gens: dict[str, Generator] = {
        "valid": gen_valid, "note": gen_note, "broken_yaml": gen_broken_yaml, "wrong_types": gen_wrong_types,
        "unknown_enum": gen_unknown_enum, "huge_values": lambda g: gen_huge_values(g, heavy),
        "duplicate_ids": gen_duplicate_ids, "conflict_markers": gen_conflict_markers, "binary": gen_binary,
        "non_utf8": gen_non_utf8, "bom": gen_bom, "line_endings": gen_line_endings,
        "big_body": lambda g: gen_big_body(g, heavy), "deep_nesting": gen_deep_nesting,
        "alias_bomb": gen_alias_bomb, "fences": gen_fences, "empty": gen_empty, "symlink": gen_symlink,
        "dir_md": gen_dir_md, "odd_names": gen_odd_names, "mutation": gen_mutation, "edge_dates": gen_edge_dates,
        "odd_keys": gen_odd_keys, "fifo": gen_fifo,
    }
    names = [c for c, _ in CATEGORIES]
    weights = [w for _, w in CATEGORIES]
    cases: list[Case] = []
    order = names + g.rng.choices(names, weights, k=max(0, count - len(names)))
    for category in order:
        cases += gens[category](g)
    return _unique(cases)


def _unique(cases: list[Case]) -> list[Case]:
    """Drop cases whose path another case already uses (a fixed odd name may come up twice)."""
    seen: set[str] = set()
    out = []
    for case in cases:
        paths = {case.rel, *(rel for rel, _ in case.companions)}
        if paths & seen:
            continue
        seen |= paths
        out.append(case)
    return out


# ---------------------------------------------------------------- the oracle


@dataclass
class Verdict:
    """What the engine made of one case when parsed on its own."""

    outcome: str  # memory | note | bad | ignored
    memory_id: str | None = None
    problem: str | None = None


def judge(case: Case, figures: Figures) -> Verdict:
    """Parse one case in process (files only; links, folders and FIFOs keep their expectation)."""
    if case.kind == "sparse":
        return Verdict(BAD, problem="over the size limit")
    if not case.regular or case.expect == IGNORED:
        return Verdict(case.expect)
    if not store._is_utf8(case.rel):
        return Verdict(BAD, problem="name is not UTF-8")
    try:
        entry = store.entry_from_bytes(case.rel, case.data)
    except MemoryFileError as exc:
        if not exc.path or exc.path != case.rel:
            figures.fail(f"{case.category}: problem without its path: {exc!r} for {case.rel!r}")
        return Verdict(BAD, problem=exc.one_line())
    except Exception as exc:  # a crash: anything but MemoryFileError out of parse
        figures.crash(f"parse {case.category} {case.rel!r}: {type(exc).__name__}: {exc}", traceback.format_exc())
        return Verdict(BAD, problem="crash")
    memory = entry.memory
    if not memory.plain:
        try:  # an untouched file renders to its own bytes: the engine never churns it
            if render(memory, entry.parsed).encode("utf-8") != case.data:
                figures.fail(f"{case.category}: {case.rel!r} does not render back to its own bytes")
            again = memory_mod.parse(render(memory), case.rel).memory
            if again != memory and render(again) != render(memory):  # (NaN in an unknown key is never ==)
                figures.fail(f"{case.category}: {case.rel!r} does not round-trip through its canonical form")
        except Exception as exc:
            figures.crash(f"render {case.category} {case.rel!r}: {type(exc).__name__}: {exc}", traceback.format_exc())
    return Verdict(NOTE if memory.plain else MEMORY, memory.id)


# ---------------------------------------------------------------- figures


@dataclass
class Figures:
    seed: int
    count: int
    per_category: dict[str, Counter[str]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    tracebacks: list[str] = field(default_factory=list)
    counters: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)

    def fail(self, message: str) -> None:
        self.counters["failures"] += 1
        if len(self.failures) < 50:
            self.failures.append(message)

    def crash(self, message: str, trace: str = "") -> None:
        self.counters["crashes"] += 1
        self.fail("CRASH " + message)
        if trace and len(self.tracebacks) < 5:
            self.tracebacks.append(trace)


def holders(cases: Iterable[Case], verdicts: dict[str, Verdict]) -> dict[str, list[str]]:
    """id -> every path holding it."""
    out: dict[str, list[str]] = {}
    for case in cases:
        verdict = verdicts[case.rel]
        if verdict.outcome in (MEMORY, NOTE) and verdict.memory_id:
            out.setdefault(verdict.memory_id, []).append(case.rel)
    return out


def expected_state(cases: Iterable[Case], verdicts: dict[str, Verdict]) -> tuple[dict[str, str], Counter[str]]:
    """(id -> path the index must hold, path -> times it must be reported)."""
    holders: dict[str, list[str]] = {}
    reports: Counter[str] = Counter()
    created: dict[str, float | None] = {}
    for case in cases:
        verdict = verdicts[case.rel]
        if verdict.outcome == BAD:
            reports[case.shown] += 1
        elif verdict.outcome in (MEMORY, NOTE) and verdict.memory_id:
            holders.setdefault(verdict.memory_id, []).append(case.rel)
            stamp = store.entry_from_bytes(case.rel, case.data).memory.created if case.data else None
            created[case.rel] = stamp.timestamp() if stamp is not None else None

    def rank(memory_id: str, path: str) -> tuple[bool, bool, float, bool, str]:
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        named = stem.endswith((f"-{memory_id[-6:]}", f"-{memory_id.replace('.', '-')}"))
        stamp = created.get(path)
        return path.startswith(store.TRASH_DIR + "/"), stamp is None, stamp or 0.0, not named, path

    index = {}
    for memory_id, paths in holders.items():
        # Documented rule (vault_engine/copies.py), no index yet: the copy outside the trash, then the
        # oldest by its created stamp, then the one named for its id, then the first by path.
        ranked = sorted(paths, key=lambda p: rank(memory_id, p))
        index[memory_id] = ranked[0]
        for loser in ranked[1:]:
            reports[loser] += 1
    return index, reports


# ---------------------------------------------------------------- building vaults and hashing


def build_vault(root: Path, cases: Sequence[Case], outside: Path, order: random.Random | None = None) -> None:
    """A fresh vault holding ``cases`` (in a shuffled order with ``order``)."""
    store.create_vault(root, git=False)
    items = list(cases)
    if order is not None:
        order.shuffle(items)
    for case in items:
        target = root / case.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        for rel, data in case.companions:
            place = root / rel
            if data is None:
                place.mkdir(parents=True, exist_ok=True)
            else:
                place.parent.mkdir(parents=True, exist_ok=True)
                place.write_bytes(data)
        if case.kind == "file":
            target.write_bytes(case.data)
        elif case.kind == "sparse":
            with open(target, "wb") as handle:
                handle.truncate(case.size)
        elif case.kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
        elif case.kind == "fifo":
            os.mkfifo(target)
        elif case.kind == "symlink":
            os.symlink(case.target.replace("{outside}", str(outside)), target)


def snapshot(root: Path) -> dict[str, str]:
    """rel -> digest of every file outside the engine's own state, journal and generated pages."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".":
            dirs[:] = [d for d in dirs if d not in (store.STATE_DIR, store.JOURNAL_DIR, ".git")]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            rel = os.path.normpath(os.path.join(rel_folder, name))
            if name == store.INDEX_PAGE:
                continue
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                out[rel] = "link:" + os.readlink(path)
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256()
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                out[rel] = digest.hexdigest()
            elif stat.S_ISFIFO(info.st_mode):
                out[rel] = "fifo"
    return out


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel)}


def catalog_records(root: Path) -> dict[str, str]:
    from vault_engine.index.catalog import Catalog

    catalog = Catalog(root / store.STATE_DIR / "catalog.sqlite")
    try:
        return {i: path for i, (path, _digest) in catalog.records().items()}
    finally:
        catalog.close()


def journalled_paths(root: Path, known: set[str], index: dict[str, list[str]]) -> tuple[set[str], set[str]]:
    """(event ids of govern events not in ``known``, every path those events may change).

    ``index`` maps an id to every file holding it: a repair may keep another copy than the scan's pick.
    """
    from vault_engine.journal import Journal

    events = [e for e in Journal(root / store.JOURNAL_DIR).events(("govern",)) if e.id not in known]
    paths: set[str] = set()
    for event in events:
        p = event.payload
        ids = {event.memory, *p.get("related", []), *p.get("changes", {}), *p.get("trash", []),
               *p.get("create", []), *p.get("purge", [])}
        paths |= {p for i in ids for p in index.get(i, [])}
        paths |= set(p.get("created", {}).values()) | set(p.get("remove", []))
        for move in p.get("moved", {}).values():
            paths |= {move.get("from"), move.get("to")}
        paths |= {t.get("path") for t in p.get("tombstones", {}).values()}
    return {e.id for e in events}, {p for p in paths if p}


def govern_ids(root: Path) -> set[str]:
    from vault_engine.journal import Journal

    return {e.id for e in Journal(root / store.JOURNAL_DIR).events(("govern",))}


def check_reports(figures: Figures, where: str, reported: Iterable[str | None], expected: Counter[str]) -> None:
    counts = Counter(p for p in reported if p is not None)
    for path, times in expected.items():
        got = counts.get(path, 0)
        figures.counters[f"{where}_reported"] += min(got, 1)
        if got == 0:
            figures.counters["bad_unreported"] += 1
            figures.fail(f"{where}: bad file not reported: {path!r}")
        elif got > times:
            figures.counters["bad_reported_twice"] += 1
            figures.fail(f"{where}: {path!r} reported {got} times")
    for path in counts.keys() - expected.keys():
        figures.counters["unexpected_reports"] += 1
        figures.fail(f"{where}: a file that is not bad was reported: {path!r}")


def check_index(figures: Figures, where: str, got: dict[str, str], want: dict[str, str]) -> None:
    missing = {i: p for i, p in want.items() if got.get(i) != p}
    extra = {i: p for i, p in got.items() if i not in want}
    figures.counters[f"{where}_indexed"] = sum(1 for i, p in want.items() if got.get(i) == p)
    if missing:
        figures.counters["valid_missing"] += len(missing)
        figures.fail(f"{where}: {len(missing)} valid files not indexed (or at another path), e.g. "
                     f"{sorted(missing.items())[:3]}")
    if extra:
        figures.fail(f"{where}: {len(extra)} unexpected index entries, e.g. {sorted(extra.items())[:3]}")


def check_unchanged(figures: Figures, where: str, before: dict[str, str], after: dict[str, str],
                    allowed: set[str] | None = None, bad: set[str] | None = None) -> None:
    allowed, bad = allowed or set(), bad or set()
    moved = changed(before, after)
    for rel in sorted(moved - allowed):
        figures.counters["valid_rewritten" if rel not in bad else "bad_touched"] += 1
        figures.fail(f"{where}: changed a file it may not change: {rel!r}")
    for rel in sorted(moved & bad):
        figures.counters["bad_touched"] += 1
        figures.fail(f"{where}: changed a bad file: {rel!r}")


# ---------------------------------------------------------------- phases


def phase_vault(figures: Figures, cases: Sequence[Case], verdicts: dict[str, Verdict], workdir: Path) -> None:
    """All cases in one vault, in process: scan, sync (twice), search, context, maintain."""
    from vault_engine.context.director import TaskRequest, build
    from vault_engine.index.fakes import HashEmbedder
    from vault_engine.retrieval.searcher import SearchQuery
    from vault_engine.vault import Vault

    root, outside = workdir / "vault", workdir / "outside"
    build_vault(root, cases, outside)
    index, reports = expected_state(cases, verdicts)
    bad = {c.rel for c in cases if verdicts[c.rel].outcome == BAD}
    figures.counters["valid_expected"] = len(index)
    figures.counters["bad_expected"] = len(reports)
    before = snapshot(root)
    try:
        scan = store.scan(root)
        check_reports(figures, "scan", (p.path for p in scan.problems), reports)
        check_index(figures, "scan", {i: e.path for i, e in scan.entries.items()}, index)
        vault = Vault(root, embedder=HashEmbedder())
        report = vault.sync()
        check_reports(figures, "sync", (p.path for p in report.problems), reports)
        check_index(figures, "sync", catalog_records(root), index)
        again = vault.sync()
        if again.parsed or again.embedded or not again.plan.empty:
            figures.fail(f"a second sync was not idle: {again.plan.summary()}, parsed {again.parsed}")
        check_reports(figures, "resync", (p.path for p in again.problems), reports)
        figures.counters["valid_indexed"] = figures.counters["sync_indexed"]
        figures.counters["bad_reported"] = figures.counters["sync_reported"]
        found = checked = 0
        for case in cases:
            verdict = verdicts[case.rel]
            if (case.category != "valid" or verdict.outcome != MEMORY or index.get(verdict.memory_id or "") != case.rel
                    or case.rel.startswith("trash/")):
                continue
            parsed = memory_mod.parse(case.data.decode("utf-8"), case.rel).memory
            if parsed.trust == "external" or parsed.lifecycle == "superseded" or checked >= 25:
                continue
            checked += 1
            token = next(w for w in case.data.decode("utf-8").split() if w.startswith("zq"))
            hits = vault.search(SearchQuery(token, limit=50, trust=("system", "learned"))).hits
            found += any(h.id == verdict.memory_id for h in hits)
        figures.counters["search_checked"], figures.counters["search_found"] = checked, found
        if found != checked:
            figures.fail(f"search found {found} of {checked} valid memories by a word only they hold")
        for task in ("deploy to staging", "write tests with pytest fixtures", "café 日本語"):
            build(vault, TaskRequest(task, project="github.com/acme/api", path="src/app.py"), record=False)
        vault.search(SearchQuery("deploy staging"))
        check_unchanged(figures, "sync/search/context", before, snapshot(root), bad=bad)
        known = govern_ids(root)
        before = snapshot(root)
        result = vault.maintain()
        figures.counters["maintain_actions"] = len(result.actions)
        _events, allowed = journalled_paths(root, known, holders(cases, verdicts))
        check_unchanged(figures, "maintain", before, snapshot(root), allowed, bad)
        second = vault.maintain()
        if second.actions:
            figures.fail(f"a second maintain was not idle: {[a.describe() for a in second.actions[:3]]}")
    except Exception as exc:
        figures.crash(f"vault phase: {type(exc).__name__}: {exc}", traceback.format_exc())


def phase_duplicates(figures: Figures, cases: Sequence[Case], verdicts: dict[str, Verdict], workdir: Path,
                     seed: int) -> None:
    """Each duplicate group in fresh vaults, created in shuffled orders: always the same winner."""
    groups: dict[str, list[Case]] = {}
    for case in cases:
        verdict = verdicts[case.rel]
        if verdict.outcome in (MEMORY, NOTE) and verdict.memory_id:
            groups.setdefault(verdict.memory_id, []).append(case)
    groups = {i: g for i, g in groups.items() if len(g) > 1}
    figures.counters["duplicate_groups"] = len(groups)
    if not groups:
        return
    rng = random.Random(seed)
    flat = [c for g in groups.values() for c in g]
    index, reports = expected_state(flat, verdicts)
    for attempt in range(3):
        root = workdir / f"duplicates-{attempt}"
        build_vault(root, flat, workdir / "outside", order=rng)
        for case in flat:  # shuffled modification times too
            os.utime(root / case.rel, (1_700_000_000 + rng.randrange(10**6),) * 2)
        try:
            scan = store.scan(root)
            winners = {i: e.path for i, e in scan.entries.items() if i in groups}
            wrong = {i: p for i, p in winners.items() if p != index[i]}
            if wrong:
                figures.counters["duplicate_order_mismatches"] += len(wrong)
                figures.fail(f"duplicate ids resolved by creation order: {sorted(wrong.items())[:3]}")
            check_reports(figures, f"duplicates-{attempt}", (p.path for p in scan.problems), reports)
            for problem in scan.problems:  # each names the copy in use, not another ignored one
                memory_id = problem.message.split()[2]
                if f"(also in {index.get(memory_id)})" not in problem.message:
                    figures.fail(f"a duplicate report names another copy than the one in use: {problem}")
        except Exception as exc:
            figures.crash(f"duplicates: {type(exc).__name__}: {exc}", traceback.format_exc())
        shutil.rmtree(root, ignore_errors=True)


BOOTSTRAP = """
import sys
from vault_engine.index import embedder
from vault_engine.index.fakes import HashEmbedder
_fake = HashEmbedder()
embedder.shared_embedder = lambda settings, cache_dir, graph_dir=None: _fake
from vault_engine.cli import main
main()
"""


def cli(root: Path, args: Sequence[str], real_model: bool, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    entry = ["-m", "vault_engine"] if real_model else ["-c", BOOTSTRAP]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "ANTHROPIC_"))}
    env["HOME"] = str(cwd)
    return subprocess.run([sys.executable, *entry, "--vault", str(root), *args], cwd=cwd, env=env,
                          capture_output=True, timeout=1800, check=False)


def as_reported(path: str) -> str:
    """``path`` as a one-line message shows it (line breaks and control characters made harmless)."""
    return MemoryFileError("", path=path).one_line()[: -len(": ")]


_UNSAFE = {chr(c) for c in (*range(0x00, 0x09), *range(0x0a, 0x20), *range(0x7f, 0xa0), 0x2028, 0x2029)}


def check_cli(figures: Figures, name: str, proc: subprocess.CompletedProcess[bytes], known: set[str],
              expected: Counter[str] | None) -> None:
    """Exit 0, no traceback, one-line stderr messages; with ``expected``, each bad path on one warning line."""
    figures.counters["cli_runs"] += 1
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    if "Traceback" in out or "Traceback" in err or "internal error" in err:
        figures.counters["tracebacks"] += 1
        figures.crash(f"cli {name}: {err.strip()[:500]}")
    if proc.returncode != 0:
        figures.fail(f"cli {name}: exit {proc.returncode}: {err.strip()[:300]}")
    lines = err.split("\n")
    for line in lines:
        if _UNSAFE & set(line):
            figures.fail(f"cli {name}: a stderr line holds a line break or control character: {line[:120]!r}")
    counts: Counter[str] = Counter()
    for line in lines:
        if not line.startswith("warning: "):
            continue
        owner = max((p for p in known if line.startswith(f"warning: {p}:")), key=len, default=None)
        if owner is None:
            figures.fail(f"cli {name}: a warning names no known file: {line[:200]!r}")
        else:
            counts[owner] += 1
    if expected is None:
        for path, times in counts.items():
            if times > 1:
                figures.fail(f"cli {name}: {path!r} reported {times} times")
        return
    check_reports(figures, f"cli-{name}", [p for p, n in counts.items() for _ in range(n)], expected)
    try:
        document = json.loads(out)
    except ValueError:
        figures.fail(f"cli {name}: stdout is not one JSON document: {out[:200]!r}")
        return
    invalid: Counter[str] = Counter()
    for text in document.get("invalid", []):
        owner = max((p for p in known if text.startswith(f"{p}:")), key=len, default=None)
        invalid[owner or text] += 1
    check_reports(figures, f"cli-{name}-json", [p for p, n in invalid.items() for _ in range(n)], expected)


def sample(cases: Sequence[Case], verdicts: dict[str, Verdict], per_category: int, real_model: bool,
           seed: int) -> list[Case]:
    """Up to ``per_category`` cases of each category (duplicate groups whole), for the CLI runs."""
    rng = random.Random(seed)
    by_category: dict[str, list[Case]] = {}
    for case in cases:
        if real_model and verdicts[case.rel].outcome in (MEMORY, NOTE) and len(case.data) > LARGE:
            continue
        by_category.setdefault(case.category, []).append(case)
    chosen: list[Case] = []
    for category, items in sorted(by_category.items()):
        if category == "duplicate_ids":
            def group(case: Case) -> str:
                return case.rel.rsplit("/", 1)[-1].rsplit("-", 1)[0]

            names = sorted({group(c) for c in items})
            keep = set(rng.sample(names, min(len(names), max(1, per_category // 2))))
            chosen += [c for c in items if group(c) in keep]
        else:
            heavy = [c for c in items if c.kind == "sparse" or len(c.data) > LARGE]
            light = [c for c in items if c not in heavy]
            chosen += heavy[:1] + rng.sample(light, min(len(light), per_category))
    # Mutated copies may share an id with any other case: keep the rule's inputs whole.
    return chosen


def phase_cli(figures: Figures, cases: Sequence[Case], verdicts: dict[str, Verdict], workdir: Path,
              real_model: bool, per_category: int, seed: int) -> None:
    chosen = sample(cases, verdicts, per_category, real_model, seed)
    figures.counters["cli_files"] = len(chosen)
    root = workdir / "cli-vault"
    build_vault(root, chosen, workdir / "outside")
    index, reports = expected_state(chosen, verdicts)
    bad = {c.rel for c in chosen if verdicts[c.rel].outcome == BAD}
    known = {as_reported(c.shown) for c in chosen}
    shown_reports = Counter({as_reported(p): n for p, n in reports.items()})
    home = workdir / "cli-home"
    home.mkdir(exist_ok=True)
    before = snapshot(root)
    try:
        proc = cli(root, ["search", "deploy staging", "--json"], real_model, home)  # builds the indexes first
        check_cli(figures, "search", proc, known, None)
        proc = cli(root, ["sync", "--json"], real_model, home)
        check_cli(figures, "sync", proc, known, shown_reports)
        check_index(figures, "cli", catalog_records(root), index)
        proc = cli(root, ["sync", "--json"], real_model, home)
        check_cli(figures, "resync", proc, known, shown_reports)
        proc = cli(root, ["context", "--task", "write tests with pytest", "--no-record", "--json",
                          "--project", "github.com/acme/api"], real_model, home)
        check_cli(figures, "context", proc, known, None)
        check_unchanged(figures, "cli sync/search/context", before, snapshot(root), bad=bad)
        known_events = govern_ids(root)
        before = snapshot(root)
        proc = cli(root, ["maintain", "--json"], real_model, home)
        check_cli(figures, "maintain", proc, known, None)
        _events, allowed = journalled_paths(root, known_events, holders(chosen, verdicts))
        check_unchanged(figures, "cli maintain", before, snapshot(root), allowed, bad)
        proc = cli(root, ["status", "--json"], real_model, home)
        check_cli(figures, "status", proc, known, None)
    except Exception as exc:
        figures.crash(f"cli phase: {type(exc).__name__}: {exc}", traceback.format_exc())


# ---------------------------------------------------------------- run


def run(seed: int, count: int, workdir: Path, *, real_model: bool = False, cli_per_category: int | None = None,
        cli_runs: bool = True, light: bool = False) -> dict[str, Any]:
    """Generate ``count`` cases from ``seed`` under ``workdir`` and check them all; returns the figures.

    The CLI runs take ``cli_per_category`` files of each category (default: count / 100, at least 6;
    with the real model at most 10, as it embeds slowly).

    Everything must be 0 in ``crashes``, ``tracebacks``, ``valid_rewritten``, ``valid_missing``,
    ``bad_touched``, ``bad_unreported``, ``bad_reported_twice``, ``misclassified`` and ``failures``.
    """
    started = time.perf_counter()
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "outside").mkdir(exist_ok=True)
    (workdir / "outside" / "outside.md").write_text("---\nid: m-outside\ntitle: Outside\ntype: fact\n---\n")
    figures = Figures(seed, count)
    cases = generate(seed, count, light=light)
    verdicts: dict[str, Verdict] = {}
    parse_started = time.perf_counter()
    for case in cases:
        verdict = judge(case, figures)
        verdicts[case.rel] = verdict
        tally = figures.per_category.setdefault(case.category, Counter())
        tally["files"] += 1
        tally[verdict.outcome] += 1
        expected = case.expect
        if expected != ANY and (verdict.outcome != expected or (
                expected == MEMORY and verdict.memory_id != case.memory_id)):
            figures.counters["misclassified"] += 1
            figures.fail(f"{case.category}: {case.rel!r} expected {expected} {case.memory_id or ''}, got "
                         f"{verdict.outcome} {verdict.memory_id or ''} {verdict.problem or ''}"[:400])
    figures.seconds["parse"] = round(time.perf_counter() - parse_started, 2)
    begun = time.perf_counter()
    phase_vault(figures, cases, verdicts, workdir)
    figures.seconds["vault"] = round(time.perf_counter() - begun, 2)
    phase_duplicates(figures, cases, verdicts, workdir, seed)
    if cli_runs:
        begun = time.perf_counter()
        per_category = cli_per_category or (min(10, max(6, count // 100)) if real_model else max(6, count // 100))
        phase_cli(figures, cases, verdicts, workdir, real_model, per_category, seed)
        figures.seconds["cli"] = round(time.perf_counter() - begun, 2)
    c = figures.counters
    result: dict[str, Any] = {
        "seed": seed,
        "tried": len(cases),
        "categories": {k: dict(v) for k, v in sorted(figures.per_category.items())},
        "bad_expected": c["bad_expected"],
        "bad_reported": c["bad_reported"],
        "bad_unreported": c["bad_unreported"],
        "bad_reported_twice": c["bad_reported_twice"],
        "bad_touched": c["bad_touched"],
        "unexpected_reports": c["unexpected_reports"],
        "valid_expected": c["valid_expected"],
        "valid_indexed": c["valid_indexed"],
        "valid_missing": c["valid_missing"],
        "valid_rewritten": c["valid_rewritten"],
        "misclassified": c["misclassified"],
        "crashes": c["crashes"],
        "tracebacks": c["tracebacks"],
        "duplicate_groups": c["duplicate_groups"],
        "duplicate_order_mismatches": c["duplicate_order_mismatches"],
        "search_found": f"{c['search_found']}/{c['search_checked']}",
        "maintain_actions": c["maintain_actions"],
        "cli_files": c["cli_files"],
        "cli_runs": c["cli_runs"],
        "real_model": real_model,
        "failures": c["failures"],
        "failure_examples": figures.failures,
        "traceback_examples": figures.tracebacks,
        "seconds_parse": figures.seconds.get("parse", 0.0),
        "seconds_vault": figures.seconds.get("vault", 0.0),
        "seconds_cli": figures.seconds.get("cli", 0.0),
        "seconds": round(time.perf_counter() - started, 1),
    }
    result["ok"] = not (c["failures"] or c["crashes"])
    result["summary"] = (f"{len(cases):,} files in {len(figures.per_category)} categories; "
                         f"{c['bad_reported']}/{c['bad_expected']} bad reported once, "
                         f"{c['valid_indexed']}/{c['valid_expected']} valid indexed, "
                         f"{c['valid_rewritten']} rewritten, {c['crashes']} crashes")
    return result


def table(result: dict[str, Any]) -> str:
    rows = [
        ("files tried", f"{result['tried']:,}"),
        ("bad files and ignored duplicate copies reported once (of expected)",
         f"{result['bad_reported']:,} / {result['bad_expected']:,}"),
        ("bad files unreported / reported twice / touched",
         f"{result['bad_unreported']} / {result['bad_reported_twice']} / {result['bad_touched']}"),
        ("valid files indexed (of expected)", f"{result['valid_indexed']:,} / {result['valid_expected']:,}"),
        ("valid files rewritten (must be 0)", str(result["valid_rewritten"])),
        ("misclassified (must be 0)", str(result["misclassified"])),
        ("crashes / tracebacks (must be 0)", f"{result['crashes']} / {result['tracebacks']}"),
        ("duplicate-id groups (order mismatches)",
         f"{result['duplicate_groups']} ({result['duplicate_order_mismatches']})"),
        ("search found valid memories", result["search_found"]),
        ("maintain actions (all journalled)", str(result["maintain_actions"])),
        ("CLI runs on a sample of files", f"{result['cli_runs']} on {result['cli_files']}"
         + (" (real model)" if result["real_model"] else " (hash embedder)")),
        ("seconds (parse / vault / CLI / total)",
         f"{result['seconds_parse']} / {result['seconds_vault']} / {result['seconds_cli']} / {result['seconds']}"),
    ]
    width = max(len(k) for k, _ in rows)
    lines = [f"{k.ljust(width)}  {v}" for k, v in rows]
    lines.append("")
    lines.append("category            files  memory  note   bad  ignored")
    for category, tally in result["categories"].items():
        lines.append(f"{category:<18} {tally.get('files', 0):>6} {tally.get(MEMORY, 0):>7} {tally.get(NOTE, 0):>5} "
                     f"{tally.get(BAD, 0):>5} {tally.get(IGNORED, 0):>8}")
    for failure in result["failure_examples"][:20]:
        lines.append("FAIL " + failure)
    for trace in result["traceback_examples"][:2]:
        lines.append(trace)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--count", type=int, default=3000, help="Files to generate (default 3000).")
    parser.add_argument("--workdir", type=Path, help="Folder for the vaults (default: a temporary one, removed).")
    parser.add_argument("--real-model", action="store_true", help="The CLI runs use the shipped embedding model.")
    parser.add_argument("--cli-per-category", type=int,
                        help="Files per category in the CLI sample (default: count / 100, at least 6).")
    parser.add_argument("--json", action="store_true", help="Print the figures as one JSON document.")
    args = parser.parse_args(argv)
    if args.workdir is not None:
        result = run(args.seed, args.count, args.workdir, real_model=args.real_model,
                     cli_per_category=args.cli_per_category)
    else:
        with tempfile.TemporaryDirectory(prefix="memvault-fuzz-") as temp:
            result = run(args.seed, args.count, Path(temp), real_model=args.real_model,
                         cli_per_category=args.cli_per_category)
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else table(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
