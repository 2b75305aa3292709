"""Secrets by kind and by path: every kind of secret of the corpus through every way text enters a vault.

The corpus is ``stress/secret_corpus.py`` (78 kinds, each in realistic surroundings).  Each
path gets a vault of its own, pushes every kind through it, indexes it (catalog, full text,
vectors, ``INDEX.md``), then reads the whole vault folder as bytes: memory files, file and folder
names (as a slug spells them), the journal, session buffers and everything under ``.memvault/``,
the SQLite and Tantivy files included.  A kind is stored when ten characters in a row of its
secret (past its public prefix, ``ghp_`` say) are found anywhere.

The paths: the command line's ``add`` (every field) and ``import`` (every key, unknown ones too),
``ingest`` (episodes, and buffers left open), ``ingest-doc`` (a secret in the title, so in the
slug), ``remember-output`` (with sessions), ``context`` (the task's words are journalled), the
HTTP API, the MCP tools, and an agent's transcript captured.

``python -m stress`` prints one row of it ("secrets stored: 0 of N kinds x M paths");
``tests/integration/test_secrets_everywhere.py`` runs each path as a test.

    .venv/bin/python -m stress.secret_paths     # this family alone
"""

from __future__ import annotations

import http.client
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stress import secret_corpus as corpus
from vault_engine.vault import Vault

KINDS = corpus.KINDS
NO_SYNC = {"MEMVAULT_VAULT_AUTO_SYNC": "false"}  # the command line writes files only; the family syncs after


# ---------------------------------------------------------------- what is pushed


def block(kind: str) -> str:
    """Every text of ``kind`` with its secret, as one note."""
    secret, texts = KINDS[kind]
    return f"Notes on {kind}.\n\n" + "\n\n".join(text.replace(corpus.S, secret) for text in texts) + "\n"


def line(kind: str, number: int = 0, limit: int | None = None) -> str:
    """The ``number``-th text of ``kind`` with its secret, on one line (for a title, a tag, a project key);
    with ``limit``, the first text that fits, else this one cut to it (its context stays)."""
    secret, texts = KINDS[kind]
    lines = [" ".join(text.replace(corpus.S, secret).split()) for text in texts]
    chosen = lines[number % len(lines)]
    if limit is not None and len(chosen) > limit:
        chosen = next((one for one in lines if len(one) <= limit), chosen[:limit])
    return chosen


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise RuntimeError(message)


def cli(root: Path, *args: str, input: str | None = None, ok: bool = True) -> Any:
    """``memvault --vault ROOT ARGS`` in this process; with ``ok``, it must succeed."""
    from click.testing import CliRunner

    from vault_engine.cli import cli as memvault

    result = CliRunner().invoke(memvault, ["--vault", str(root), *args], input=input, env=NO_SYNC)
    _check(not ok or result.exit_code == 0, f"memvault {args[0]} failed: {result.output[-500:]}")
    return result


# ---------------------------------------------------------------- the paths (each returns the memory files
# ---------------------------------------------------------------- that must show a redaction: the probe reached)


def add_every_field(vault: Vault, work: Path) -> int:
    for kind in KINDS:
        cli(vault.root, "add", block(kind), "--title", f"{kind}: {line(kind, limit=250)}", "--summary", line(kind, 1),
            "--trigger", f"when {line(kind, 2)}", "--tag", line(kind, 1, limit=200),
            "--source", f"document:{line(kind)}",
            "--project", line(kind), "--path", f"src/{line(kind, 1)}/**", "--task", line(kind, 2))
    return len(KINDS)


def import_every_key(vault: Vault, work: Path) -> int:
    records = []
    for kind in KINDS:
        sample = line(kind, -1)
        records.append({"title": f"{kind}: {sample}", "body": block(kind), "summary": line(kind),
                        "trigger": sample, "tags": [line(kind), "secrets"], "source": f"document:{sample}",
                        "project": line(kind, 1), "notes": block(kind), sample: "a key of its own",
                        "evidence": [{"quote": sample}]})
    cli(vault.root, "import", "-", input="".join(json.dumps(r) + "\n" for r in records))
    return len(KINDS)


