"""``memvault hook AGENT EVENT``: memory in an agent's lifecycle, without anyone calling a tool.

Every agent's hook goes through its adapter (:mod:`.adapter`): the agent's module parses
its stdin into the common input and renders the answer the way the agent reads it; the
agent's event names are mapped onto memvault's four actions, named as Claude Code's events:

- ``SessionStart`` (startup, resume, clear, compact): the context manifest for the
  project of the session's folder (its git repository, as ``memvault project``
  names it, plus the global memories): the resident core profile and standing
  rules in full, then an index of what may apply, with ids and why each applies;
- ``UserPromptSubmit``: the memories the prompt makes relevant that the session
  was not given yet, above the relevance floor, in at most
  :data:`PROMPT_BUDGET` characters; nothing at all when nothing is relevant;
- ``PreCompact`` and ``SessionEnd``: the transcript's new messages stored as
  episodes of the project (:mod:`.capture`) by a background worker the hook
  starts (:mod:`vault_engine.captures`); SessionEnd closes the session.

A hook never stands in the agent's way: whatever fails (bad input, a missing
transcript, a busy vault), it prints nothing, exits 0, and writes one line to
``.memvault/hooks.log`` (``~/.memvault/hooks.log`` when no vault is found).

Speed: a hook runs on every prompt.  When a server of the vault is running
(``memvault serve``, ``memvault mcp``, which the agent starts, or the warm server
a hook starts, :mod:`.warm`), the question goes to it over loopback HTTP, where
the model and indexes are warm; this module and what it imports on that path
load no model, index or click, and :func:`fast_path` answers before the command
line is even loaded.  Otherwise the vault is opened in this process (and a warm
server is started for the next hooks); a prompt's vector is computed meanwhile by a
child process the hook forks first (:mod:`vault_engine.index.prefetch`), so the
model's load does not add to the hook's time.  PreCompact and SessionEnd only queue the
capture and start a worker for it (:mod:`vault_engine.captures`); they open no vault.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import location
from ..config import Environment, environment
from ..format.text import printable
from ..limits import MAX_DOCUMENT
from . import claude_code, codex, copilot, cursor, gemini, opencode
from .adapter import CONTEXT_ACTIONS, Adapter, HookInput
from .backend import Answers, LocalVault, ServedVault, Unavailable
from .session import AgentSession, session_name

if TYPE_CHECKING:
    from ..index.prefetch import QueryPrefetch
    from ..vault import Vault

_ADAPTERS: tuple[Adapter, ...] = (claude_code, codex, gemini, cursor, opencode, copilot)
AGENTS: dict[str, Adapter] = {adapter.AGENT: adapter for adapter in _ADAPTERS}
PROMPT_BUDGET = 1500  # characters a prompt's memories may take
PROMPT_LIMIT = 5  # hits a prompt's search asks for
SUMMARY_CHARS = 240  # of each memory shown for a prompt
SESSION_TASK = "Work on this project"  # the task the session-start manifest is built for
MAX_INPUT = 4 * MAX_DOCUMENT  # bytes of a hook's stdin: a prompt as long as a document, in UTF-8
LOG_FILE = ".memvault/hooks.log"
LOG_MAX_BYTES = 1 << 20  # past this the log is rotated to hooks.log.1


def fast_path(argv: list[str]) -> bool:
    """Answer ``[--vault DIR] hook AGENT EVENT`` (the form ``memvault install`` writes) without the
    command line; False for anything else, which the command line then parses."""
    args = list(argv)
    vault: str | None = None
    if len(args) >= 2 and args[0] == "--vault":
        vault, args = args[1], args[2:]
    elif args and args[0].startswith("--vault="):
        vault, args = args[0].partition("=")[2], args[1:]
    if len(args) != 3 or args[0] != "hook" or args[1] not in AGENTS or args[2] not in AGENTS[args[1]].EVENTS:
        return False
    try:
        stdin, oversized = read_input(sys.stdin.buffer)
    except (OSError, ValueError):
        stdin, oversized = "", False
    sys.stdout.write(run(args[1], args[2], stdin, vault, oversized=oversized))
    sys.stdout.flush()
    return True


def read_input(stream: BinaryIO) -> tuple[str, bool]:
    """A hook's stdin as text, read up to :data:`MAX_INPUT` bytes; and whether there was more (then
    the text is empty: the hook answers nothing rather than a part of what the agent sent)."""
    data = stream.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        return "", True
    return data.decode("utf-8", errors="replace"), False


def run(agent: str, event: str, stdin: str, vault: str | None = None,
        environ: Mapping[str, str] | None = None, *, oversized: bool = False) -> str:
    """What the hook prints for ``event``; never raises (a failure is logged and answered with nothing).
    ``oversized``: the agent sent more than :data:`MAX_INPUT` bytes (see :func:`read_input`)."""
    env = environment(environ)
    root: Path | None = None
    try:
        root = find_vault(vault, env, Path.cwd())  # first, so that bad input is logged in the vault
        adapter = AGENTS.get(agent)
        if adapter is None or event not in adapter.EVENTS:
            raise ValueError(f"unknown hook {agent} {event}")
        if oversized:
            raise ValueError(f"the hook's input is larger than {MAX_INPUT:,} bytes; nothing was read from it")
        hook = adapter.parse(stdin, event)
        cwd = Path(hook.cwd) if hook.cwd else Path.cwd()
        root = find_vault(vault, env, cwd) or root
        answer = adapter.answer(event, _handle(agent, hook, vault, root, cwd))
        if root is not None and hook.event in CONTEXT_ACTIONS:
            from ..captures import kick  # imported once answered: a prompt's child starts sooner

            kick(root)  # captures a worker left for later (a back-off, a crash) go on now
        return answer
    except Exception as exc:  # a hook never stands in the agent's way
        log(root, env, f"{agent} {event}: {type(exc).__name__}: {_one_line(exc)}")
        return ""


def _handle(agent: str, hook: HookInput, vault: str | None, root: Path | None, cwd: Path) -> str:
    if hook.event in ("PreCompact", "SessionEnd"):
        _capture(agent, hook, vault, root, cwd)
        return ""
    name = session_name(agent, hook.session_id)
    # A prompt is embedded by a child while this process opens the vault (when no server answers):
    # started before anything else is imported.
    opened = _Opened(vault, root, prefetch=hook.prompt if hook.event == "UserPromptSubmit" else None)
    from ..context.project import current_project

    try:
        project = current_project(cwd, opened.root)
        state = AgentSession.load(opened.root, name)
        state.project = project
        if hook.event == "SessionStart":
            text, ids = session_start(opened.answers(), project)
            if hook.source in ("clear", "compact"):
                state.delivered = []  # the model's context was emptied: what it was given is gone
        else:
            text, ids = prompt_memories(opened.answers(), hook.prompt or "", project, set(state.delivered))
    finally:
        opened.close()
    state.deliver(ids)
    state.answered_by = opened.via
    state.save(opened.root)
    return text


def session_start(answers: Answers, project: str | None) -> tuple[str, list[str]]:
    """The session-start context (the manifest's markdown) and the ids it gives."""
    manifest = answers.context(SESSION_TASK, project, None)
    ids = [r["id"] for r in manifest.get("resident", [])] + [m["id"] for m in manifest.get("manifest", [])]
    return (str(manifest.get("markdown") or "") if ids else ""), ids


def prompt_memories(answers: Answers, prompt: str, project: str | None,
                    delivered: set[str]) -> tuple[str, list[str]]:
    """The memories ``prompt`` makes relevant that were not delivered yet, within :data:`PROMPT_BUDGET`."""
    if not prompt.strip():
        return "", []
    found = answers.search(prompt, project, PROMPT_LIMIT)
    from ..context.quoting import PREAMBLE

    head = ("<memory-context>\n" + PREAMBLE
            + "Memories relevant to this prompt (open one with `memvault show ID --depth 2`):\n")
    foot = "</memory-context>\n"
    lines: list[str] = []
    ids: list[str] = []
    used = len(head) + len(foot)
    for hit in found.get("hits", []):
        if hit.get("weak") or hit.get("id") in delivered:
            continue
        line = _hit_line(hit)
        if used + len(line) > PROMPT_BUDGET:
            break
        lines.append(line)
        ids.append(str(hit["id"]))
        used += len(line)
    return (printable(head + "".join(lines) + foot) if lines else ""), ids  # no escape sequence runs


def _hit_line(hit: dict[str, Any]) -> str:
    """One memory as a line of the block; its text quoted as data (:mod:`..context.quoting`)."""
    from ..context.quoting import inline

    summary = " ".join(str(hit.get("summary") or hit.get("trigger") or "").split())
    if len(summary) > SUMMARY_CHARS:
        summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
    why = [f"relevant to the prompt (evidence {float(hit.get('evidence') or 0):.2f})"]
    if hit.get("project"):
        why.append(f"project {hit['project']}")
    why += [f"conflicts with {other}" for other in hit.get("conflicts") or []]
    title = inline(str(hit.get("title", "")))
    return (f"- `{inline(str(hit['id']))}` **{title}**" + (f": {inline(summary)}" if summary else "")
            + f" _(why: {inline('; '.join(why))})_\n")


class _Opened:
    """The vault's answers: its running server's when there is one, else this process's."""

    def __init__(self, vault: str | None, root: Path | None, prefetch: str | None = None):
        self._local: Any = None
        self._prefetch: QueryPrefetch | None = None
        if root is None:  # no vault yet: open (and so create) the one the command line would
            self._local = _open_vault(Path(vault) if vault else None)
            root = self._local.root
        self.root: Path = root
        self._served = ServedVault.find(root)
        self.via = "process"  # who answered last: "server" or "process"
        if self._served is None:  # this hook loads the model; the next ones ask a warm server
            if prefetch:
                from ..index.prefetch import QueryPrefetch

                self._prefetch = QueryPrefetch.start(root, prefetch)
            from . import warm

            idle = warm.warm_seconds(root)
            if idle > 0:
                warm.start(root, idle)

    def local(self) -> LocalVault:
        """The vault opened in this process (opened on first use)."""
        if self._local is None:
            self._local = _open_vault(self.root)
            if self._prefetch is not None:
                self._local.take_vector_from(self._prefetch)
        return LocalVault(self._local)

    def answers(self) -> Answers:
        return self.local() if self._served is None else _Fallback(self._served, self)

    def close(self) -> None:
        """Stop a prefetch whose vector was not taken (the answer came from elsewhere)."""
        if self._prefetch is not None:
            self._prefetch.close()


def _open_vault(path: Path | None) -> Vault:
    from ..vault import Vault

    return Vault.open(path)


class _Fallback:
    """The server's answers; this process's when the server cannot answer."""

    def __init__(self, served: ServedVault, opened: _Opened):
        self.served, self.opened = served, opened

    def _ask(self, question: str, *args: Any) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = getattr(self.served, question)(*args)
        except Unavailable:
            return dict(getattr(self.opened.local(), question)(*args))
        self.opened.via = "server"
        return answer

    def context(self, task: str, project: str | None, budget: int | None) -> dict[str, Any]:
        return self._ask("context", task, project, budget)

    def search(self, query: str, project: str | None, limit: int) -> dict[str, Any]:
        return self._ask("search", query, project, limit)


def _capture(agent: str, hook: HookInput, vault: str | None, root: Path | None, cwd: Path) -> None:
    """Queue the capture and start a worker for it (:mod:`vault_engine.captures`): the agent does not wait for the
    model."""
    if not hook.transcript_path:
        raise ValueError("hook input has no transcript_path")
    transcript = Path(hook.transcript_path).expanduser()
    if not transcript.is_file():  # said now, in the hook's log, rather than by the worker's retries
        # (a stat, which never blocks: a FIFO or a device is not opened here, and the worker refuses one too)
        raise FileNotFoundError(f"transcript {transcript} " + ("is not a regular file" if transcript.exists()
                                                               else "does not exist"))
    if root is None:  # no vault yet: create the one the command line would
        root = _open_vault(Path(vault) if vault else None).root
    from ..captures import CaptureQueue, start_worker

    queue = CaptureQueue(root)
    if getattr(AGENTS[agent], "TRANSIENT_TRANSCRIPT", False):  # gone once the hook returns: the worker reads a copy
        from .messages import read_regular

        # a regular file only, and no more than a transcript may hold
        transcript = queue.keep_transcript(agent, hook.session_id, read_regular(transcript))
    queue.put(agent, hook.session_id, str(transcript), str(cwd), hook.event)
    start_worker(root)


# ---------------------------------------------------------------- finding the vault, logging


def find_vault(explicit: str | None, env: Environment, cwd: Path) -> Path | None:
    """The vault the command line would open (``--vault``, ``MEMVAULT_DIR``, a vault above ``cwd``,
    the default vault), found without opening it; None when it is not there yet."""
    return location.find(Path(explicit) if explicit else None, env, cwd)


def log(root: Path | None, env: Environment, line: str) -> None:
    """Append one line to the hooks' log (rotated past :data:`LOG_MAX_BYTES`); never raises."""
    try:
        base = root if root is not None else Path(env.home or Path.home()) / ".memvault" / "vault"
        path = base / LOG_FILE if root is not None else base.parent / "hooks.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        from ..format.redact import redact  # an error may quote what the agent sent

        with path.open("a", encoding="utf-8") as out:
            out.write(f"{stamp} {redact(line)}\n")
    except Exception:  # logging must not make a hook fail
        pass


def _one_line(exc: BaseException) -> str:
    one_line = getattr(exc, "one_line", None)
    text = one_line() if callable(one_line) else str(exc)
    return " ".join(str(text).split())[:500]
