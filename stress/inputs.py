"""Inputs that must never cost a memory, for ``python -m stress``: characters no file can hold, and ids two
files claim.

- NUL and invalid code points on every write path: NUL, other C0 controls,
  a lone surrogate, U+FFFE, U+FFFF, a byte-order mark mid-text and a lone CR,
  each given to every way text comes in (add with an argument and on stdin,
  import, correct, ingest, ingest-doc, remember-output, an agent session's
  capture, HTTP remember and correct, the MCP remember and correct tools).
  Each write is either refused in one line writing nothing, or acknowledged;
  an acknowledged write must read back (every file parses) and be found by
  search. Acknowledged writes that do not read back: must be 0.
- Id collisions: memories, indexed, then hand-made files each holding one of
  their ids (edited copies, exact copies, minimal hand-written files, copies
  in the trash, copies named like memvault names its files, copies claiming
  an older date). Read back by a later process: ``show``, the scan, the
  catalog, search and context must give the original for every id; ``status``
  must name every newcomer; ``maintain`` must govern no newcomer; ``repair``
  must give every newcomer that holds a memory of its own a new id. Valid
  memories displaced: must be 0.

    .venv/bin/python -m stress.inputs     # this part alone
"""

from __future__ import annotations

import http.client
import json
import random
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from click.testing import CliRunner

from vault_engine import store
from vault_engine.cli import cli
from vault_engine.context.director import TaskRequest, build
from vault_engine.format.memory import render
from vault_engine.index.fakes import HashEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.served import Served
from vault_engine.server import http as http_api
from vault_engine.server.mcp import CurrentProject, call_tool
from vault_engine.server.service import MemoryService
from vault_engine.vault import NewMemory, Vault
from vault_engine.vault.reading import catalog_paths

CHARACTERS = {
    "NUL": "\x00", "SOH": "\x01", "VT": "\x0b", "FF": "\x0c", "ESC": "\x1b", "US": "\x1f",
    "lone surrogate": "\ud800", "U+FFFE": "\ufffe", "U+FFFF": "\uffff", "BOM mid-text": "\ufeff", "lone CR": "\r",
}
TRUSTS = ("system", "learned", "external")
Attempt = tuple[bool, str]  # (acknowledged, what the caller was told)


def _raw(text: str) -> bytes:
    """``text`` as bytes a program could send: a lone surrogate as the bytes it would be (not UTF-8)."""
    return text.encode("utf-8", "surrogatepass")


@contextmanager
def _fake_model() -> Iterator[None]:
    model = HashEmbedder()
    with mock.patch.object(Vault, "embedder", lambda self: model):
        yield


