"""A query's vector embedded by a forked child (``index/prefetch.py``), with a deterministic embedder.

Each case runs in a fresh interpreter: a process forks only while it runs no thread, and the test
process may be running some (servers and watchers of other tests)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

PRELUDE = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    import numpy as np
    from vault_engine.index.fakes import HashEmbedder
    from vault_engine.index.prefetch import PrefetchedEmbedder, QueryPrefetch

    fake = HashEmbedder(dim=16)

    def compute(root, text):
        return fake.name, fake.embed([text])[0]

    def failing(root, text):
        raise RuntimeError("the model is not there")

    def slow(root, text):
        time.sleep(30)
        return compute(root, text)

    def gone(pid):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True  # reaped: not a child any more
        return False

    out = {}
""")


def run(body: str, timeout: float = 60) -> dict[str, Any]:
    script = PRELUDE + textwrap.dedent(body) + "\nprint(json.dumps(out))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_the_childs_vector_is_the_one_this_process_would_compute_and_is_taken_once() -> None:
    out = run("""
        prefetch = QueryPrefetch.start(Path("."), "how do we deploy the api?", compute)
        out["started"] = prefetch is not None
        vector = prefetch.take("how do we deploy the api?", fake.name)
        out["same"] = bool(np.array_equal(vector, fake.embed(["how do we deploy the api?"])[0]))
        out["dtype"] = str(vector.dtype)
        out["again"] = prefetch.take("how do we deploy the api?", fake.name) is None
        out["reaped"] = gone(prefetch.pid)
    """)
    assert out == {"started": True, "same": True, "dtype": "float32", "again": True, "reaped": True}


def test_another_text_or_model_is_not_answered_from_the_child() -> None:
    out = run("""
        other = QueryPrefetch.start(Path("."), "deploy", compute)
        out["other_text"] = other.take("deploy the api", fake.name) is None
        other.close()
        model = QueryPrefetch.start(Path("."), "deploy", compute)
        out["other_model"] = model.take("deploy", "another/model") is None
        out["reaped"] = gone(other.pid) and gone(model.pid)
    """)
    assert out == {"other_text": True, "other_model": True, "reaped": True}


def test_a_child_that_fails_or_is_slow_leaves_the_embedding_to_this_process() -> None:
    out = run("""
        failed = QueryPrefetch.start(Path("."), "deploy", failing)
        out["failed"] = failed.take("deploy", fake.name) is None
        slow_one = QueryPrefetch.start(Path("."), "deploy", slow)
        began = time.monotonic()
        out["slow"] = slow_one.take("deploy", fake.name, wait=0.5) is None
        out["waited_less_than_the_child"] = time.monotonic() - began < 10
        out["reaped"] = gone(failed.pid) and gone(slow_one.pid)  # the slow one was killed
    """)
    assert out == {"failed": True, "slow": True, "waited_less_than_the_child": True, "reaped": True}


def test_the_embedder_takes_the_prefetched_text_once_and_embeds_everything_else_itself() -> None:
    out = run("""
        inner = HashEmbedder(dim=16)
        embedder = PrefetchedEmbedder(inner, QueryPrefetch.start(Path("."), "flaky test on CI", compute))
        out["name"] = embedder.name == inner.name and embedder.dim == 16
        first = embedder.embed(["flaky test on CI"])
        out["first_from_child"] = inner.calls == 0 and first.shape == (1, 16)
        out["first_same"] = bool(np.array_equal(first, inner.embed(["flaky test on CI"])))
        inner.calls = 0
        embedder.embed(["flaky test on CI"])
        embedder.embed(["something else"])
        embedder.embed(["flaky test on CI", "something else"])
        out["then_inner"] = inner.calls
    """)
    assert out == {"name": True, "first_from_child": True, "first_same": True, "then_inner": 4}


def test_no_child_is_forked_from_a_process_running_threads_or_for_an_empty_text() -> None:
    """A thread of the interpreter's, or of a library's own (the kernel lists both): a forked child
    would have none of them, and could wait forever on a lock one of them held."""
    out = run("""
        import threading
        out["empty"] = QueryPrefetch.start(Path("."), "   ", compute) is None
        stop = threading.Event()
        worker = threading.Thread(target=stop.wait)
        worker.start()
        out["threaded"] = QueryPrefetch.start(Path("."), "deploy", compute) is None
        stop.set()
        worker.join()
    """)
    assert out == {"empty": True, "threaded": True}  # alone, it forks: the cases above


def test_a_child_still_running_does_not_hold_the_output_an_agent_reads() -> None:
    """The hook ends with ``os._exit`` once it has answered; a child still embedding (30 s here) must not
    keep the hook's stdout open, or the agent would wait for it."""
    script = PRELUDE + textwrap.dedent("""
        prefetch = QueryPrefetch.start(Path("."), "deploy", slow)
        print(json.dumps({"child": prefetch.pid}), flush=True)
        os._exit(0)
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=20,
                          cwd=REPO)
    elapsed = time.monotonic() - began
    child = int(json.loads(done.stdout)["child"])
    try:
        assert done.returncode == 0, done.stderr
        assert elapsed < 20  # not the child's 30 s (subprocess.run would have raised TimeoutExpired)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


def test_a_platform_without_fork_prefetches_nothing() -> None:
    out = run("""
        if hasattr(os, "fork"):
            del os.fork
        out["none"] = QueryPrefetch.start(Path("."), "deploy", compute) is None
    """)
    assert out == {"none": True}
