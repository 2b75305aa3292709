"""Search and remember are about the current project, as context is: the CLI run in a checkout, and the MCP and
HTTP servers started in one. Real git checkouts (origin https://github.com/acme/web.git), real files, the real CLI,
the real HTTP server and the MCP SDK's own client."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import Result

from vault_engine.index.fakes import HashEmbedder
from vault_engine.server import http as http_api
from vault_engine.server.mcp import CurrentProject, build_server
from vault_engine.server.service import MemoryService
from vault_engine.vault import NewMemory, Vault

WEB = "github.com/acme/web"
API = "github.com/acme/api"
TEXTS = {
    "api": ("The api rate limit is 100 requests per minute per key.", API),
    "web": ("The web rate limit banner appears after five failed logins.", WEB),
    "global": ("Rate limits are written down in the operations handbook.", None),
}
QUERY = "rate limit"


def frontmatter(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[0]


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def seeded(run_cli: Callable[..., Result]) -> dict[str, str]:
    """A memory of github.com/acme/api, one of github.com/acme/web and a global one, added from no project."""
    ids = {}
    for name, (text, project) in TEXTS.items():
        args = ["--project", project] if project else []
        ids[name] = as_json(run_cli("add", text, *args, "--json"))["id"]
    return ids


def found(result: Any) -> set[str]:
    return {hit["id"] for hit in result["hits"]}


# ---------------------------------------------------------------- the CLI


def test_search_from_a_checkout_covers_its_project_and_the_global_memories(
        run_cli: Callable[..., Result], seeded: dict[str, str], checkout: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(checkout / ".git")  # anywhere inside the checkout
    scoped = as_json(run_cli("search", QUERY, "--limit", "20", "--json"))
    assert scoped["project"] == WEB
    assert {seeded["web"], seeded["global"]} <= found(scoped) and seeded["api"] not in found(scoped)

    wide = as_json(run_cli("search", QUERY, "--limit", "20", "--all-projects", "--json"))
    assert wide["project"] is None and set(seeded.values()) <= found(wide)

    other = as_json(run_cli("search", QUERY, "--limit", "20", "--project", API, "--json"))
    assert other["project"] == API
    assert {seeded["api"], seeded["global"]} <= found(other) and seeded["web"] not in found(other)


def test_search_outside_a_checkout_covers_every_project(run_cli: Callable[..., Result],
                                                        seeded: dict[str, str]) -> None:
    result = as_json(run_cli("search", QUERY, "--limit", "20", "--json"))
    assert result["project"] is None and set(seeded.values()) <= found(result)


def test_search_in_the_vault_folder_covers_every_project(run_cli: Callable[..., Result], seeded: dict[str, str],
                                                         vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vault kept in git is no project: from its folder (where the Obsidian plugin runs) search is unscoped."""
    subprocess.run(["git", "init", "-q", str(vault.root)], check=True, capture_output=True)
    monkeypatch.chdir(vault.root / "memories")
    result = as_json(run_cli("search", QUERY, "--limit", "20", "--json"))
    assert result["project"] is None and set(seeded.values()) <= found(result)