class Paths:
    """Every write path of one vault, each taking a text holding ``token`` and answering an :data:`Attempt`."""

    def __init__(self, root: Path, service: MemoryService, served: Served, work: Path):
        self.root, self.service, self.served, self.work = root, service, served, work
        self.runner = CliRunner()
        self.here = CurrentProject(key="github.com/acme/stress")

    def _cli(self, *args: str, stdin: bytes | None = None) -> Attempt:
        done = self.runner.invoke(cli, ["--vault", str(self.root), *args], input=stdin)
        return done.exit_code == 0, (done.stderr or done.stdout).strip()

    def _post(self, operation: str, body: dict[str, Any]) -> Attempt:
        connection = http.client.HTTPConnection("127.0.0.1", self.served.port, timeout=30)
        connection.request("POST", f"/v1/{operation}", body=json.dumps(body).encode(),  # escapes, as JSON does
                           headers={"Authorization": f"Bearer {self.served.token}"})
        answer = connection.getresponse()
        data = json.loads(answer.read())
        connection.close()
        return answer.status == 200, json.dumps(data.get("error", ""))

    def _existing(self, token: str) -> str:
        return self.service.vault.add(NewMemory(f"The base fact {token}base is plain.")).id

    def _file(self, name: str, data: bytes) -> str:
        path = self.work / name
        path.write_bytes(data)
        return str(path)

    def all(self) -> dict[str, Callable[[str, str], Attempt]]:
        return {
            "add": lambda text, token: self._cli("add", text),
            "add stdin": lambda text, token: self._cli("add", "-", stdin=_raw(text)),
            "import": lambda text, token: self._cli("import", self._file(f"{token}.jsonl", json.dumps(
                {"body": text, "tags": [f"t{token}"]}).encode() + b"\n")),
            "correct": lambda text, token: self._cli("correct", self._existing(token), text),
            "ingest": lambda text, token: self._cli("ingest", "-", "--session", token, "--flush", stdin=json.dumps(
                {"role": "user", "content": text}).encode() + b"\n"),
            "ingest-doc": lambda text, token: self._cli("ingest-doc", self._file(f"{token}.txt", _raw(text * 3))),
            "remember-output": lambda text, token: self._cli("remember-output", "--source", "tool:stress",
                                                             "--min-chars", "10", stdin=_raw(text * 3)),
            "agent capture": self._capture,
            "HTTP remember": lambda text, token: self._post("remember", {"text": text}),
            "HTTP correct": lambda text, token: self._post("correct", {"id": self._existing(token), "text": text}),
            "MCP remember": lambda text, token: self._tool("memory_remember", {"text": text}),
            "MCP correct": lambda text, token: self._tool("memory_correct", {"id": self._existing(token),
                                                                             "text": text}),
        }

    def _tool(self, name: str, arguments: dict[str, Any]) -> Attempt:
        outcome = call_tool(self.service, name, arguments, self.here)
        return not outcome.is_error, outcome.text

    def _capture(self, text: str, token: str) -> Attempt:
        lines = [json.dumps({"type": role, "uuid": f"{token}-{n}", "sessionId": token, "cwd": "/nowhere",
                             "isSidechain": False, "timestamp": f"2026-05-04T10:0{n}:00.000Z",
                             "message": {"role": role, "content": content}})
                 for n, (role, content) in enumerate([("user", text), ("assistant", f"Noted {token}."),
                                                      ("user", f"Thanks, that is all about {token}.")])]
        path = self._file(f"{token}.jsonl", ("\n".join(lines) + "\n").encode())
        return self._cli("ingest", "--format", "claude-code", path)


def _holding(root: Path, token: str) -> list[str]:
    """Ids of the memories whose text holds ``token``."""
    return [e.memory.id for e in store.scan(root).entries.values()
            if token in f"{e.memory.title}\n{e.memory.body}\n{e.memory.summary}"]


def characters_on_every_path(workdir: Path) -> dict[str, Any]:
    root = workdir / "characters"
    store.create_vault(root, git=False)
    out: dict[str, Any] = {"tried": 0, "refused": 0, "stored": 0, "unreadable": [], "unsearchable": [],
                           "unclear": [], "written_by_refusal": [], "paths": 0, "characters": len(CHARACTERS)}
    reader = Vault(root, auto_sync=True, embedder=HashEmbedder())
    service = MemoryService(Vault(root, auto_sync=True, embedder=HashEmbedder()), source="tool:stress")
    try:
        with _fake_model(), http_api.running(service) as served:
            paths = Paths(root, service, served, workdir)
            out["paths"] = len(paths.all())
            for n, (path_name, write) in enumerate(paths.all().items()):
                for m, (char_name, char) in enumerate(CHARACTERS.items()):
                    token = f"zq{n:02d}{m:02d}x"
                    case = f"{path_name} / {char_name}"
                    text = f"The {token} setting holds {char} in the middle of this sentence about {token}."
                    before = {rel: (root / rel).read_bytes() for rel, _, _ in store.iter_markdown(root)}
                    acknowledged, said = write(text, token)
                    out["tried"] += 1
                    problems = [p.one_line() for p in store.scan(root).problems]
                    if acknowledged:
                        out["stored"] += 1
                        holders = _holding(root, token)
                        if problems or not holders:
                            out["unreadable"].append(f"{case}: {problems[:1] or 'nothing holds the text'}")
                            continue
                        reader.sync()
                        hits = reader.search(SearchQuery(f"{token} setting", limit=10, weak=True, trust=TRUSTS))
                        if not set(holders) & {h.id for h in hits.hits}:
                            out["unsearchable"].append(case)
                    else:
                        out["refused"] += 1
                        if "\n" in said or not said or "internal error" in said:
                            out["unclear"].append(f"{case}: {said[:120]!r}")
                        after = {rel: (root / rel).read_bytes() for rel, _, _ in store.iter_markdown(root)}
                        changed = {rel for rel in after if before.get(rel) != after[rel]} | (before.keys() - after)
                        ignored = {rel for rel in changed if _holding_file(root, rel, f"{token}base")}
                        if changed - ignored:
                            out["written_by_refusal"].append(f"{case}: {sorted(changed - ignored)[:2]}")
    finally:
        service.close()
    return out


