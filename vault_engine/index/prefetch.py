"""A query's vector, embedded by a child process while this one opens the vault.

A prompt hook with no server to ask opens the vault and loads the embedding model
itself.  About half its time goes to the model (importing onnxruntime and
tokenizers, building the session, reading the tokenizer, the first run) and the
other half to importing the search, opening the vault and searching; the two do
not meet until the query is embedded.  :meth:`QueryPrefetch.start` forks a child
that embeds the query while the parent does the rest, so on two cores the model's
load no longer adds to the hook's time.

The child computes exactly what the parent would: the vault's config, read the
same way, and the embedder it names (:func:`~.embedder.vault_embedder`).  It sends
the model's name with the vector, and :class:`PrefetchedEmbedder` uses the vector
only for the same text and model, once; anything else (another text, a child that
failed or was slow) is embedded in this process as before, so a prefetch can make
a search faster but never different.  The child writes only to its pipe (its
standard streams are closed: an agent reading the hook's output is not kept
waiting) and is killed and reaped when the parent exits without its vector.

Where ``os.fork`` does not exist (Windows) nothing is prefetched.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import notices
from .embedder import DelegatingEmbedder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .embedder import Embedder

Compute = Callable[[Path, str], "tuple[str, npt.NDArray[np.float32]]"]  # (root, text) -> (model, vector)
PREFETCH_WAIT = 30.0  # seconds the parent waits for the child's vector before embedding it itself
_MAGIC = b"memvault-vector 1\n"


class QueryPrefetch:
    """A child process embedding one text; its vector is taken once (:meth:`take`)."""

    def __init__(self, pid: int, fd: int, text: str):
        self.pid, self.text = pid, text
        self._fd: int | None = fd
        self._reaped = False

    @classmethod
    def start(cls, root: Path, text: str, compute: Compute | None = None) -> QueryPrefetch | None:
        """Fork a child embedding ``text`` with ``root``'s embedder (``compute``: what the child runs,
        :func:`vault_vector` by default); None where this process cannot fork, or should not: a
        process running threads (one may hold a lock the child would wait on forever)."""
        if not hasattr(os, "fork") or not text.strip() or _threaded():
            return None
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            return None
        if pid == 0:  # the child: never returns into the caller's code
            code = 1
            try:
                os.close(read_fd)
                _quiet()
                name, vector = (compute or vault_vector)(root, text)
                _send(write_fd, name, vector, notices.take())
                code = 0
            except BaseException:  # the parent embeds the text itself
                pass
            finally:
                os._exit(code)
        os.close(write_fd)
        prefetch = cls(pid, read_fd, text)
        atexit.register(prefetch.close)
        return prefetch

    @property
    def pending(self) -> bool:
        """Whether the child's vector is still to be taken."""
        return self._fd is not None

    def take(self, text: str, name: str, wait: float = PREFETCH_WAIT) -> npt.NDArray[np.float32] | None:
        """The child's vector of ``text`` by the model ``name`` (waiting for it at most ``wait``
        seconds); None for another text or model, a child that failed, or a second call."""
        if self._fd is None or text != self.text:
            return None
        data = self._read(wait)
        self.close()
        if data is None or not data.startswith(_MAGIC):
            return None
        try:
            sent_name, dim, said, rest = data[len(_MAGIC):].split(b"\n", 3)
            lines = rest.split(b"\n", int(said))
            size, raw = int(dim), lines.pop()
        except ValueError:
            return None
        for line in lines:  # what the child's caches said (a graph derived again), said by this process
            notices.note(line.decode("utf-8", "replace"), line.decode("utf-8", "replace"))
        if sent_name.decode("utf-8", "replace") != name or size <= 0 or len(raw) != 4 * size:
            return None
        import numpy as np

        return np.frombuffer(raw, dtype="<f4").astype(np.float32)

    def _read(self, wait: float) -> bytes | None:
        """Everything the child writes, up to its end; None when it does not end within ``wait``."""
        assert self._fd is not None
        deadline = time.monotonic() + wait
        parts: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._fd], [], [], left)
            if not ready:
                return None
            part = os.read(self._fd, 1 << 16)
            if not part:
                return b"".join(parts)
            parts.append(part)

    def close(self) -> None:
        """Stop the child if it still runs, reap it, close the pipe (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._reaped:
            return
        self._reaped = True
        try:
            finished, _status = os.waitpid(self.pid, os.WNOHANG)
            if finished == 0:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        except (ChildProcessError, ProcessLookupError):
            pass


class PrefetchedEmbedder(DelegatingEmbedder):
    """An embedder that takes one text's vector from a :class:`QueryPrefetch` and leaves everything
    else to ``inner`` (which loads its model only when asked)."""

    def __init__(self, inner: Embedder, prefetch: QueryPrefetch):
        super().__init__(inner)
        self.prefetch = prefetch

    @property
    def loads_no_model(self) -> bool:
        """Whether the next text may come from the child (then this process loads no model for it)."""
        return self.prefetch.pending or self.inner.loads_no_model

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if len(texts) == 1:
            vector = self.prefetch.take(texts[0], self.inner.name)
            if vector is not None and len(vector) == self.inner.dim:
                return vector.reshape(1, -1)
        return self.inner.embed(texts)


def _quiet() -> None:
    """Point the child's standard streams at /dev/null: whoever reads the parent's output (an agent
    waiting for the hook's answer) sees it end when the parent ends."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def vault_vector(root: Path, text: str) -> tuple[str, npt.NDArray[np.float32]]:
    """``text``'s vector by the embedder of the vault at ``root``, and that embedder's name.

    Run on one thread: the parent runs beside it on a second core, and the model's vector of one text
    is the same bits on one thread as on several (onnxruntime splits a product by its rows, never
    a sum; checked by ``tests/integration/test_agent_hooks.py``)."""
    import dataclasses

    from ..config import load
    from .embedder import vault_embedder

    config = load(root)
    config = dataclasses.replace(config, embedding=dataclasses.replace(config.embedding, threads=1))
    embedder = vault_embedder(root, config)
    return embedder.name, embedder.embed([text])[0]


def _threaded() -> bool:
    """Whether this process runs another thread: one of the kernel's (a library's own pool, which the
    interpreter does not count) where it lists them, else one of the interpreter's."""
    try:
        return len(os.listdir("/proc/self/task")) > 1
    except OSError:
        threading = sys.modules.get("threading")
        return threading is not None and threading.active_count() > 1


def _send(fd: int, name: str, vector: npt.NDArray[np.float32], said: Sequence[str]) -> None:
    """The model's name, the vector's size, the notices (one line each), then the vector."""
    lines = [" ".join(line.split()) for line in said]
    data = b"\n".join(part.encode("utf-8") for part in (name, str(len(vector)), str(len(lines)), *lines))
    data = _MAGIC + data + b"\n" + vector.astype("<f4").tobytes()
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.close(fd)
