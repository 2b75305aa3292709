"""Claude Code's hooks end to end: ``memvault install`` into a private HOME, then every configured
hook command run exactly as the settings file says, with the JSON Claude Code sends on stdin.

Real subprocesses, the real model, real git checkouts for the projects, the transcript fixture
in Claude Code's own format (``tests/fixtures/agents``)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from vault_engine.agents.captured import CapturedKeys
from vault_engine.agents.hooks import MAX_INPUT
from vault_engine.agents.session import AgentSession
from vault_engine.captures import CaptureQueue
from vault_engine.locks import WriterLock
from vault_engine.vault import NewMemory, Vault

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"
SESSION = "4f1c2a9e-7b3d-4e8a-9c21-5d6e7f809a1b"
API_DEPLOY = "Deploys of the api go through the blue-green pipeline; never deploy on Fridays."
WEB_DEPLOY = "Deploys of the web app go through Netlify preview builds, promoted by hand."
RELEASE_NOTES = "Release notes are written in docs/CHANGELOG.md, newest entry first, one line per change."
PROFILE = "The user prefers short answers that show the code first."
SECRETS = ("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")


@dataclass
class Setup:
    home: Path
    vault: Path
    api: Path  # a checkout of github.com/acme/api
    web: Path  # a checkout of github.com/acme/web
    ids: dict[str, str]
    hooks: dict[str, str]  # event -> the command the settings file holds

    def run(self, event: str, data: dict[str, Any] | str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """Run the configured hook command as Claude Code does: through a shell, JSON on stdin."""
        stdin = data if isinstance(data, str) else json.dumps(data)
        return subprocess.run(self.hooks[event], shell=True, input=stdin, capture_output=True, text=True,
                              cwd=cwd or self.api, env=os.environ.copy(), timeout=120)

    def settled(self) -> None:
        """Wait until the capture worker the hooks started has stored every queued request."""
        wait_for_captures(self.vault)

    def hook_input(self, event: str, transcript: Path | None = None, cwd: Path | None = None,
                   **fields: Any) -> dict[str, Any]:
        return {"session_id": SESSION, "transcript_path": str(transcript or self.home / "none.jsonl"),
                "cwd": str(cwd or self.api), "permission_mode": "default", "hook_event_name": event, **fields}

    def context_of(self, done: subprocess.CompletedProcess[str], event: str) -> str:
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        if not done.stdout:
            return ""
        answer = json.loads(done.stdout)
        assert set(answer) == {"hookSpecificOutput"}
        out = answer["hookSpecificOutput"]
        assert set(out) == {"hookEventName", "additionalContext"} and out["hookEventName"] == event
        assert isinstance(out["additionalContext"], str) and 0 < len(out["additionalContext"]) <= 10_000
        return str(out["additionalContext"])

    def state(self) -> AgentSession:
        return AgentSession.load(self.vault, f"claude-code-{SESSION}")


def wait_for_captures(vault: Path, timeout: float = 120) -> None:
    """Poll until no capture is queued (or failed) and no worker drains; the worker runs in the background."""
    queue, lock = CaptureQueue(vault), vault / ".memvault" / "captures" / "drain.lock"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not queue.requests() and not WriterLock(lock, 0).held():
            return
        time.sleep(0.1)
    raise AssertionError(f"captures still queued after {timeout}s: {queue.requests()}")


def memvault(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "vault_engine", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def setup(tmp_path: Path, isolated_env: Path, make_vault: Callable[..., Vault],
          make_checkout: Callable[..., Path]) -> Setup:
    api = make_checkout(tmp_path / "api", "git@github.com:acme/api.git")
    web = make_checkout(tmp_path / "web", "https://github.com/acme/web.git")
    vault = Vault(make_vault().root, auto_sync=True)
    ids = {
        "api": vault.add(NewMemory(API_DEPLOY, title="Api deploy rule", project="github.com/acme/api")).id,
        "web": vault.add(NewMemory(WEB_DEPLOY, title="Web deploy rule", project="github.com/acme/web")).id,
        "notes": vault.add(NewMemory(RELEASE_NOTES, title="Where release notes go", scope="global")).id,
        "profile": vault.add(NewMemory(PROFILE, title="Short answers", type="core-profile")).id,
    }
    done = memvault("--vault", str(vault.root), "install", "claude-code", cwd=api)
    assert "created" in done.stdout
    settings = json.loads((isolated_env / ".claude" / "settings.json").read_text())
    hooks = {event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()}
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"}
    return Setup(isolated_env, vault.root, api, web, ids, hooks)


def transcript_in(folder: Path, extra: int = 0) -> Path:
    """The fixture transcript (with ``extra`` more turns at its end) as a session file in ``folder``."""
    lines = (FIXTURES / "claude_code_transcript.jsonl").read_text().splitlines()
    for n in range(extra):
        kind = "user" if n % 2 == 0 else "assistant"
        message: dict[str, Any] = {"role": kind, "content": f"Follow-up number {n}: the flaky test {n} is fixed."}
        if kind == "assistant":
            message = {"id": f"msg_extra{n}", "type": "message", "role": "assistant",
                       "content": [{"type": "text", "text": f"Follow-up number {n}: confirmed, test {n} passes."}]}
        lines.append(json.dumps({"type": kind, "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"extra{n}")),
                                 "sessionId": SESSION, "cwd": "/tmp/project-a", "isSidechain": False,
                                 "timestamp": f"2026-05-04T10:0{n}:00.000Z", "message": message}))
    path = folder / f"{SESSION}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def episode_bodies(vault: Path) -> str:
    """The bodies (every turn, verbatim) of the vault's episodes, in file order."""
    out = []
    for path in sorted((vault / "episodes").rglob("*.md")):
        _, head, body = path.read_text().split("---\n", 2)
        if "type: episode" in head:
            out.append(body)
    return "\n".join(out)


