"""The store: vault discovery, path guards and scanning."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_engine import store
from vault_engine.errors import (
    EncodingError,
    FrontmatterError,
    MemoryFileError,
    PathEscapeError,
    ValidationError,
    VaultError,
    VaultNotFound,
)
from vault_engine.vault import NewMemory, Vault


def memory_md(memory_id: str, title: str = "A memory", body: str = "The body.\n", **keys: str) -> str:
    lines = [f"id: {memory_id}", f"title: {title}", "type: fact", *(f"{k}: {v}" for k, v in keys.items())]
    return "---\n" + "\n".join(lines) + "\n---\n" + body


# ---------------------------------------------------------------- discovery


def test_discover_explicit_wins_over_env_and_cwd(make_vault: Callable[..., Vault], tmp_path: Path) -> None:
    explicit, from_env, above = make_vault(name="explicit"), make_vault(name="env"), make_vault(name="above")
    cwd = above.root / "memories" / "global"
    found = store.discover(explicit.root, environ={"MEMVAULT_DIR": str(from_env.root)}, cwd=cwd)
    assert found == explicit.root.resolve()


def test_discover_env_wins_over_cwd(make_vault: Callable[..., Vault]) -> None:
    from_env, above = make_vault(name="env"), make_vault(name="above")
    found = store.discover(None, environ={"MEMVAULT_DIR": str(from_env.root)}, cwd=above.root / "profile")
    assert found == from_env.root.resolve()


def test_discover_walks_upward_from_cwd(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault()
    deep = vault.root / "memories" / "projects" / "x" / "y"
    deep.mkdir(parents=True)
    assert store.discover(None, environ={}, cwd=deep) == vault.root.resolve()


def test_discover_creates_default_vault_under_home(isolated_env: Path, tmp_path: Path) -> None:
    nowhere = tmp_path / "not-a-vault"
    nowhere.mkdir()
    found = store.discover(None, environ={"HOME": str(isolated_env)}, cwd=nowhere)
    assert found == isolated_env / ".memvault" / "vault"
    assert store.is_vault(found)
    assert (found / "memories" / "global").is_dir() and (found / "journal").is_dir()
    # a second call finds it again without complaint
    assert store.discover(None, environ={"HOME": str(isolated_env)}, cwd=nowhere) == found


def test_discover_default_uses_real_home_when_environ_lacks_it(isolated_env: Path, tmp_path: Path) -> None:
    found = store.discover(None, environ={}, cwd=tmp_path)
    assert found == isolated_env / ".memvault" / "vault"


@pytest.mark.parametrize("origin", ["explicit", "env"])
def test_discover_refuses_a_folder_without_config(tmp_path: Path, origin: str) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(VaultNotFound, match="no vault at"):
        if origin == "explicit":
            store.discover(plain, environ={}, cwd=tmp_path)
        else:
            store.discover(None, environ={"MEMVAULT_DIR": str(plain)}, cwd=tmp_path)


def test_create_vault_refuses_non_empty_folder(tmp_path: Path) -> None:
    folder = tmp_path / "busy"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(VaultError, match="not empty"):
        store.create_vault(folder, git=False)
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_create_vault_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(VaultError):
        store.create_vault(target, git=False)


def test_create_vault_into_empty_folder_and_again(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    assert store.create_vault(folder, git=False) is True
    assert store.is_vault(folder)
    assert store.create_vault(folder, git=False) is False
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "empty"]
    assert leftovers == []  # the staging folder is gone


# ---------------------------------------------------------------- names and paths

BAD_NAMES = {"", ".", ".."}


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_slugify_is_always_a_safe_name(text: str) -> None:
    slug = store.slugify(text)
    assert slug not in BAD_NAMES
    assert "/" not in slug and "\\" not in slug and ".." not in slug and "\0" not in slug
    assert 0 < len(slug) <= 60


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_project_folder_is_always_a_safe_name(project: str) -> None:
    name = store.project_folder(project)
    assert name not in BAD_NAMES
    assert "/" not in name and "\\" not in name and ".." not in name and "\0" not in name
    assert not name.startswith(".")  # never hidden (scans skip hidden folders)
    assert 0 < len(name) <= 80


@settings(max_examples=100, deadline=None)
@given(st.text(), st.text())
def test_derived_paths_stay_inside(tmp_path_factory: pytest.TempPathFactory, project: str, title: str) -> None:
    root = tmp_path_factory.getbasetemp() / "derived"
    root.mkdir(exist_ok=True)
    rel = f"memories/projects/{store.project_folder(project)}/{store.slugify(title)}.md"
    assert store.inside(root, rel) == root / rel


def test_project_folder_distinguishes_similar_long_keys() -> None:
    a, b = "x" * 100 + "a", "x" * 100 + "b"
    assert store.project_folder(a) != store.project_folder(b)


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../x", "~/x", "..", "memories/../../x.md"])
def test_inside_refuses_escapes(tmp_path: Path, bad: str) -> None:
    with pytest.raises(PathEscapeError):
        store.inside(tmp_path, bad)


def test_inside_refuses_symlinked_folder_pointing_outside(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault.root / "memories" / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathEscapeError):
        store.inside(vault.root, "memories/link/x.md")


def test_inside_accepts_normal_paths(vault: Vault) -> None:
    assert store.inside(vault.root, "memories/global/a.md") == vault.root / "memories/global/a.md"


# ---------------------------------------------------------------- scanning


def test_scan_skips_state_hidden_temp_and_root_files(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={
        "memories/global/good.md": memory_md("m-good"),
        ".memvault/cache.md": memory_md("m-state"),
        ".obsidian/x.md": memory_md("m-obsidian"),
        ".git/x.md": memory_md("m-git"),
        "journal/x.md": memory_md("m-journal"),
        "memories/global/.hidden.md": memory_md("m-hidden"),
        "memories/global/.good.md.0123456789ab.tmp": memory_md("m-temp"),
        "memories/global/notes.txt": "not markdown",
        "README.md": "# Vault guide\n",
        "INDEX.md": "# Index\n",
        "memories/README.md": "# A plain note below the root\n",
    })
    result = vault.scan()
    ids = {e.memory.id for e in result.entries.values()}
    assert "m-good" in ids
    assert not ids & {"m-state", "m-obsidian", "m-git", "m-journal", "m-hidden", "m-temp"}
    paths = sorted(e.path for e in result.entries.values())
    assert paths == ["memories/README.md", "memories/global/good.md"]
    assert result.problems == []


def test_scan_reads_memories_in_a_project_folder_named_like_a_skipped_one(vault: Vault) -> None:
    from vault_engine.vault import NewMemory

    added = vault.add(NewMemory("Journal project convention", project="journal"))
    assert added.path.startswith("memories/projects/journal/")
    assert added.id in vault.scan().entries


def test_scan_reports_symlink_out_of_vault_and_does_not_read_it(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text(memory_md("m-secret", title="Secret"))
    (vault.root / "memories" / "global" / "evil.md").symlink_to(outside)
    (vault.root / "memories" / "global" / "ok.md").write_text(memory_md("m-ok"))
    read: list[str] = []
    real_read = store.read_entry

    def spy(root: Path, rel: str) -> store.Entry:
        read.append(rel)
        return real_read(root, rel)

    monkeypatch.setattr(store, "read_entry", spy)
    result = vault.scan()
    assert "m-secret" not in result.entries and "m-ok" in result.entries
    assert "memories/global/evil.md" not in read
    [problem] = result.problems
    assert problem.path == "memories/global/evil.md" and "outside the vault" in problem.message


def test_scan_reports_symlinked_folder_out_of_vault(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text(memory_md("m-elsewhere"))
    (vault.root / "memories" / "linked").symlink_to(outside, target_is_directory=True)
    result = vault.scan()
    assert "m-elsewhere" not in result.entries
    assert [p.path for p in result.problems] == ["memories/linked"]


def test_duplicate_ids_resolve_deterministically(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={
        "trash/a.md": memory_md("m-dup", title="in trash"),
        "zzz/b.md": memory_md("m-dup", title="active, later path"),
        "zzz/c.md": memory_md("m-dup", title="active, latest path"),
        "memories/global/one.md": memory_md("m-two", title="first"),
        "memories/global/two.md": memory_md("m-two", title="second"),
    })
    for _ in range(3):
        result = vault.scan()
        assert result.entries["m-dup"].path == "zzz/b.md"
        assert result.entries["m-two"].path == "memories/global/one.md"
        dropped = sorted(p.path or "" for p in result.problems)
        assert dropped == ["memories/global/two.md", "trash/a.md", "zzz/c.md"]
        assert all("duplicate id" in p.message for p in result.problems)


def test_bad_files_become_problems_and_valid_files_still_appear(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={
        "memories/global/good.md": memory_md("m-good"),
        "memories/global/yaml.md": "---\nid: m-yaml\ntitle: [unclosed\ntype: fact\n---\nbody\n",
        "memories/global/bytes.md": b"---\nid: m-bytes\ntitle: caf\xe9\ntype: fact\n---\n",
        "memories/global/enum.md": memory_md("m-enum", lifecycle="forever"),
        "memories/global/unclosed.md": "---\nid: m-unclosed\ntitle: x\n",
        "memories/global/notamap.md": "---\n- a\n- b\n---\nbody\n",
    })
    result = vault.scan()
    assert list(result.entries) == ["m-good"]
    by_path = {p.path: p for p in result.problems}
    assert set(by_path) == {
        "memories/global/yaml.md", "memories/global/bytes.md", "memories/global/enum.md",
        "memories/global/unclosed.md", "memories/global/notamap.md",
    }
    assert isinstance(by_path["memories/global/yaml.md"], FrontmatterError)
    assert isinstance(by_path["memories/global/bytes.md"], EncodingError)
    assert by_path["memories/global/bytes.md"].line == 3
    enum = by_path["memories/global/enum.md"]
    assert isinstance(enum, ValidationError) and enum.line == 5 and "forever" in enum.message
    for problem in result.problems:
        assert isinstance(problem, MemoryFileError)
        assert problem.one_line().startswith(problem.path or "?")


def test_plain_markdown_is_a_note(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={"memories/global/idea.md": "# My idea\nSome text\n"})
    [entry] = vault.scan().entries.values()
    assert entry.memory.type == "note" and entry.memory.plain and entry.memory.title == "My idea"


def test_write_does_not_touch_unchanged_file(make_vault: Callable[..., Vault]) -> None:
    text = "---\nid: m-same   # a comment\ntitle: 'quoted'\ntype: fact\n---\nbody\n"
    vault = make_vault(files={"memories/global/same.md": text})
    entry = vault.scan().get("m-same")
    path = vault.root / entry.path
    before = path.stat().st_mtime_ns
    assert store.write(vault.root, entry.path, entry.memory, entry.parsed) is False
    assert path.read_text() == text and path.stat().st_mtime_ns == before


def test_move_writes_first_then_removes(vault: Vault) -> None:
    (vault.root / "memories/global/a.md").write_text(memory_md("m-move"))
    entry = vault.scan().get("m-move")
    store.move(vault.root, entry.path, "memories/global/b.md", entry.memory, None)
    assert not (vault.root / "memories/global/a.md").exists()
    assert vault.scan().get("m-move").path == "memories/global/b.md"


def test_write_refuses_paths_outside(vault: Vault) -> None:
    entry_memory = store.read_entry(vault.root, _put(vault.root, "memories/global/x.md", memory_md("m-x"))).memory
    with pytest.raises(PathEscapeError):
        store.write(vault.root, "../escaped.md", entry_memory)
    assert not (vault.root.parent / "escaped.md").exists()


def _put(root: Path, rel: str, text: str) -> str:
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return rel


def test_iter_markdown_returns_posix_relative_paths(make_vault: Callable[..., Vault]) -> None:
    vault = make_vault(files={"a/b/c.md": memory_md("m-c")})
    rels = [rel for rel, _, _ in store.iter_markdown(vault.root)]
    assert rels == ["a/b/c.md"]
    assert os.sep not in rels[0] or os.sep == "/"


def test_scan_does_not_block_on_a_fifo(vault: Vault) -> None:
    import threading

    os.mkfifo(vault.root / "memories" / "global" / "pipe.md")
    (vault.root / "memories" / "global" / "ok.md").write_text(memory_md("m-ok"))
    results: list[store.Scan] = []
    thread = threading.Thread(target=lambda: results.append(vault.scan()), daemon=True)
    thread.start()
    thread.join(5)
    assert results, "scan blocked on a FIFO"
    assert list(results[0].entries) == ["m-ok"]
    [problem] = results[0].problems
    assert (problem.path, problem.message) == ("memories/global/pipe.md", "not a regular file; not read")


def test_scan_with_a_cache_reparses_only_changed_files(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    from vault_engine import store as store_mod

    first = vault.add(NewMemory("Alpha fact about deploys.", title="Alpha"))
    second = vault.add(NewMemory("Beta fact about tests.", title="Beta"))
    cache: store_mod.ParseCache = {}
    assert set(store_mod.scan(vault.root, cache).entries) >= {first.id, second.id}
    read: list[str] = []
    real = store_mod.read_entry
    monkeypatch.setattr(store_mod, "read_entry", lambda root, rel: read.append(rel) or real(root, rel))
    store_mod.scan(vault.root, cache)
    assert read == []
    path = vault.root / second.path
    path.write_text(path.read_text().replace("Beta fact", "Beta fact, edited,"))
    (vault.root / first.path).unlink()
    (vault.root / "memories" / "broken.md").write_text("---\nid: [unclosed\n---\n")
    again = store_mod.scan(vault.root, cache)
    assert sorted(read) == sorted([second.path, "memories/broken.md"])
    assert first.id not in again.entries and "edited" in again.entries[second.id].memory.body
    assert [p.path for p in again.problems] == ["memories/broken.md"]
    read.clear()
    assert [p.path for p in store_mod.scan(vault.root, cache).problems] == ["memories/broken.md"]
    assert read == [] and first.path not in cache
