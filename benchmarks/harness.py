"""What the benchmarks share: arguments, child processes, timing, tables, the data's place and JSON output.

Every benchmark is a module run as ``python -m benchmarks.NAME`` from the checkout; a benchmark
that measures in fresh child processes runs itself again with :func:`module_command`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

REPO = Path(__file__).resolve().parent.parent
BENCH_DATA = REPO.parent / "shared" / "bench"  # the benchmark data, read where it lies (never copied in)
# The synthetic vaults' sizes by default, and the size from which their vectors are random (the model not run).
DEFAULT_SIZES = "1000,10000"
DEFAULT_SYNTHETIC_FROM = 20_000


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def sizes_arg(text: str) -> list[int]:
    """``1000,10000`` or ``10k,100k`` -> [1000, 10000]."""
    sizes = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        scale = 1000 if part.endswith("k") else 1
        try:
            value = int(part.removesuffix("k")) * scale
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a list of sizes: {text!r} (e.g. 1000,10000)") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"sizes must be at least 1, got {value}")
        sizes.append(value)
    return sizes


def _whole(text: str, least: int, says: str) -> int:
    """``text`` as a whole number of at least ``least`` (``says``: the rule, for the message)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be {says}, got {value}")
    return value


def positive(text: str) -> int:
    return _whole(text, 1, "at least 1")


def at_least_zero(text: str) -> int:
    return _whole(text, 0, "0 or more")


def folder_arg(text: str) -> Path:
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {text}")
    return path


def fail(message: str, code: int = 1) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(code)


def mb(kilobytes: float) -> float:
    """ru_maxrss (KiB on Linux) in MB."""
    return kilobytes / 1024


def run_child(args: Sequence[str]) -> tuple[int, float, float]:
    """Run a child process (output passes through); returns (exit code, seconds, its peak RSS in MB)."""
    started = time.perf_counter()
    proc = subprocess.Popen(list(args))
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - started, mb(usage.ru_maxrss)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[n]) for r in rows)) for n, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"]
    lines += ["| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows]
    return "\n".join(lines)


def new_vault(parent: Path, name: str) -> Path:
    from vault_engine.store import create_vault

    root = parent / name
    create_vault(root, git=False)
    return root


def line(label: str, value: str, note: str = "") -> None:
    print(f"  {label:<22} {value:>14}  {note}".rstrip(), flush=True)


def module_command(module: str, *args: str) -> list[str]:
    """The command that runs ``python -m module args`` with this interpreter (a benchmark's child process)."""
    return [sys.executable, "-m", module, *args]


def timings(work: Callable[[], object], runs: int) -> list[float]:
    """Seconds of each of ``runs`` calls of ``work``."""
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    return seconds


def median_ms(seconds: Sequence[float]) -> float:
    """The median of ``seconds``, in milliseconds."""
    return statistics.median(seconds) * 1000


def print_json(value: Any) -> None:
    """A benchmark's ``--json`` output: its results as indented JSON on stdout."""
    print(json.dumps(value, indent=2))


WORDS = (
    "api auth cache database deploy docker error fixture git index kernel lint log memory migration "
    "model network parser pipeline postgres python query queue release review schema search server "
    "shell sql test token type vector watcher worker yaml config budget context project session"
).split()


def make_records(count: int, seed: int = 7) -> list[str]:
    """``count`` JSON lines of plain random memories over a few dozen words (the core and watch benchmarks')."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(30, 90))]
        body = " ".join(words).capitalize() + f". Record {i}."
        record = {
            "title": f"{' '.join(words[:5]).capitalize()} #{i}",
            "type": rng.choice(["fact", "procedure", "collaboration-policy", "episode"]),
            "tags": sorted({rng.choice(WORDS) for _ in range(rng.randint(0, 3))}),
            "body": body,
        }
        if rng.random() < 0.5:
            record["project"] = f"github.com/acme/{rng.choice(['api', 'web', 'cli', 'infra'])}"
            record["paths"] = [f"src/{rng.choice(WORDS)}/**"]
        lines.append(json.dumps(record))
    return lines