def ingest_conversations(vault: Vault, work: Path) -> int:
    turns = []
    for kind in KINDS:
        turns += [{"role": "user", "content": block(kind)},
                  {"role": "assistant", "content": f"Noted how {kind} is configured."}]
    chat = "".join(json.dumps(t) + "\n" for t in turns)
    cli(vault.root, "ingest", "-", "--session", "probe", "--flush", input=chat)
    for number, kind in enumerate(KINDS):  # one turn each, left in its session's buffer
        cli(vault.root, "ingest", "-", "--session", f"open-{number}",
            input=json.dumps({"role": "user", "content": block(kind)}) + "\n")
    buffers = list((vault.root / ".memvault" / "sessions").glob("open-*.jsonl"))
    _check(len(buffers) == len(KINDS) and all(p.stat().st_size for p in buffers), "the buffers were not left open")
    for kind in ("github classic token", "gitlab token", "hugging face token"):  # a session named like a secret
        refused = cli(vault.root, "ingest", "-", "--session", KINDS[kind][0], ok=False,
                      input=json.dumps({"role": "user", "content": "Deploys run from main."}) + "\n")
        _check(refused.exit_code != 0 and "looks like a secret" in refused.output, "a secret named a session")
    return 1


def ingest_documents(vault: Vault, work: Path) -> int:
    for number, kind in enumerate(KINDS):
        document = work / f"doc{number}.md"
        document.write_text(f"# {line(kind)}\n\n{block(kind)}\n" + "Plain text. " * 40, encoding="utf-8")
        cli(vault.root, "ingest-doc", str(document), "--source", f"https://wiki.internal/{line(kind, 1)}")
    return len(KINDS)


def remember_outputs(vault: Vault, work: Path) -> int:
    everything = "\n".join(block(kind) for kind in KINDS)
    cli(vault.root, "remember-output", "--source", "tool:cat", "--min-chars", "10",
        input="log line\n" * 50 + everything)
    for kind in ("github classic token", "npm token"):  # the session's outputs are counted in a file it names
        cli(vault.root, "remember-output", "--source", f"tool:{kind}", "--min-chars", "10",
            "--session", KINDS[kind][0], input="log line\n" * 50 + block(kind))
    return 1


def context_tasks(vault: Vault, work: Path) -> int:
    cli(vault.root, "add", "Deploys run from the main branch after the checklist.", "--type", "core-profile")
    for kind in KINDS:
        cli(vault.root, "context", "--task", f"deploy with {block(kind)}", "--operation", line(kind),
            "--phase", line(kind, 1), "--kind", line(kind, 2), "--format", "json")
    journal = "".join(p.read_text(encoding="utf-8") for p in (vault.root / "journal").glob("*.jsonl"))
    _check(journal.count('"kind":"application"') == len(KINDS), "a context task was not journalled")
    return 0


def http_api(vault: Vault, work: Path) -> int:
    from vault_engine.server import http as served_api
    from vault_engine.server.service import MemoryService

    service = MemoryService(vault, source="tool:http")
    try:
        with served_api.running(service) as served:
            def post(operation: str, body: dict[str, Any]) -> dict[str, Any]:
                connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
                connection.request("POST", f"/v1/{operation}", body=json.dumps(body),
                                   headers={"Authorization": f"Bearer {served.token}"})
                response = connection.getresponse()
                answer: dict[str, Any] = json.loads(response.read())
                connection.close()
                _check(response.status == 200, f"POST /v1/{operation}: {answer}")
                return answer

            for kind in KINDS:
                made = post("remember", {"text": block(kind), "title": line(kind, 0, 300),
                                         "summary": line(kind, 1), "trigger": line(kind, 2),
                                         "tags": [line(kind, 0, 200)], "project": line(kind, 1)})
                post("correct", {"id": made["id"], "text": block(kind) + "\nCorrected.",
                                 "title": line(kind, 1, 300)})
                post("context", {"task": f"deploy with {block(kind)}", "operation": line(kind, 0, 200),
                                 "phase": line(kind, 1, 200), "kind": line(kind, 2, 200)})
    finally:
        service.close()
    return len(KINDS)


def mcp_tools(vault: Vault, work: Path) -> int:
    from vault_engine.server.mcp import CurrentProject, call_tool
    from vault_engine.server.service import MemoryService

    class Here(CurrentProject):
        def key(self) -> str | None:
            return "github.com/acme/api"

    service = MemoryService(vault, source="tool:mcp", default_project=lambda: "github.com/acme/api")
    try:
        for kind in KINDS:
            for tool, arguments in (("memory_remember", {"text": block(kind), "title": line(kind, 0, 300),
                                                         "summary": line(kind, 1), "tags": [line(kind, 2, 200)]}),
                                    ("memory_context", {"task": f"deploy with {block(kind)}",
                                                        "kind": line(kind, 1, 200)})):
                outcome = call_tool(service, tool, arguments, Here())
                _check(not outcome.is_error, f"{tool}: {outcome.text}")
    finally:
        service.close()
    return len(KINDS)


