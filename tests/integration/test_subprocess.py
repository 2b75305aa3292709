"""The real ``memvault`` entry point in subprocesses: startup cost, end to end, errors, concurrent writers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.vault import Vault

pytestmark = pytest.mark.slow

Run = Callable[..., subprocess.CompletedProcess[str]]

HEAVY = ("tantivy", "fastembed", "onnxruntime", "anthropic", "mcp", "starlette", "pydantic", "http.server")

HELP_IMPORTS = """
import sys
import click
from click.testing import CliRunner
from vault_engine.cli import cli

def walk(group, prefix=()):
    for name, command in group.commands.items():
        yield (*prefix, name)
        if isinstance(command, click.Group):
            yield from walk(command, (*prefix, name))

runner = CliRunner()
for path in [(), *walk(cli)]:
    result = runner.invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, (path, result.output)
try:
    cli.main(["--help"], prog_name="memvault", standalone_mode=True)
except SystemExit as exc:
    assert exc.code == 0, exc.code
loaded = [m for m in sys.argv[1:] if m in sys.modules or any(k.startswith(m + ".") for k in sys.modules)]
print("HEAVY=" + ",".join(loaded))
"""

WORKER = """
import sys, time
from pathlib import Path
from vault_engine.cli import cli

root, worker, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
deadline = time.monotonic() + 30
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.005)
for number in range(count):
    text = f"Worker {worker} remembers fact number {number}"
    try:
        cli.main(["--vault", root, "add", text], prog_name="memvault", standalone_mode=False)
    except SystemExit as exc:
        if exc.code:
            raise
"""

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""


def assert_one_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_help_exits_zero(memvault_proc: Run) -> None:
    proc = memvault_proc("--help")
    assert proc.returncode == 0 and "Usage: memvault" in proc.stdout and proc.stderr == ""


def test_help_does_not_import_heavy_libraries() -> None:
    proc = subprocess.run([sys.executable, "-c", HELP_IMPORTS, *HEAVY], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=\n" in proc.stdout, proc.stdout[-500:]


def test_end_to_end(memvault_proc: Run, tmp_path: Path) -> None:
    root = tmp_path / "e2e"
    init = memvault_proc("init", str(root), "--json")
    assert init.returncode == 0, init.stderr
    assert json.loads(init.stdout) == {"vault": str(root), "created": True}
    if shutil.which("git"):
        assert (root / ".git").is_dir()

    added = memvault_proc("add", "Use pytest fixtures, never setUp", "--project", "github.com/acme/api",
                          cwd=root / "memories")  # found by walking upward from the working folder
    assert added.returncode == 0, added.stderr
    memory_id = added.stdout.strip()
    assert memory_id.startswith("m-")

    listed = memvault_proc("--vault", str(root), "list", "--json")
    assert listed.returncode == 0
    [item] = json.loads(listed.stdout)["memories"]
    assert (item["id"], item["lifecycle"], item["authority"]) == (memory_id, "proven", "explicit")
    original_path = item["path"]

    shown = memvault_proc("show", memory_id, "--depth", "2", env={"MEMVAULT_DIR": str(root)})
    assert shown.returncode == 0 and "Use pytest fixtures, never setUp" in shown.stdout
    assert "\ndetail: " in shown.stdout  # made offline on this first request and cached under .memvault/

    forgotten = memvault_proc("forget", memory_id, "--vault", str(root))
    assert forgotten.returncode == 0 and "trash/" in forgotten.stdout
    assert not (root / original_path).exists()

    rolled = memvault_proc("rollback", memory_id, "--vault", str(root), "--json")
    assert rolled.returncode == 0
    assert json.loads(rolled.stdout)["path"] == original_path
    assert (root / original_path).is_file()

    status = memvault_proc("status", "--json", "--vault", str(root))
    data = json.loads(status.stdout)
    # add, forget, rollback: showing a memory is no event
    assert (data["memories"], data["trash"], data["journal_events"]) == (1, 0, 3)


def test_default_vault_is_created_under_home(memvault_proc: Run, isolated_env: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = memvault_proc("status", "--json", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["vault"] == str(isolated_env / ".memvault" / "vault")
    assert (isolated_env / ".memvault" / "vault" / "memvault.toml").is_file()


def test_errors_are_one_line_without_traceback(memvault_proc: Run, vault: Vault, tmp_path: Path) -> None:
    assert_one_error(memvault_proc("--vault", str(vault.root), "show", "m-nope"), "m-nope")
    assert_one_error(memvault_proc("--vault", str(tmp_path), "list"), "no vault at")
    assert_one_error(memvault_proc("--vault", str(vault.root), "add", "x", "--scope", "project"), "--project")


def test_a_torn_journal_line_warns_once_then_never(memvault_proc: Run, vault: Vault) -> None:
    env = {"MEMVAULT_VAULT_AUTO_SYNC": "false"}  # no embedding model needed
    first = memvault_proc("--vault", str(vault.root), "add", "We deploy on Fridays", env=env)
    assert first.returncode == 0 and first.stderr == "", first.stderr
    [journal] = vault.journal.files()
    torn = b'{"id":"e-torn","kind":"add","mem'
    journal.write_bytes(journal.read_bytes() + torn)  # what a crash mid-append leaves
    runs = [memvault_proc("--vault", str(vault.root), *args, env=env)
            for args in (("add", "Tests use pytest"), ("status",), ("journal", "replay"), ("add", "A third one"))]
    assert [r.returncode for r in runs] == [0, 0, 0, 0], [r.stderr for r in runs]
    # Before: every command that read the journal warned "torn last line skipped" (or "invalid line skipped").
    said = [line for r in runs for line in (r.stdout + r.stderr).splitlines() if "journal/" in line]
    assert len(said) == 1 and "torn last line moved to .memvault/journal-damaged/" in said[0], said
    assert said[0] in runs[0].stderr
    assert [p.read_bytes() for p in (vault.root / ".memvault" / "journal-damaged").iterdir()] == [torn + b"\n"]


def test_busy_vault_in_a_subprocess(memvault_proc: Run, vault: Vault) -> None:
    vault.lock.path.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(vault.lock.path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        proc = memvault_proc("--vault", str(vault.root), "add", "blocked",
                             env={"MEMVAULT_VAULT_LOCK_TIMEOUT": "0.3"})
        assert_one_error(proc, "vault is busy")
        assert proc.returncode == 75
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)


def test_concurrent_writers(vault: Vault, tmp_path: Path) -> None:
    workers, per_worker = 4, 25
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(vault.root), str(w), str(per_worker), str(go)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in range(workers)
    ]
    time.sleep(0.3)  # let every worker start up, then release them together
    go.touch()
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "error" not in err

    scan = vault.scan()
    assert scan.problems == []
    memories = [e.memory for e in scan.active()]
    assert len(memories) == workers * per_worker
    assert len({m.title for m in memories}) == workers * per_worker
    assert len({m.id for m in memories}) == workers * per_worker
    assert all(m.proof_count == 1 for m in memories)

    events = list(vault.journal.events())
    assert vault.journal.warnings == []
    adds = Counter(e.memory for e in events if e.kind == "add")
    assert set(adds) == {m.id for m in memories} and set(adds.values()) == {1}
    assert len({e.id for e in events}) == len(events)
    assert [p for p in vault.root.rglob("*") if p.name.endswith(".tmp")] == []