def _holding_file(root: Path, rel: str, token: str) -> bool:
    """Whether the file at ``rel`` is the memory a correction was tried on (written before the attempt)."""
    path = root / rel
    return path.exists() and token.encode() in path.read_bytes()


# ---------------------------------------------------------------- id collisions


SHAPES = ("edited copy", "exact copy", "hand-written", "in the trash", "named for the id", "claims an older date")


def _fact(rng: random.Random, n: int) -> str:
    """A statement no other shares a word with (so governance merges none of them)."""
    words = ["".join(rng.choice("bcdfghjklmnpqrstvwz") + rng.choice("aeiou") for _ in range(3)) for _ in range(6)]
    return f"The {words[0]} {words[1]} runs {words[2]} on {words[3]} with {words[4]} {words[5]}."


def _impostor(rng: random.Random, shape: str, entry: store.Entry, n: int) -> tuple[str, str]:
    """(path, text) of a hand-made file holding ``entry``'s id."""
    memory = entry.memory
    folder = rng.choice(["memories/global", "notes", "memories/projects/other", "aaa"])
    name = rng.choice([f"a-copy-{n}.md", f"zz-{n}.md", f"{n}.md"])
    edited = memory.replace(title=f"Copied {memory.title}", body=f"Impostor {n} says something else entirely.\n")
    if shape == "exact copy":
        return f"{folder}/{name}", entry.parsed.text
    if shape == "hand-written":
        return f"{folder}/{name}", f"---\nid: {memory.id}\ntitle: Handmade {n}\ntype: fact\n---\nImpostor {n}.\n"
    if shape == "in the trash":
        return f"trash/{name}", render(edited)
    if shape == "named for the id":
        return f"{folder}/copied-{memory.id[-6:]}.md", render(edited)
    if shape == "claims an older date":
        older = memory.created.replace(year=memory.created.year - 50) if memory.created else None
        return f"{folder}/{name}", render(edited.replace(created=older))
    return f"{folder}/{name}", render(edited)


def id_collisions(workdir: Path, count: int = 60, seed: int = 20261201) -> dict[str, Any]:
    rng = random.Random(seed)
    root = workdir / "collisions"
    store.create_vault(root, git=False)
    vault = Vault(root, auto_sync=True, embedder=HashEmbedder())
    facts = [_fact(rng, n) for n in range(count)]
    ids = [vault.add(NewMemory(fact)).id for fact in facts]
    scan = store.scan(root)
    originals = {i: scan.entries[i].path for i in ids}
    impostors: dict[str, tuple[str, str]] = {}  # id -> (path, shape)
    for n, memory_id in enumerate(ids):
        shape = SHAPES[n % len(SHAPES)]
        rel, text = _impostor(rng, shape, scan.entries[memory_id], n)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
        impostors[memory_id] = (rel, shape)
    out: dict[str, Any] = {"memories": count, "impostors": len(impostors), "shapes": len(SHAPES)}

    fresh = Vault(root, auto_sync=True, embedder=HashEmbedder())  # a later process
    fresh.sync()
    displaced: set[str] = set()
    indexed = catalog_paths(fresh, ids)
    entries = fresh.scan().entries
    for n, memory_id in enumerate(ids):
        original = originals[memory_id]
        hits = {h.id: h for h in fresh.search(SearchQuery(facts[n], limit=10, weak=True)).hits}
        given = build(fresh, TaskRequest(facts[n]), record=False).to_json()
        delivered = {i["id"]: i["title"] for i in given["resident"] + given["manifest"]}
        if (fresh.find(memory_id).path != original or entries[memory_id].path != original
                or indexed.get(memory_id) != original
                or (memory_id in hits and hits[memory_id].path != original)
                or delivered.get(memory_id, "").startswith(("Copied", "Handmade"))):
            displaced.add(memory_id)
    invalid = "\n".join(fresh.status().invalid)
    out["unnamed"] = sorted(rel for rel, _ in impostors.values() if f"{rel}: duplicate id" not in invalid)

    # Without an index (a fresh clone): the rule of vault_engine.copies, from the files alone.
    bare = workdir / "collisions-bare"
    shutil.copytree(root, bare, ignore=shutil.ignore_patterns(store.STATE_DIR))
    bare_entries = Vault(bare).scan().entries  # the files and the journal
    out["displaced_without_index"] = sorted(i for i in ids if bare_entries[i].path != originals[i])

    before = {rel: (root / rel).read_bytes() for rel, _ in impostors.values()}
    fresh.maintain()
    after = fresh.scan()
    current = {e.memory.id for e in after.active()}
    out["current_and_trashed"] = sorted(e.memory.id for e in after.trashed() if e.memory.id in current)
    out["newcomers_governed"] = sorted(rel for rel, data in before.items() if (root / rel).exists()
                                       and (root / rel).read_bytes() != data)
    out["exact_copies_removed"] = sum(1 for rel, shape in impostors.values()
                                      if shape == "exact copy" and not (root / rel).exists())
    displaced |= {i for i in ids if after.entries.get(i) is None or after.entries[i].path != originals[i]}

    repaired = fresh.repair()
    out["repaired"] = len(repaired)
    out["left_after_repair"] = [p for p in fresh.status().invalid if "duplicate id" in p]
    final = fresh.scan().entries
    displaced |= {i for i in ids if final[i].path != originals[i]}
    out["displaced"] = sorted(displaced)
    return out