def agent_transcript(vault: Vault, work: Path) -> int:
    from vault_engine.agents.capture import capture_files

    lines = []
    for number, kind in enumerate(KINDS):
        common = {"sessionId": "probe-session", "timestamp": "2026-05-04T09:12:01.137Z", "cwd": str(work)}
        for role, content in (("user", block(kind)), ("assistant", f"Stored nothing of {kind}.")):
            lines.append({"type": role, "uuid": f"{number:04d}-{role}", **common,
                          "message": {"role": role, "content": content}})
        lines.append({"type": "assistant", "uuid": f"{number:04d}-tool", **common,
                      "message": {"role": "assistant", "content": [
                          {"type": "tool_use", "id": f"t{number}", "name": "Bash", "input": {"command": line(kind)}}]}})
    transcript = work / "session.jsonl"
    transcript.write_text("".join(json.dumps(one) + "\n" for one in lines), encoding="utf-8")
    captured = capture_files(vault, [transcript], "claude-code")
    _check(captured[0].error is None, f"capture: {captured[0].error}")
    return 1


PATHS: dict[str, Callable[[Vault, Path], int]] = {
    "add": add_every_field, "import": import_every_key, "ingest": ingest_conversations,
    "ingest-doc": ingest_documents, "remember-output": remember_outputs, "context": context_tasks,
    "http": http_api, "mcp": mcp_tools, "agent capture": agent_transcript,
}


# ---------------------------------------------------------------- what is found


def as_named(text: str) -> str:
    """``text`` as a file name made from it would spell it: lower case, other characters as dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower())


def leaks(root: Path) -> list[str]:
    """Where under ``root`` a secret of the corpus is found: in a file's bytes, or in a file or folder name."""
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes().decode("latin-1") if path.is_file() else ""
        for kind in KINDS:
            secret = corpus.private_part(kind)
            if corpus.leaked(as_named(secret), as_named(rel)):
                found.append(f"{kind} in the name {rel}")
            elif data and corpus.leaked(secret, data):
                found.append(f"{kind} in {rel}")
    return found


def finish(vault: Vault, reached: int) -> list[str]:
    """Index everything, check the probe reached the files (``reached`` of them show a redaction), then look."""
    vault.sync()
    redacted = [p for p in vault.root.rglob("*.md") if b"[REDACTED]" in p.read_bytes()]
    _check(len(redacted) >= reached, f"the probe stored too little to check ({len(redacted)} of {reached} files)")
    return leaks(vault.root)


def kinds_of(found: list[str]) -> list[str]:
    return sorted({one.split(" in the name ")[0] if " in the name " in one else one.rsplit(" in ", 1)[0]
                   for one in found})


def open_vault(folder: Path) -> Vault:
    from vault_engine.index.fakes import HashEmbedder
    from vault_engine.store import create_vault

    create_vault(folder, git=False)
    return Vault(folder, auto_sync=True, embedder=HashEmbedder())


def run(workdir: Path) -> dict[str, Any]:
    """Every kind through every path, each path in a vault of its own under ``workdir``."""
    stored: dict[str, list[str]] = {}
    errors: dict[str, str] = {}
    for name, push in PATHS.items():
        folder = workdir / re.sub(r"\W+", "-", name)
        folder.mkdir()
        vault = open_vault(folder / "vault")
        try:
            found = finish(vault, push(vault, folder))
        except Exception as exc:  # a path that fails is reported, and the others go on
            errors[name] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        if found:
            stored[name] = kinds_of(found)
    return {"kinds": len(KINDS), "paths": len(PATHS), "stored": sum(len(v) for v in stored.values()),
            "found": stored, "errors": errors}


def rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The family's row of the stress table."""
    detail = "kind x path pairs found anywhere in the vault; must be 0"
    if result["found"]:
        detail += ": " + json.dumps(result["found"])
    if result["errors"]:
        detail += "; paths that failed: " + json.dumps(result["errors"])
    return [("secrets stored", f"{result['stored']} of {result['kinds']} kinds x {result['paths']} paths", detail)]


def failures(result: dict[str, Any]) -> int:
    return int(result["stored"]) + len(result["errors"])


if __name__ == "__main__":
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memvault-secrets-") as temp:
        outcome = run(Path(temp))
    for row in rows(outcome):
        print("| " + " | ".join(row) + " |")
    print(f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    sys.exit(1 if failures(outcome) else 0)
