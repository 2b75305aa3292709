"""The capture worker: what ``memvault drain-captures`` does with the queue of :mod:`vault_engine.captures`.

Kept apart from the queue: it opens the vault, reads transcripts and may ask the language model,
while the queue is read by every hook and by ``memvault status``, which load none of that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..captures import CaptureQueue, CaptureRequest, DrainReport, Permanent


def drain_vault(root: Path | None) -> DrainReport:
    """The worker's work (``memvault drain-captures``): open the vault and capture every ready request.

    Each request's transcript is read as its agent writes it; its project is that of the folder the
    session ran in (global when the folder is gone).  A request that was deferred goes on with the
    buffered turns even when the transcript has nothing new.  Errors go to ``.memvault/hooks.log``.
    """
    from ..config import environment
    from ..errors import IngestDeferred, InvalidInput
    from ..vault import Vault
    from .hooks import log
    from .session import session_name

    vault = Vault.open(root, auto_sync=True)
    llm: Any = None

    def run(request: CaptureRequest) -> None:
        nonlocal llm
        from ..context.project import current_project
        from ..ingest.conversation import ingest
        from .capture import capture, read_transcript

        if llm is None:
            llm = vault.llm()  # the language model's client only once a request is there
        try:
            transcript = read_transcript(request.agent, Path(request.transcript_path).expanduser())
        except InvalidInput as exc:
            if not Path(request.transcript_path).expanduser().exists():
                raise  # gone for now (a network folder): tried again
            raise Permanent(exc.one_line()) from None
        cwd = Path(request.cwd) if request.cwd else None
        project = current_project(cwd, vault.root) if cwd is not None and cwd.is_dir() else None
        name = session_name(request.agent, request.session_id)
        result = capture(vault, transcript, name=name, project=project, flush=request.flush, llm=llm)
        if request.deferred and result.ingest is None:  # nothing new, but a compaction still owed
            ingest(vault, [], session=name, llm=llm, flush=request.flush, project=project)

    env = environment()
    return CaptureQueue(vault.root).drain(run, is_deferred=lambda exc: isinstance(exc, IngestDeferred),
                                          log=lambda line: log(vault.root, env, line))