def run(workdir: Path) -> dict[str, Any]:
    return {"characters": characters_on_every_path(workdir), "collisions": id_collisions(workdir)}


def failures(result: dict[str, Any]) -> int:
    """What must be 0: acknowledged writes that do not read back (or are not found), refusals that are not one
    line or that wrote, valid memories displaced, newcomers unnamed or governed, duplicates left by repair."""
    chars, ids = result["characters"], result["collisions"]
    return (len(chars["unreadable"]) + len(chars["unsearchable"]) + len(chars["unclear"])
            + len(chars["written_by_refusal"]) + len(ids["displaced"]) + len(ids["displaced_without_index"])
            + len(ids["unnamed"]) + len(ids["newcomers_governed"]) + len(ids["current_and_trashed"])
            + len(ids["left_after_repair"]))


def rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The table rows: (measure, result, detail)."""
    chars, ids = result["characters"], result["collisions"]
    bad = chars["unreadable"] + chars["unsearchable"] + chars["unclear"] + chars["written_by_refusal"]
    wrong = ids["unnamed"] + ids["newcomers_governed"] + ids["current_and_trashed"] + ids["left_after_repair"]
    return [
        ("NUL and invalid code points on every write path", str(len(chars["unreadable"])),
         f"acknowledged writes that do not read back; must be 0. {chars['tried']} writes ({chars['paths']} paths x "
         f"{chars['characters']} characters): {chars['refused']} refused in one line, {chars['stored']} stored, "
         f"{len(chars['unsearchable'])} of them not found by search, {len(chars['written_by_refusal'])} refusals "
         "that wrote" + (f": {json.dumps(bad[:5])}" if bad else "")),
        ("id collisions (valid memories displaced: must be 0)", str(len(ids["displaced"])),
         f"{ids['memories']} indexed memories, {ids['impostors']} hand-made files holding their ids in "
         f"{ids['shapes']} shapes; show, scan, catalog, search, context and maintain gave the originals; newcomers "
         f"unnamed by status {len(ids['unnamed'])}, governed {len(ids['newcomers_governed'])}; without an index "
         f"{len(ids['displaced_without_index'])} displaced; repair gave {ids['repaired']} an id of their own "
         f"(exact copies removed by maintain: {ids['exact_copies_removed']})"
         + (f": {json.dumps(wrong[:5])}" if wrong else "")),
    ]


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memvault-inputs-") as temp:
        result = run(Path(temp))
    print("| measure | result | detail |")
    print("|---|---|---|")
    for measure, value, detail in rows(result):
        print(f"| {measure} | {value} | {detail} |")
    return 1 if failures(result) else 0


if __name__ == "__main__":
    sys.exit(main())
