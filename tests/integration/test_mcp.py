"""``memvault mcp`` as a real subprocess, driven by the MCP SDK's own stdio client.

One server runs for the whole module (started in a git repository whose origin is
github.com/example/webapp, on a vault made with ``memvault init`` and ``import``);
every tool is called on it, including the error paths. One more process checks a
clean stop on SIGTERM with stdin still open.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pytest

from vault_engine.context.project import identify
from vault_engine.format.memory import OUTCOMES, TYPES

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "scripts" / "examples.jsonl"
TOOL_NAMES = {"memory_search", "memory_read", "memory_remember", "memory_correct", "memory_forget",
              "memory_context", "memory_feedback"}
REQUIRED = {
    "memory_search": ["query"], "memory_read": ["id"], "memory_remember": ["text"], "memory_correct": ["id", "text"],
    "memory_forget": ["id"], "memory_context": ["task"], "memory_feedback": ["id", "outcome"],
}
DEPLOY = "Deploys to production go through the release pipeline; never push images by hand."
TIMEOUT = 60.0


def clean_env(home: Path) -> dict[str, str]:
    """The test process's environment without MEMVAULT_* / ANTHROPIC_*, with a private HOME and no scheduled jobs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMVAULT_", "ANTHROPIC_"))}
    env.update({
        "HOME": str(home), "HF_HUB_OFFLINE": "1",
        "MEMVAULT_WATCH_MAINTAIN_EVERY_HOURS": "0", "MEMVAULT_WATCH_MAINTAIN_AFTER_CHANGES": "0",
        "MEMVAULT_WATCH_LEARN_EVERY_MINUTES": "0",
    })
    return env


def memvault(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "vault_engine", *args], env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    return proc


def make_repository(folder: Path) -> None:
    """A git repository whose project key is github.com/example/webapp (a plain folder without git)."""
    folder.mkdir()
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", "git@github.com:Example/Webapp.git"],
                       check=True, capture_output=True)


