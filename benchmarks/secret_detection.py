#!/usr/bin/env python3
"""Secret detection measured: recall per kind of secret, false positives per look-alike class.

The corpus is ``stress/secret_corpus.py`` (:data:`KINDS`, :data:`LOOKALIKES`; the tests and
``python -m stress.secret_paths`` push it through the vault):

- 78 kinds of secret (167 samples), each a realistic fake value (drawn from the kind's own
  alphabet and length, seeded) in two or three realistic surroundings: config
  lines, env exports, URLs, JSON, HTTP headers, command lines and prose;
- 16 classes of ordinary text (123 samples) that look like a secret: sha1, sha256 and md5
  hashes, UUIDs, git commit ids, base64 data, public keys, long identifiers,
  version strings, file paths, memvault ids and digests, URLs without
  credentials, secret words with ordinary values, code and config around secrets,
  IP addresses, numbers and dates.

A sample of a kind counts as redacted when no 10 characters in a row of its
secret are left; a look-alike sample is a false positive when redaction changes
it at all.  Measured, side by side:

- ``memvault``: :func:`vault_engine.format.redact.redact`;
- ``ds``: detect-secrets, as documented (``scan_line`` under ``default_settings()``:
  every plugin and the default filters, line by line), each value it reports replaced;
- ``ds-tuned``: detect-secrets' plugins called one by one, as a redactor would have to
  (see :func:`detect_secrets_tuned`);
- ``both``: memvault, then ``ds-tuned``.

detect-secrets is needed for its columns only (``.venv/bin/pip install detect-secrets``);
without it the script measures memvault alone.

Usage:
    .venv/bin/python -m benchmarks.secret_detection              # the per-kind and per-class tables
    .venv/bin/python -m benchmarks.secret_detection --bench      # and the cost per 1 KB (median of runs)
    .venv/bin/python -m benchmarks.secret_detection --baseline OLD_redact.py   # another redact.py beside
    .venv/bin/python -m benchmarks.secret_detection --json
    .venv/bin/python -m benchmarks.secret_detection --scan DIR   # lines of real text redaction changes
    .venv/bin/python -m benchmarks.secret_detection --ablation   # what each of memvault's patterns adds
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from stress.secret_corpus import KINDS, LOOKALIKES, leaked, lookalike_samples, secret_samples

REPO = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------- the detectors


Redactor = Callable[[str], str]


def memvault_redactor(path: Path | None = None) -> Redactor:
    """memvault's :func:`redact` (or the one of the redact.py at ``path``)."""
    if path is None:
        from vault_engine.format.redact import redact
        return redact
    spec = importlib.util.spec_from_file_location(f"redact_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function: Redactor = module.redact
    return function


@contextlib.contextmanager
def detect_secrets_redactor() -> Iterator[Redactor]:
    """detect-secrets as documented for strings: ``scan_line`` under ``default_settings()``."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    with default_settings():
        def redact(text: str) -> str:
            lines = []
            for line in text.split("\n"):
                # the longest first, so a value inside another is not replaced half
                values = sorted({str(s.secret_value) for s in scan_line(line) if s.secret_value}, key=len,
                                reverse=True)
                for value in values:
                    line = line.replace(value, "[REDACTED]")
                lines.append(line)
            return "\n".join(lines)

        yield redact


@contextlib.contextmanager
def detect_secrets_tuned() -> Iterator[Redactor]:
    """detect-secrets' plugins called one by one, as a redactor would have to use them.

    Each regex plugin's whole match is replaced (``scan_line`` reports only the first group of
    some, ``ghp`` of a GitHub token); the keyword plugin reads every line as a config file (so
    ``password = value`` counts unquoted); the entropy plugins look only at quoted strings, above
    their limits (their eager mode reports every word); the public IP plugin is left out; the
    default heuristic filters apply.
    """
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP, KeywordDetector

    plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()
               if cls.__name__ != "IPPublicDetector"]

    def kept(value: str, line: str, plugin: Any) -> bool:
        return not (heuristic.is_sequential_string(value) or heuristic.is_potential_uuid(value)
                    or heuristic.is_likely_id_string(value, line, plugin) or heuristic.is_templated_secret(value)
                    or heuristic.is_prefixed_with_dollar_sign(value) or heuristic.is_indirect_reference(line)
                    or heuristic.is_not_alphanumeric_string(value))

    def found(line: str) -> set[str]:
        values: set[str] = set()
        for plugin in plugins:
            if isinstance(plugin, RegexBasedDetector):
                values |= {m.group(0) for regex in plugin.denylist for m in regex.finditer(line)
                           if kept(m.group(0), line, plugin)}
            elif isinstance(plugin, KeywordDetector):
                values |= {v for v in plugin.analyze_string(line, CONFIG_DENYLIST_REGEX_TO_GROUP)
                           if kept(v, line, plugin)}
            elif isinstance(plugin, HighEntropyStringsPlugin):
                values |= {str(s.secret_value) for s in plugin.analyze_line(filename="adhoc", line=line)
                           if kept(str(s.secret_value), line, plugin)}
        return {v for v in values if v}

    def redact(text: str) -> str:
        lines = []
        for line in text.split("\n"):
            for value in sorted(found(line), key=len, reverse=True):
                line = line.replace(value, "[REDACTED]")
            lines.append(line)
        return "\n".join(lines)

    yield redact


def _chain(first: Redactor, second: Redactor) -> Redactor:
    return lambda text: second(first(text))


# ---------------------------------------------------------------- the measures


def measure(redactor: Redactor) -> dict[str, Any]:
    """Recall per kind and false positives per look-alike class of one redactor."""
    recall: dict[str, list[int]] = {}
    missed: list[str] = []
    for sample in secret_samples():
        ok = not leaked(sample.secret, redactor(sample.text))
        counts = recall.setdefault(sample.group, [0, 0])
        counts[0] += ok
        counts[1] += 1
        if not ok:
            missed.append(f"{sample.group}: {sample.text[:70]!r}")
    false: dict[str, list[int]] = {}
    flagged: list[str] = []
    for sample in lookalike_samples():
        changed = redactor(sample.text) != sample.text
        counts = false.setdefault(sample.group, [0, 0])
        counts[0] += changed
        counts[1] += 1
        if changed:
            flagged.append(f"{sample.group}: {sample.text[:70]!r}")
    hits = sum(c[0] for c in recall.values())
    samples = sum(c[1] for c in recall.values())
    fps = sum(c[0] for c in false.values())
    clean = sum(c[1] for c in false.values())
    return {"recall": recall, "false_positives": false, "missed": missed, "flagged": flagged,
            "kinds_full": sum(c[0] == c[1] for c in recall.values()), "kinds": len(recall),
            "samples_redacted": hits, "samples": samples, "lookalikes_flagged": fps, "lookalikes": clean}


def kilobyte_of_text() -> str:
    """About 1 KB of what a vault holds: prose, a config block, a path, a hash and one secret."""
    text = ("Deploys run from the main branch after the release checklist; the staging database is "
            "restored every night from the backup bucket, and the migration job waits for it.\n"
            "[database]\nhost = db.internal\nport = 5432\nuser = deploy\n"
            f"password = {KINDS['ini password'][0]}\n"
            f"The build at {LOOKALIKES['git commit ids'][2][-40:]} fixed the race in sync; see "
            "/usr/local/lib/python3.11/site-packages/tantivy/__init__.py for the loader.\n"
            "We agreed to keep the embedding model offline, to retry the indexer twice, and to page the "
            "on-call engineer only when both retries fail. The search p99 stays under 60 ms.\n")
    while len(text) < 1024:
        text += "Notes from the retro: fewer alerts, clearer runbooks, one owner per service. "
    return text[:1024]


def bench(redactor: Redactor, runs: int = 7, rounds: int = 200) -> float:
    """Microseconds to redact 1 KB of text: the median of ``runs`` runs of ``rounds`` calls."""
    text = kilobyte_of_text()
    redactor(text)  # warm: compiled patterns, caches
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        for _ in range(rounds):
            redactor(text)
        timings.append((time.perf_counter() - started) / rounds * 1e6)
    return statistics.median(timings)


def import_ms(statement: str, runs: int = 5) -> float:
    """Milliseconds a fresh interpreter spends importing (the median of ``runs``)."""
    import subprocess

    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                  cwd=REPO).stdout) * 1000 for _ in range(runs)]
    return statistics.median(times)


def ablation() -> list[tuple[str, int]]:
    """Each shape and place pattern of memvault's redaction left out in turn: the corpus samples it
    alone redacts (a pattern that redacts none adds no recall)."""
    from vault_engine.format import redact as module

    samples = secret_samples()

    def redacted() -> int:
        return sum(not leaked(s.secret, module.redact(s.text)) for s in samples)

    full = redacted()
    out: list[tuple[str, int]] = []
    tokens, token = list(module._TOKENS), module._TOKEN
    for number, pattern in enumerate(tokens):
        rest = tokens[:number] + tokens[number + 1:]
        module._TOKEN = module._Regex(token.pattern.replace("|".join(tokens), "|".join(rest)))
        out.append((pattern, full - redacted()))
    module._TOKEN = token
    for name in ("_HINTED_TOKENS", "_PLACED"):
        rules = list(getattr(module, name))
        for number, rule in enumerate(rules):
            setattr(module, name, rules[:number] + rules[number + 1:])
            out.append((rule[1].pattern, full - redacted()))
        setattr(module, name, rules)
    return out


SCANNED = (".py", ".md", ".rst", ".txt", ".toml", ".yaml", ".yml", ".json", ".cfg", ".ini", ".ts", ".js")


def scan(folder: Path, redactor: Redactor) -> tuple[int, list[str]]:
    """Lines of the text files under ``folder`` (none of them holding a real secret, as far as is
    known): how many there are, and the ones redaction changes."""
    lines, changed = 0, []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in SCANNED or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            lines += 1
            if redactor(line[:2000]) != line[:2000]:
                changed.append(f"{path.relative_to(folder)}: {line.strip()[:110]}")
    return lines, changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", action="store_true", help="Also time each detector on 1 KB of text.")
    parser.add_argument("--baseline", type=Path, help="Another redact.py to measure beside (say, an older one).")
    parser.add_argument("--misses", action="store_true", help="List every missed secret and flagged look-alike.")
    parser.add_argument("--json", action="store_true", help="Print every figure as JSON instead.")
    parser.add_argument("--ablation", action="store_true",
                        help="Leave each of memvault's shape and place patterns out in turn: the samples each adds.")
    parser.add_argument("--scan", type=Path, action="append", default=[],
                        help="Also count the lines memvault's redaction changes in the text files under DIR.")
    args = parser.parse_args(argv)
    if args.ablation:
        for pattern, alone in ablation():
            print(f"{alone:3d} samples redacted by it alone: {pattern[:90]}")
    for folder in args.scan:
        lines, changed = scan(folder, memvault_redactor())
        print(f"{folder}: {len(changed)} of {lines:,} lines changed", *changed, sep="\n  ")

    results: dict[str, dict[str, Any]] = {}
    timings: dict[str, float] = {}
    redactors: dict[str, Redactor] = {"memvault": memvault_redactor()}
    if args.baseline:
        redactors["baseline"] = memvault_redactor(args.baseline)
    for name, redactor in redactors.items():
        results[name] = measure(redactor)
        if args.bench:
            timings[name] = bench(redactor)
    if importlib.util.find_spec("detect_secrets") is None:
        print("detect-secrets is not installed (.venv/bin/pip install detect-secrets): memvault alone\n")
    else:
        with detect_secrets_redactor() as ds:
            results["ds"] = measure(ds)
            if args.bench:
                timings["ds"] = bench(ds, runs=5, rounds=20)
        with detect_secrets_tuned() as tuned:
            for name, redactor in (("ds-tuned", tuned), ("both", _chain(redactors["memvault"], tuned))):
                results[name] = measure(redactor)
                if args.bench:
                    timings[name] = bench(redactor, runs=5, rounds=20)
        if args.bench:
            timings["detect-secrets: import and first scan (ms)"] = import_ms(
                "import detect_secrets.core.scan as c, detect_secrets.settings as s; s.default_settings().__enter__(); "
                "list(c.scan_line('password = hunter2hunter2'))")
    if args.bench:
        timings["memvault: import and first call (ms)"] = import_ms(
            "from vault_engine.format.redact import redact; redact('password = hunter2hunter2')")
    if args.json:
        print(json.dumps({"results": results, "us_per_kb": timings}, indent=2))
        return 0
    names = list(results)
    print("| kind of secret (samples) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for kind in KINDS:
        total = results[names[0]]["recall"][kind][1]
        print(f"| {kind} ({total}) | " + " | ".join(f"{results[n]['recall'][kind][0]}/{total}" for n in names) + " |")
    print("| **kinds fully redacted** | " + " | ".join(
        f"**{results[n]['kinds_full']}/{results[n]['kinds']}**" for n in names) + " |")
    print("| **samples redacted** | " + " | ".join(
        f"**{results[n]['samples_redacted']}/{results[n]['samples']}**" for n in names) + " |")
    print()
    print("| look-alike class (samples) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for group in LOOKALIKES:
        total = results[names[0]]["false_positives"][group][1]
        print(f"| {group} ({total}) | " + " | ".join(
            f"{results[n]['false_positives'][group][0]}" for n in names) + " |")
    print("| **look-alikes changed** | " + " | ".join(
        f"**{results[n]['lookalikes_flagged']}/{results[n]['lookalikes']}**" for n in names) + " |")
    if timings:
        print()
        for name, value in timings.items():
            unit = "" if "(ms)" in name else " µs per KB"
            print(f"{name}: {value:,.1f}{unit}")
    if args.misses:
        for name in names:
            print(f"\n{name} missed:", *results[name]["missed"], sep="\n  ")
            print(f"{name} flagged:", *results[name]["flagged"], sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