def test_session_start_gives_the_projects_memories_and_never_another_projects(setup: Setup) -> None:
    text = setup.context_of(setup.run("SessionStart", setup.hook_input("SessionStart", source="startup")),
                            "SessionStart")
    assert setup.ids["profile"] in text and PROFILE in text  # resident: in full
    assert setup.ids["api"] in text and "why:" in text
    assert setup.ids["web"] not in text and "Netlify" not in text
    assert set(setup.state().delivered) >= {setup.ids["profile"], setup.ids["api"]}
    # From the other checkout the same session start names that project's memory instead.
    other = setup.context_of(setup.run("SessionStart", {**setup.hook_input("SessionStart", cwd=setup.web),
                                                        "session_id": "other-session"}, cwd=setup.web),
                             "SessionStart")
    assert setup.ids["web"] in other and setup.ids["api"] not in other


def test_a_session_start_after_the_first_loads_no_model_and_gives_the_same_context(setup: Setup) -> None:
    """The session's task is the same every time: its vector, kept in the embedding cache by the first
    session start, is read back by the next one, which then loads no model (and runs no server)."""
    probe = ("import json, sys\nfrom vault_engine.agents import hooks\n"
             "out = hooks.run('claude-code', 'SessionStart', sys.stdin.read(), sys.argv[1])\n"
             "print(json.dumps([out, 'onnxruntime' in sys.modules]))")

    def session_start(session: str) -> tuple[str, bool]:
        data = {**setup.hook_input("SessionStart", source="startup"), "session_id": session}
        done = subprocess.run([sys.executable, "-c", probe, str(setup.vault)], input=json.dumps(data),
                              capture_output=True, text=True, cwd=setup.api, timeout=120, check=True)
        out, loaded = json.loads(done.stdout)
        context = str(json.loads(out)["hookSpecificOutput"]["additionalContext"])
        return re.sub(r"\bapplication\W+\S+", "", context), loaded  # the application id is new each time

    first, loaded_first = session_start("first-session")
    second, loaded_second = session_start("second-session")
    assert loaded_first and not loaded_second
    assert setup.ids["api"] in second and second == first