@dataclass
class Server:
    """A running ``memvault mcp`` and a connected client session (called through a blocking portal)."""

    portal: Any
    session: Any
    init: Any
    root: Path
    project: str
    ids: dict[str, str]
    errlog: TextIO
    timings: dict[str, float] = field(default_factory=dict)

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.session.call_tool, tool, arguments or {})

    def ok(self, tool: str, arguments: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """(text, structured content) of a call that must succeed."""
        result = self.call(tool, arguments)
        text = result.content[0].text
        assert not result.is_error, text
        assert isinstance(result.structured_content, dict)
        return text, result.structured_content

    def error(self, tool: str, arguments: dict[str, Any] | None = None) -> str:
        """The one-line text of a call that must fail as a tool error."""
        result = self.call(tool, arguments)
        assert result.is_error, result.content
        [block] = result.content
        assert block.text.startswith("error: ") and "\n" not in block.text and "Traceback" not in block.text
        assert result.structured_content["error"]["message"] in block.text
        return str(block.text)

    def stderr(self) -> str:
        self.errlog.flush()
        return Path(self.errlog.name).read_text(encoding="utf-8")


@asynccontextmanager
async def connect(params: Any, errlog: TextIO) -> AsyncIterator[tuple[Any, Any, float]]:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    started = time.perf_counter()
    async with stdio_client(params, errlog=errlog) as (read, write), \
            ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session:
        init = await session.initialize()
        yield session, init, started


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    from anyio.from_thread import start_blocking_portal
    from mcp import StdioServerParameters

    base = tmp_path_factory.mktemp("mcp")
    home = base / "home"
    home.mkdir()
    env = clean_env(home)
    root = base / "vault"
    memvault(env, "init", str(root), "--json")
    records = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    records.append({"title": "Deploy through the pipeline", "body": DEPLOY, "scope": "project",
                    "project": "github.com/example/webapp", "type": "procedure"})
    seed = base / "seed.jsonl"
    seed.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    imported = json.loads(memvault(env, "--vault", str(root), "import", str(seed), "--json").stdout)["imported"]
    ids = dict(zip([record["title"] for record in records], imported, strict=True))
    ids["deploy"] = ids["Deploy through the pipeline"]
    repo = base / "webapp"
    make_repository(repo)

    params = StdioServerParameters(command=sys.executable, args=["-m", "vault_engine", "mcp", "--vault", str(root)],
                                   env=env, cwd=repo)
    with (base / "stderr.log").open("w+", encoding="utf-8") as errlog, start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(connect(params, errlog)) as (session, init, started):
        running = Server(portal, session, init, root, identify(repo).key, ids, errlog)
        running.timings["initialize"] = time.perf_counter() - started
        running.ok("memory_search", {"query": "pytest fixtures"})
        running.timings["first answer"] = time.perf_counter() - started
        yield running


def test_tools_are_listed_with_descriptions_and_schemas(server: Server) -> None:
    assert server.init.server_info.name == "memvault"
    assert "memory_context" in (server.init.instructions or "")
    tools = {tool.name: tool for tool in server.portal.call(server.session.list_tools).tools}
    assert set(tools) == TOOL_NAMES
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 100, name
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert schema["required"] == REQUIRED[name]
        assert set(schema["required"]) <= set(schema["properties"])
        assert all(prop.get("description") for prop in schema["properties"].values()), name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
    assert tools["memory_read"].input_schema["properties"]["depth"]["enum"] == [0, 1, 2]
    assert tools["memory_feedback"].input_schema["properties"]["outcome"]["enum"] == list(OUTCOMES)
    assert tools["memory_remember"].input_schema["properties"]["type"]["enum"] == list(TYPES)
    assert tools["memory_search"].input_schema["properties"]["types"]["items"]["enum"] == list(TYPES)
    assert tools["memory_search"].input_schema["properties"]["limit"]["maximum"] == 100
    assert tools["memory_search"].annotations.read_only_hint is True
    assert tools["memory_forget"].annotations.destructive_hint is True


def test_search_finds_the_imported_memory(server: Server) -> None:
    wanted = server.ids["Use pytest fixtures, not setUp"]
    text, result = server.ok("memory_search", {"query": "pytest fixtures instead of setUp", "limit": 3})
    assert result["hits"][0]["id"] == wanted and len(result["hits"]) <= 3
    assert result["hits"][0]["why"] and result["hits"][0]["summary"]
    first = text.splitlines()[1]
    assert first.startswith(f"- {wanted}  Use pytest fixtures, not setUp  (score ")
    assert "tests/conftest.py" in first and "[why: full text: rank 1" in first

    _, only = server.ok("memory_search", {"query": "pytest fixtures", "types": ["procedure"]})
    assert wanted not in [hit["id"] for hit in only["hits"]]

    samples = []
    for n in range(20):
        begin = time.perf_counter()
        server.ok("memory_search", {"query": f"how do we deploy to production {n}"})
        samples.append(time.perf_counter() - begin)
    server.timings["search median"] = statistics.median(samples)


def test_read_depths_add_detail_then_body(server: Server) -> None:
    memory_id = server.ids["Database migrations go through alembic"]
    text0, view0 = server.ok("memory_read", {"id": memory_id, "depth": 0})
    text1, view1 = server.ok("memory_read", {"id": memory_id})  # depth 1 by default
    text2, view2 = server.ok("memory_read", {"id": memory_id, "depth": 2})

    assert [view0["depth"], view1["depth"], view2["depth"]] == [0, 1, 2]
    assert text0.startswith("# Database migrations go through alembic\n") and "summary: " in text0
    assert "metadata" not in view0 and "body" not in view0 and "type: procedure" not in text0
    assert "read it with memory_read depth 2" in text0

    assert view1["metadata"]["type"] == "procedure" and "type: procedure" in text1 and "body" not in view1
    assert view1["detail"] and "detail: " in text1

    assert "alembic upgrade head" in view2["body"] and "alembic upgrade head" in text2
    assert len(text0) < len(text1) < len(text2)


def test_remember_then_search_finds_it(server: Server) -> None:
    fact = "The billing service retries failed webhooks three times with exponential backoff."
    text, added = server.ok("memory_remember", {"text": fact, "tags": ["billing"]})
    assert added["created"] is True  # into the repository the server was started in, by default
    assert text == f"Remembered {added['id']} in project {server.project} ({added['path']})."

    _, found = server.ok("memory_search", {"query": "billing webhook retries"})
    assert found["hits"][0]["id"] == added["id"]
    _, view = server.ok("memory_read", {"id": added["id"], "depth": 1})
    assert view["metadata"]["source"] == "tool:mcp" and view["metadata"]["tags"] == ["billing"]

    text, again = server.ok("memory_remember", {"text": fact})
    assert again["id"] == added["id"] and again["created"] is False and text.startswith("Already remembered")

    one_off = "Skip the integration tests just this once."
    assert "one-off" in server.error("memory_remember", {"text": one_off})
    _, forced = server.ok("memory_remember", {"text": one_off, "force": True})
    assert forced["created"] is True


def test_remember_in_the_current_project_by_default(server: Server) -> None:
    _, added = server.ok("memory_remember", {"text": "Feature flags live in config/flags.yaml.", "scope": "project",
                                             "paths": ["config/**"], "type": "fact"})
    _, view = server.ok("memory_read", {"id": added["id"]})
    assert view["metadata"]["scope"] == "project" and view["metadata"]["project"] == server.project
    assert view["metadata"]["paths"] == ["config/**"]


def test_search_covers_the_current_project_unless_all_projects(server: Server) -> None:
    mobile = server.ids["The mobile app uses Expo"]  # github.com/example/mobile, not the server's project
    profile = server.ids["Who I work with"]  # global
    fixtures = server.ids["Use pytest fixtures, not setUp"]  # the server's own project
    text, found = server.ok("memory_search", {"query": "mobile app Expo builds", "limit": 20})
    assert found["project"] == server.project
    assert mobile not in [hit["id"] for hit in found["hits"]]
    assert f"in {server.project} and the global memories" in text and "all_projects: true" in text
    _, found = server.ok("memory_search", {"query": "backend engineer Python TypeScript", "limit": 20})
    assert profile in [hit["id"] for hit in found["hits"]]
    _, found = server.ok("memory_search", {"query": "pytest fixtures", "limit": 20})
    assert fixtures in [hit["id"] for hit in found["hits"]]

    text, wide = server.ok("memory_search", {"query": "mobile app Expo builds", "all_projects": True})
    assert wide["project"] is None and wide["hits"][0]["id"] == mobile and "all_projects" not in text
    _, other = server.ok("memory_search", {"query": "mobile app Expo builds", "project": "github.com/example/mobile"})
    assert other["project"] == "github.com/example/mobile" and other["hits"][0]["id"] == mobile
    assert "exclude each other" in server.error("memory_search", {"query": "x", "project": "github.com/example/mobile",
                                                                  "all_projects": True})


def test_projects_are_walls_for_reads_and_remembering(server: Server) -> None:
    mobile = server.ids["The mobile app uses Expo"]  # github.com/example/mobile, not the server's project
    refused = server.error("memory_read", {"id": mobile})
    assert mobile in refused and server.project in refused
    assert "example/mobile" not in refused and "memories/" not in refused
    assert "example/mobile" not in server.error("memory_forget", {"id": mobile})
    assert "example/mobile" not in server.error("memory_correct", {"id": mobile, "text": "Mobile builds use Xcode."})
    _, wide = server.ok("memory_read", {"id": mobile, "depth": 0, "all_projects": True})
    assert wide["id"] == mobile and not wide["trashed"]  # a wide search's hit can be read as widely
    _, named = server.ok("memory_read", {"id": mobile, "depth": 0, "project": "github.com/example/mobile"})
    assert named["id"] == mobile

    same = "The mobile app is React Native on Expo SDK 51; builds run on EAS."  # the mobile memory's text
    text, added = server.ok("memory_remember", {"text": same})
    assert added["created"] is True and added["id"] != mobile and added["project"] == server.project
    assert "example/mobile" not in text and "evidence" not in text
    _, found = server.ok("memory_search", {"query": "React Native Expo SDK EAS builds"})
    assert [hit["id"] for hit in found["hits"]][:1] == [added["id"]]


def test_remember_places_memories_in_the_current_project_or_global(server: Server) -> None:
    _, here = server.ok("memory_remember", {"text": "The webapp's cache is Redis 7."})
    assert (here["scope"], here["project"]) == ("project", server.project)
    assert here["path"].startswith("memories/projects/github.com-example-webapp/")
    _, view = server.ok("memory_read", {"id": here["id"]})
    assert view["metadata"]["scope"] == "project" and view["metadata"]["project"] == server.project

    text, everywhere = server.ok("memory_remember", {"text": "The user writes commit messages in English.",
                                                     "scope": "global"})
    assert (everywhere["scope"], everywhere["project"]) == ("global", None)
    assert everywhere["path"].startswith("memories/global/") and "in project" not in text
    _, profile = server.ok("memory_remember", {"text": "The user is based in Lisbon.", "type": "core-profile"})
    assert (profile["scope"], profile["project"]) == ("global", None) and profile["path"].startswith("profile/")


def test_correct_keeps_the_old_version_superseded(server: Server) -> None:
    _, old = server.ok("memory_remember", {"text": "The team uses pip-tools to pin dependencies."})
    text, new = server.ok("memory_correct", {"id": old["id"], "text": "The team uses uv to pin dependencies."})
    assert new["action"] == "corrected" and new["related"] == old["id"] and new["id"] != old["id"]
    assert text.startswith(f"Corrected {old['id']}: the new version is {new['id']}")

    old_text, old_view = server.ok("memory_read", {"id": old["id"]})
    assert old_view["metadata"]["lifecycle"] == "superseded" and f"(superseded by {new['id']})" in old_text
    _, found = server.ok("memory_search", {"query": "pin dependencies"})
    ids = [hit["id"] for hit in found["hits"]]
    assert new["id"] in ids and old["id"] not in ids
    assert "correct that one instead" in server.error("memory_correct", {"id": old["id"], "text": "again"})


def test_forget_moves_to_the_trash(server: Server) -> None:
    sentence = "The legacy reporting cron job runs at 03:00 UTC on the batch host."
    _, added = server.ok("memory_remember", {"text": sentence})
    text, gone = server.ok("memory_forget", {"id": added["id"]})
    assert gone["action"] == "forgotten" and gone["path"].startswith("trash/")
    assert text.startswith(f"Moved {added['id']} to the trash")

    read_text, view = server.ok("memory_read", {"id": added["id"], "depth": 0})
    assert view["trashed"] is True and "in the trash" in read_text
    search_text, found = server.ok("memory_search", {"query": "legacy reporting cron job batch host"})
    assert added["id"] not in [hit["id"] for hit in found["hits"]]
    assert [item["id"] for item in found["revivable"]] == [added["id"]]
    assert "In the trash but relevant" in search_text and added["id"] in search_text
    assert "already in the trash" in server.error("memory_forget", {"id": added["id"]})


def test_context_then_feedback_on_its_application(server: Server) -> None:
    fixtures = server.ids["Use pytest fixtures, not setUp"]
    text, manifest = server.ok("memory_context", {"task": "write tests for the login view",
                                                  "path": "tests/test_login.py"})
    assert manifest["project"] == server.project  # the repository the server was started in
    application = manifest["application"]
    assert application and application.startswith("e-")
    assert fixtures in [item["id"] for item in manifest["resident"]]
    assert text.startswith("<memory-context>") and "Use pytest fixtures, not setUp" in text
    assert f"application {application}" in text and "memory_feedback" in text and "memvault show" not in text

    text, feedback = server.ok("memory_feedback", {"id": fixtures, "outcome": "used-successfully",
                                                   "application": application})
    assert feedback["action"] == "recorded" and feedback["application"] == application
    assert feedback["applied"]["used-successfully"] == 1
    assert text.startswith(f"Recorded used-successfully for {fixtures}")
    _, twice = server.ok("memory_feedback", {"id": fixtures, "outcome": "used-successfully",
                                             "application": application})
    assert twice["action"] == "already-recorded"

    elsewhere = server.ids["The mobile app uses Expo"]
    assert application in server.error("memory_feedback", {"id": elsewhere, "outcome": "ignored",
                                                           "application": application})
    _, other = server.ok("memory_context", {"task": "build the mobile app", "project": "github.com/example/mobile",
                                            "record": False})
    assert other["application"] is None and other["project"] == "github.com/example/mobile"


def test_errors_are_tool_errors_and_the_server_keeps_answering(server: Server) -> None:
    unknown = "m-01zzzzzzzzzzzzzzzzzzzzzzzz"
    assert unknown in server.error("memory_read", {"id": unknown})
    assert "not a memory id" in server.error("memory_read", {"id": "../etc/passwd"})
    assert server.error("memory_read", {"id": server.ids["deploy"], "depth": 5}) == \
        "error: depth must be one of 0, 1, 2, got 5"
    assert "unknown outcome 'great'" in server.error("memory_feedback", {"id": server.ids["deploy"],
                                                                        "outcome": "great"})
    assert "unknown type 'bogus'" in server.error("memory_search", {"query": "x", "types": ["bogus"]})
    assert "limit must be from 1 to 100" in server.error("memory_search", {"query": "x", "limit": 0})
    assert server.error("memory_search", {"query": 42}) == "error: query must be a string, got 42"
    assert server.error("memory_remember", {}) == "error: text is required"
    assert server.error("memory_context", {"task": "   "}) == "error: task must not be empty"
    assert "unknown argument 'q'" in server.error("memory_search", {"q": "deploy"})
    assert "unknown tool 'memory_delete'" in server.error("memory_delete", {"id": unknown})

    _, found = server.ok("memory_search", {"query": "deploy to production"})
    assert found["hits"][0]["id"] == server.ids["deploy"]
    log = server.stderr()
    assert "Traceback" not in log and "memvault mcp: INFO: serving" in log


def test_report_timings(server: Server) -> None:
    """Not a check: prints how long the start and the calls took (see `pytest -s`)."""
    print("\nmemvault mcp timings: " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in server.timings.items()))


def test_sigterm_stops_the_server_with_stdin_open(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    root = tmp_path / "vault"
    memvault(env, "init", str(root))
    proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "mcp", "--vault", str(root)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "1"}}}
        proc.stdin.write((json.dumps(hello) + "\n").encode())
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "memvault"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert proc.stdout.read() == b""  # nothing but protocol messages on stdout
        log = proc.stderr.read().decode()
        assert "stopping (SIGTERM)" in log and "stopped" in log and "Traceback" not in log
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