def test_the_human_output_says_when_a_search_was_narrowed(
        run_cli: Callable[..., Result], seeded: dict[str, str], checkout: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    narrowed = f"searched {WEB} and global memories; --all-projects to widen"
    plain = run_cli("search", QUERY)
    assert plain.exit_code == 0 and "searched" not in plain.stderr  # no project here: nothing to say
    monkeypatch.chdir(checkout)
    compact = run_cli("search", QUERY)
    assert compact.exit_code == 0 and seeded["web"] in compact.stdout and narrowed not in compact.output
    explained = run_cli("search", QUERY, "--explain")
    assert explained.exit_code == 0 and explained.stderr.splitlines().count(narrowed) == 1
    nothing = run_cli("search", QUERY, "--type", "procedure")
    assert nothing.exit_code == 0 and nothing.stderr.strip() == f"no matches ({narrowed})"


def test_project_and_all_projects_together_are_one_line(
        memvault_proc: Callable[..., subprocess.CompletedProcess[str]], vault: Vault) -> None:
    done = memvault_proc("--vault", str(vault.root), "search", "x", "--project", API, "--all-projects")
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("error: --project and --all-projects exclude each other") and "Traceback" not in line


def test_add_from_a_checkout_stores_under_its_project(run_cli: Callable[..., Result], vault: Vault, checkout: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(checkout)
    added = as_json(run_cli("add", "The web app deploys to Vercel.", "--json"))
    assert (added["scope"], added["project"]) == ("project", WEB)
    assert added["path"].startswith("memories/projects/github.com-acme-web/")
    head = frontmatter(vault.root / added["path"])
    assert "\nscope: project\n" in head and f"\nproject: {WEB}\n" in head

    human = run_cli("add", "The web app's staging branch is called preview.")
    assert human.exit_code == 0 and human.stdout.startswith("m-")
    assert f"in project {WEB}: memories/projects/github.com-acme-web/" in human.stderr
    assert "--scope global" in human.stderr

    scoped = as_json(run_cli("add", "Feature flags live in flags.yaml.", "--scope", "project", "--json"))
    assert (scoped["scope"], scoped["project"]) == ("project", WEB)


def test_add_scope_global_and_user_memories_stay_global_in_a_checkout(
        run_cli: Callable[..., Result], vault: Vault, checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(checkout)
    explicit = run_cli("add", "Commit messages are written in English.", "--scope", "global", "--json")
    data = as_json(explicit)
    assert (data["scope"], data["project"]) == ("global", None) and data["path"].startswith("memories/global/")
    head = frontmatter(vault.root / data["path"])
    assert "scope: project" not in head and "project:" not in head

    profile = as_json(run_cli("add", "The user is a backend engineer.", "--type", "core-profile", "--json"))
    assert (profile["scope"], profile["project"]) == ("global", None) and profile["path"].startswith("profile/")
    taste = as_json(run_cli("add", "The user prefers short answers.", "--class", "user-preference", "--json"))
    assert (taste["scope"], taste["project"]) == ("global", None) and taste["path"].startswith("memories/global/")
    named = as_json(run_cli("add", "The web team's lead reviews releases.", "--type", "core-profile",
                            "--project", WEB, "--json"))
    assert (named["scope"], named["project"]) == ("project", WEB)


def test_add_outside_a_checkout_stays_global(run_cli: Callable[..., Result], vault: Vault) -> None:
    added = run_cli("add", "Releases happen on Tuesdays.", "--json")
    data = as_json(added)
    assert (data["scope"], data["project"]) == ("global", None) and data["path"].startswith("memories/global/")
    assert "in project" not in added.stderr
    assert "scope: project" not in frontmatter(vault.root / data["path"])


@pytest.mark.slow
def test_the_real_command_in_a_checkout(memvault_proc: Callable[..., subprocess.CompletedProcess[str]],
                                        vault: Vault, checkout: Path) -> None:
    """``python -m vault_engine`` with its working folder in the checkout: add stores there, search stays there."""
    root = str(vault.root)
    api = json.loads(memvault_proc("--vault", root, "add", TEXTS["api"][0], "--project", API, "--json").stdout)
    done = memvault_proc("--vault", root, "add", TEXTS["web"][0], "--json", cwd=checkout)
    assert done.returncode == 0, done.stderr
    web = json.loads(done.stdout)
    assert web["project"] == WEB and f"\nproject: {WEB}\n" in frontmatter(vault.root / web["path"])
    searched = json.loads(memvault_proc("--vault", root, "search", QUERY, "--json", cwd=checkout).stdout)
    assert searched["project"] == WEB and web["id"] in found(searched) and api["id"] not in found(searched)
    wide = json.loads(memvault_proc("--vault", root, "search", QUERY, "--all-projects", "--json", cwd=checkout).stdout)
    assert {api["id"], web["id"]} <= found(wide)


# ---------------------------------------------------------------- the servers


def service_in(folder: Path, vault: Vault) -> MemoryService:
    """A service as ``memvault serve`` and ``memvault mcp`` make it when started in ``folder`` (fake embedder)."""
    warm = Vault(vault.root, auto_sync=True, embedder=HashEmbedder())
    for text, project in TEXTS.values():
        warm.add(NewMemory(text, project=project))
    here = CurrentProject(folder, vault_root=vault.root)
    return MemoryService(warm, source="tool:http", default_project=here.key, current_project=here.work_key)


@pytest.fixture
def web_service(vault: Vault, checkout: Path) -> Iterator[MemoryService]:
    service = service_in(checkout, vault)
    yield service
    service.close()


def post(served: http_api.Served, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    connection.request("POST", path, body=json.dumps(body).encode(),
                       headers={"Authorization": f"Bearer {served.token}"})
    answer = connection.getresponse()
    data = json.loads(answer.read())
    connection.close()
    return answer.status, data


def ids_of(service: MemoryService) -> dict[str, str]:
    by_text = {entry.memory.body.strip(): entry.memory.id for entry in service.vault.scan().active()}
    return {name: by_text[text] for name, (text, _project) in TEXTS.items()}


def test_http_search_covers_the_servers_project_unless_all_projects(web_service: MemoryService) -> None:
    ids = ids_of(web_service)
    with http_api.running(web_service) as served:
        status, scoped = post(served, "/v1/search", {"query": QUERY, "limit": 20})
        assert status == 200 and scoped["project"] == WEB
        assert {ids["web"], ids["global"]} <= found(scoped) and ids["api"] not in found(scoped)
        status, wide = post(served, "/v1/search", {"query": QUERY, "limit": 20, "all_projects": True})
        assert status == 200 and wide["project"] is None and set(ids.values()) <= found(wide)
        status, other = post(served, "/v1/search", {"query": QUERY, "limit": 20, "project": API})
        assert status == 200 and ids["api"] in found(other) and ids["web"] not in found(other)
        status, both = post(served, "/v1/search", {"query": QUERY, "project": API, "all_projects": True})
        assert status == 400 and both["error"]["kind"] == "InvalidInput"
        assert "exclude each other" in both["error"]["message"] and "\n" not in both["error"]["message"]


def test_http_remember_stores_under_the_servers_project(web_service: MemoryService) -> None:
    root = web_service.vault.root
    with http_api.running(web_service) as served:
        status, here = post(served, "/v1/remember", {"text": "The web app's cache is Redis 7."})
        assert status == 200 and (here["scope"], here["project"]) == ("project", WEB)
        assert here["path"].startswith("memories/projects/github.com-acme-web/")
        assert f"\nproject: {WEB}\n" in frontmatter(root / here["path"])
        status, everywhere = post(served, "/v1/remember", {"text": "The user reviews on Fridays.", "scope": "global"})
        assert status == 200 and (everywhere["scope"], everywhere["project"]) == ("global", None)
        assert everywhere["path"].startswith("memories/global/")
        assert "project:" not in frontmatter(root / everywhere["path"])


def test_a_server_outside_any_checkout_searches_everything_and_remembers_globally(vault: Vault,
                                                                                  tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    service = service_in(plain, vault)
    try:
        ids = ids_of(service)
        with http_api.running(service) as served:
            status, result = post(served, "/v1/search", {"query": QUERY, "limit": 20})
            assert status == 200 and result["project"] is None and set(ids.values()) <= found(result)
            status, added = post(served, "/v1/remember", {"text": "Backups run nightly."})
            assert status == 200 and (added["scope"], added["project"]) == ("global", None)
    finally:
        service.close()


def test_mcp_search_and_remember_in_process(web_service: MemoryService, checkout: Path) -> None:
    """The SDK's client against the server object started in the checkout."""
    from mcp import Client

    ids = ids_of(web_service)
    here = CurrentProject(checkout, vault_root=web_service.vault.root)

    async def session() -> None:
        async with Client(build_server(web_service, here=here)) as client:
            scoped = await client.call_tool("memory_search", {"query": QUERY, "limit": 20})
            assert not scoped.is_error and scoped.structured_content["project"] == WEB
            assert ids["api"] not in found(scoped.structured_content)
            assert ids["web"] in found(scoped.structured_content)
            wide = await client.call_tool("memory_search", {"query": QUERY, "limit": 20, "all_projects": True})
            assert not wide.is_error and ids["api"] in found(wide.structured_content)
            added = await client.call_tool("memory_remember", {"text": "The web app uses Tailwind."})
            assert not added.is_error and added.structured_content["project"] == WEB
            assert f"in project {WEB}" in str(getattr(added.content[0], "text", ""))

    anyio.run(session)


@pytest.mark.slow
def test_memvault_serve_in_a_checkout(vault: Vault, checkout: Path) -> None:
    """The real command started in the checkout says which project it serves, and searches stay in it."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    seed = Vault(vault.root)
    for text, project in TEXTS.values():
        seed.add(NewMemory(text, project=project))
    proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "serve", "--vault", str(vault.root), "--port", "0",
                             "--no-watch"], stderr=subprocess.PIPE, text=True, env=env, cwd=checkout)
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline().startswith(f"serving {vault.root} at http://127.0.0.1:")
        assert proc.stderr.readline().startswith(f"current project: {WEB} (")
        served = http_api.read_served(vault.root)
        assert served is not None
        status, result = post(served, "/v1/search", {"query": QUERY, "limit": 20})
        assert status == 200 and result["project"] == WEB
        assert {hit["project"] for hit in result["hits"]} <= {WEB, None}
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=60)[1]
    assert proc.returncode == 0 and "Traceback" not in rest


@pytest.mark.slow
def test_memvault_serve_project_option(vault: Vault, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "serve", "--vault", str(vault.root), "--port", "0",
                             "--no-watch", "--project", API], stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        assert proc.stderr is not None
        proc.stderr.readline()
        assert proc.stderr.readline().startswith(f"current project: {API} (")
        served = http_api.read_served(vault.root)
        assert served is not None
        status, result = post(served, "/v1/search", {"query": QUERY})  # and SIGTERM finds the server serving
        assert status == 200 and result["project"] == API
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=60)[1]
    assert proc.returncode == 0 and "Traceback" not in rest


@pytest.mark.slow
def test_memvault_mcp_project_option(vault: Vault, tmp_path: Path) -> None:
    """The real ``memvault mcp --project`` over stdio (the SDK's client), started outside any checkout."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    seed = Vault(vault.root)
    ids = {name: seed.add(NewMemory(text, project=project)).id for name, (text, project) in TEXTS.items()}
    params = StdioServerParameters(command=sys.executable, cwd=tmp_path, env=dict(os.environ),
                                   args=["-m", "vault_engine", "mcp", "--vault", str(vault.root), "--no-watch",
                                         "--project", API])

    async def session() -> None:
        with (tmp_path / "stderr.log").open("w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                scoped = await client.call_tool("memory_search", {"query": QUERY, "limit": 20})
                assert not scoped.is_error and scoped.structured_content is not None
                assert scoped.structured_content["project"] == API
                assert ids["api"] in found(scoped.structured_content)
                assert ids["web"] not in found(scoped.structured_content)
                added = await client.call_tool("memory_remember", {"text": "The api paginates with cursors."})
                assert not added.is_error and added.structured_content is not None
                assert added.structured_content["project"] == API

    anyio.run(session)
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(encoding="utf-8")