def test_a_cold_prompt_is_embedded_by_a_child_and_answered_as_this_process_would(setup: Setup) -> None:
    """With no server, the prompt's vector comes from a child forked while the hook opens the vault
    (``index/prefetch.py``): the hook itself loads no model, and answers exactly what it answers when
    it embeds the prompt itself; the child's vector is the in-process one, bit for bit."""
    probe = textwrap.dedent("""
        import json, sys
        from vault_engine.agents import hooks
        from vault_engine.index import prefetch
        if sys.argv[2] == "in-process":
            prefetch.QueryPrefetch.start = classmethod(lambda cls, root, text, compute=None: None)
        out = hooks.run("claude-code", "UserPromptSubmit", sys.stdin.read(), sys.argv[1])
        print(json.dumps([out, "onnxruntime" in sys.modules, "tokenizers" in sys.modules]))
    """)
    env = {**os.environ, "MEMVAULT_SERVER_WARM_MINUTES": "0"}  # no warm server: every run is cold

    def prompt(session: str, how: str) -> tuple[str, bool, bool]:
        data = {**setup.hook_input("UserPromptSubmit", prompt="Where do the release notes go?"),
                "session_id": session}
        done = subprocess.run([sys.executable, "-c", probe, str(setup.vault), how], input=json.dumps(data),
                              capture_output=True, text=True, cwd=setup.api, timeout=120, env=env, check=True)
        out, onnxruntime, tokenizers = json.loads(done.stdout)
        return str(out), bool(onnxruntime), bool(tokenizers)

    prefetched, loaded, tokenized = prompt("prefetched", "prefetch")
    itself, loaded_itself, _ = prompt("in-process", "in-process")
    assert setup.ids["notes"] in prefetched
    assert prefetched == itself
    assert not loaded and not tokenized  # the child loaded the model, not the hook
    assert loaded_itself

    same = textwrap.dedent("""
        import sys
        import numpy as np
        from pathlib import Path
        from vault_engine.index.prefetch import QueryPrefetch
        from vault_engine.vault import Vault
        text = "Where do the release notes go?"
        child = QueryPrefetch.start(Path(sys.argv[1]), text)
        vault = Vault.open(Path(sys.argv[1]))
        vector = child.take(text, vault.embedder().name)
        print(vector is not None and bool(np.array_equal(vector, vault.embedder().embed([text])[0])))
    """)
    done = subprocess.run([sys.executable, "-c", same, str(setup.vault)], capture_output=True, text=True,
                          cwd=setup.api, timeout=120, env=env, check=True)
    assert done.stdout.strip() == "True"


def test_a_prompt_gets_what_it_makes_relevant_once_and_nothing_when_nothing_is(setup: Setup) -> None:
    setup.run("SessionStart", setup.hook_input("SessionStart", source="startup"))
    prompt = setup.hook_input("UserPromptSubmit", prompt="Where do the release notes go, and how do we deploy?")
    text = setup.context_of(setup.run("UserPromptSubmit", prompt), "UserPromptSubmit")
    assert setup.ids["notes"] in text  # relevant and not given at the start
    assert setup.ids["api"] not in text  # given at the start already
    assert setup.ids["web"] not in text  # another project's
    assert len(text) <= 1500
    # Asked again, the session already has it: nothing.
    assert setup.context_of(setup.run("UserPromptSubmit", prompt), "UserPromptSubmit") == ""
    unrelated = setup.hook_input("UserPromptSubmit", prompt="write a haiku about green tea")
    done = setup.run("UserPromptSubmit", {**unrelated, "session_id": "fresh-session"})
    assert done.returncode == 0 and done.stdout == ""
    # A compaction empties the model's context: the next session start gives everything again.
    again = setup.context_of(setup.run("SessionStart", setup.hook_input("SessionStart", source="compact")),
                             "SessionStart")
    assert setup.ids["api"] in again
    assert setup.ids["notes"] not in setup.state().delivered


def test_capture_stores_each_turn_once_as_episodes_of_the_project_with_secrets_redacted(
        setup: Setup, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    transcript = transcript_in(folder)
    assert setup.run("PreCompact", setup.hook_input("PreCompact", transcript, trigger="auto")).stdout == ""
    done = setup.run("SessionEnd", setup.hook_input("SessionEnd", transcript, reason="prompt_input_exit"))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    setup.settled()  # stored by the worker SessionEnd started, not by the hook
    episodes = sorted((setup.vault / "episodes" / "projects" / "github.com-acme-api").glob("*.md"))
    assert episodes, "no episode stored under the project"
    first = episode_bodies(setup.vault)
    assert first.count("The retry test in tests/test_client.py is flaky on CI") == 1
    assert "[tool Bash: python -m pytest tests/test_client.py -q -p no:randomly]" in first
    assert "Locating" not in first  # no reasoning
    # The long Read output is kept as a document of the project, and the turn names it.
    kept = first.split("[output of Read kept as ")[1].split(",")[0]
    document = Vault(setup.vault).find(kept).memory
    assert document.type == "document" and document.project == "github.com/acme/api"
    recorded = CapturedKeys(setup.vault).count()
    # Run again, then on the same session five turns longer: only the five are new.
    setup.run("SessionEnd", setup.hook_input("SessionEnd", transcript, reason="other"))
    setup.settled()
    assert episode_bodies(setup.vault) == first
    longer = transcript_in(folder, extra=5)
    setup.run("PreCompact", setup.hook_input("PreCompact", longer, trigger="manual"))
    setup.run("SessionEnd", setup.hook_input("SessionEnd", longer, reason="other"))
    setup.settled()
    after = episode_bodies(setup.vault)
    assert after.count("The retry test in tests/test_client.py is flaky on CI") == 1
    for n in range(5):
        assert after.count(f"Follow-up number {n}:") == 1
    assert recorded < CapturedKeys(setup.vault).count()  # the vault's record of stored messages grew
    # No secret reached any file: memories, journal, buffers, indexes.
    for path in setup.vault.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(secret.encode() in data for secret in SECRETS), path


def test_a_hook_never_fails_the_agent(setup: Setup) -> None:
    log = setup.vault / ".memvault" / "hooks.log"
    for event, stdin in (("UserPromptSubmit", "{not json"), ("SessionStart", "[]"), ("PreCompact", ""),
                         ("SessionEnd", json.dumps(setup.hook_input("SessionEnd", setup.home / "missing.jsonl")))):
        done = setup.run(event, stdin)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    lines = log.read_text().splitlines()
    assert len(lines) == 4 and "SessionEnd" in lines[-1] and "missing.jsonl" in lines[-1]
    # A prompt past the bound (the installed command, the real stdin): one line, no answer, no part read.
    huge = json.dumps(setup.hook_input("UserPromptSubmit", prompt="deploy " * (MAX_INPUT // 7 + 1)))
    done = setup.run("UserPromptSubmit", huge)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert log.read_text().splitlines()[-1].endswith(f"larger than {MAX_INPUT:,} bytes; nothing was read from it")


def test_uninstall_takes_everything_back(setup: Setup) -> None:
    done = memvault("--vault", str(setup.vault), "install", "claude-code", "--uninstall", cwd=setup.api)
    assert "removed" in done.stdout
    assert not (setup.home / ".claude" / "settings.json").exists()
    assert not (setup.home / ".claude.json").exists()
    again = memvault("--vault", str(setup.vault), "install", "claude-code", "--dry-run", cwd=setup.api)
    assert "+++ " in again.stdout and not (setup.home / ".claude" / "settings.json").exists()


@pytest.fixture
def served(setup: Setup) -> Iterator[subprocess.Popen[str]]:
    """``memvault serve`` of the vault, running."""
    proc = subprocess.Popen([sys.executable, "-m", "vault_engine", "--vault", str(setup.vault), "serve", "--port", "0",
                             "--no-watch"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=setup.home)
    try:
        wait_for_serve_file(setup.vault, proc)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def wait_for_serve_file(vault: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not (vault / ".memvault" / "serve.json").exists():
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.1)


def test_hooks_ask_a_running_server(setup: Setup, served: subprocess.Popen[str]) -> None:
    prompt = setup.hook_input("UserPromptSubmit", prompt="Where do the release notes go?")
    text = setup.context_of(setup.run("UserPromptSubmit", prompt), "UserPromptSubmit")
    assert setup.ids["notes"] in text and setup.state().answered_by == "server"
    start = setup.context_of(setup.run("SessionStart", setup.hook_input("SessionStart", source="resume")),
                             "SessionStart")
    assert setup.ids["api"] in start and setup.ids["web"] not in start and setup.state().answered_by == "server"


def test_a_running_server_answers_from_a_file_written_by_hand_a_moment_before(
        setup: Setup, served: subprocess.Popen[str]) -> None:
    """The server walks the files only after the kernel reported a change (index/change_feed.py): a note
    written by hand just before the prompt is in the answer, with no watcher running."""
    first = setup.hook_input("UserPromptSubmit", prompt="Where do the release notes go?")
    setup.context_of(setup.run("UserPromptSubmit", first), "UserPromptSubmit")  # warm, and walked once
    note = setup.vault / "memories" / "global" / "harbour-ferry.md"
    note.write_text("# Harbour ferry timetable\n\nThe harbour ferry leaves pier seven every forty minutes.\n",
                    encoding="utf-8")
    prompt = setup.hook_input("UserPromptSubmit", prompt="When does the harbour ferry leave pier seven?")
    text = setup.context_of(setup.run("UserPromptSubmit", prompt), "UserPromptSubmit")
    assert "Harbour ferry timetable" in text and setup.state().answered_by == "server"


def test_a_server_that_is_gone_is_not_waited_for(setup: Setup) -> None:
    (setup.vault / ".memvault").mkdir(exist_ok=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (setup.vault / ".memvault" / "serve.json").write_text(json.dumps(
        {"version": 1, "host": "127.0.0.1", "port": 9, "token": "x", "pid": int(dead.stdout)}))
    prompt = setup.hook_input("UserPromptSubmit", prompt="Where do the release notes go?")
    text = setup.context_of(setup.run("UserPromptSubmit", prompt), "UserPromptSubmit")
    assert setup.ids["notes"] in text and setup.state().answered_by == "process"


def test_the_mcp_server_the_agent_starts_answers_the_hooks(setup: Setup) -> None:
    """Once loaded: it answers initialize and tools/list before it loads (mcp_handshake), and loads for the
    first request those answers do not cover, such as a tool call."""
    server = json.loads((setup.home / ".claude.json").read_text())["mcpServers"]["memvault"]
    proc = subprocess.Popen([server["command"], *server["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=setup.api)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "test", "version": "1"}}},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "memory_search", "arguments": {"query": "release notes"}}}):
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                assert '"result"' in proc.stdout.readline()
        wait_for_serve_file(setup.vault, proc)
        prompt = setup.hook_input("UserPromptSubmit", prompt="Where do the release notes go?")
        assert setup.ids["notes"] in setup.context_of(setup.run("UserPromptSubmit", prompt), "UserPromptSubmit")
        assert setup.state().answered_by == "server"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # the client is gone: the server stops and takes its serve.json with it
        proc.wait(30)
    assert not (setup.vault / ".memvault" / "serve.json").exists()


def test_old_sessions_are_imported_in_bulk_once(setup: Setup, tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-tmp-project-a"
    folder.mkdir(parents=True)
    transcript = transcript_in(folder)
    rollout = FIXTURES / "codex_rollout.jsonl"
    done = memvault("--vault", str(setup.vault), "ingest", "--format", "claude-code", str(transcript),
                    "--project", "github.com/acme/api", cwd=setup.home)
    assert done.stdout.startswith("1 sessions read, 16 new messages")
    again = memvault("--vault", str(setup.vault), "ingest", "--format", "claude-code", str(transcript), cwd=setup.home)
    assert again.stdout.startswith("1 sessions read, 0 new messages, 0 episodes")
    codex = memvault("--vault", str(setup.vault), "--json", "ingest", "--format", "codex", str(rollout), cwd=setup.home)
    result = json.loads(codex.stdout)["files"][0]
    assert result["project"] is None and result["new_messages"] == 8  # its folder is not on this machine
    bad = subprocess.run([sys.executable, "-m", "vault_engine", "--vault", str(setup.vault), "ingest", "--format",
                          "claude-code", str(tmp_path / "nope.jsonl"), str(transcript)],
                         capture_output=True, text=True, cwd=setup.home, timeout=120)
    assert bad.returncode == 1 and bad.stdout.startswith("1 sessions read, 0 new messages")
    assert bad.stderr.strip().splitlines() == [f"error: {tmp_path / 'nope.jsonl'}: cannot read file: "
                                               "No such file or directory"]


def test_the_hook_command_line_is_what_install_wrote(setup: Setup) -> None:
    command = shlex.split(setup.hooks["UserPromptSubmit"])
    assert command[:3] == [sys.executable, "-m", "vault_engine"]
    assert command[3:] == ["--vault", str(setup.vault), "hook", "claude-code", "UserPromptSubmit"]


def test_project_scope_hooks_run_from_the_projects_own_settings(tmp_path: Path, isolated_env: Path,
                                                               make_vault: Callable[..., Vault],
                                                               make_checkout: Callable[..., Path]) -> None:
    api = make_checkout(tmp_path / "api", "git@github.com:acme/api.git")
    vault = Vault(make_vault().root, auto_sync=True)
    wanted = vault.add(NewMemory(API_DEPLOY, title="Api deploy rule", project="github.com/acme/api")).id
    memvault("--vault", str(vault.root), "install", "claude-code", "--scope", "project", cwd=api)
    assert not (isolated_env / ".claude").exists()
    settings = json.loads((api / ".claude" / "settings.json").read_text())
    assert json.loads((api / ".mcp.json").read_text())["mcpServers"]["memvault"]["args"][-1] == "mcp"
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command == "memvault hook claude-code SessionStart"  # from PATH; the vault is found where it runs
    env = {**os.environ, "MEMVAULT_DIR": str(vault.root),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(command, shell=True, capture_output=True, text=True, cwd=api, timeout=120, env=env,
                          input=json.dumps({"session_id": "p1", "cwd": str(api), "hook_event_name": "SessionStart",
                                            "source": "startup", "transcript_path": str(tmp_path / "t.jsonl")}))
    assert done.returncode == 0 and wanted in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def test_codex_install_and_uninstall_through_the_command(tmp_path: Path, isolated_env: Path,
                                                         make_vault: Callable[..., Vault],
                                                         make_checkout: Callable[..., Path]) -> None:
    api = make_checkout(tmp_path / "api", "git@github.com:acme/api.git")
    vault = Vault(make_vault().root, auto_sync=True)
    wanted = vault.add(NewMemory(API_DEPLOY, title="Api deploy rule", project="github.com/acme/api",
                                 paths=("deploy/**",))).id
    codex_home = tmp_path / "codex"
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    run = [sys.executable, "-m", "vault_engine", "--vault", str(vault.root), "install", "codex"]
    done = subprocess.run(run, capture_output=True, text=True, cwd=api, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    import tomllib

    server = tomllib.loads((codex_home / "config.toml").read_text())["mcp_servers"]["memvault"]
    assert server["args"][-3:] == ["--vault", str(vault.root), "mcp"]
    assert wanted in (api / "AGENTS.md").read_text()
    undone = subprocess.run([*run, "--uninstall"], capture_output=True, text=True, cwd=api, env=env, timeout=120)
    assert undone.returncode == 0 and not (api / "AGENTS.md").exists()
    assert not (codex_home / "config.toml").exists()
