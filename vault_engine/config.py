"""Vault configuration and the process environment, read in one place.

``load(root)`` merges the built-in defaults, the vault's ``memvault.toml`` and
``MEMVAULT_<SECTION>_<KEY>`` environment variables (in that order) into one
frozen :class:`VaultConfig` that callers pass down explicitly.
:func:`environment` reads the few other variables memvault honours
(``MEMVAULT_DIR``, ``MEMVAULT_TEMPLATE``, ``MEMVAULT_DEBUG``, ``ANTHROPIC_API_KEY``)
into an :class:`Environment`, and :func:`prepare_libraries` sets the variables
the libraries memvault loads are told through (:data:`LIBRARY_ENVIRONMENT`).
No other module reads or sets ``os.environ``.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

CONFIG_FILE = "memvault.toml"
STATE_DIR = ".memvault"  # the vault's derived state, rebuildable from its markdown


@dataclass(frozen=True, slots=True)
class VaultSettings:
    lock_timeout: float = 5.0
    trash_days: int = 30
    auto_sync: bool = True
    learning: bool = True
    retrieval: bool = True
    sender: str = ""  # who this machine writes as in a shared vault ("": git's user.name; see senders.py)


@dataclass(frozen=True, slots=True)
class TierSettings:
    hot_budget_chars: int = 5000
    soft_ratio: float = 0.6
    hard_ratio: float = 0.8
    target_ratio: float = 0.4
    state_retire_days: int = 7
    protect_importance: float = 0.9
    hot_importance: float = 0.8  # a new memory this important goes hot when no tier is given
    # Compression: a hot rule unedited this long and longer than this is shortened by the language model;
    # the result is kept only when shorter than max_ratio of the original, at least min_result_chars
    # long, and with at least min_coverage of its word bigrams found in the original.
    compress_after_days: int = 30
    compress_min_chars: int = 200
    compress_max_ratio: float = 0.8
    compress_min_result_chars: int = 30
    compress_min_coverage: float = 0.45
    # A hot rule that records things done (a date this old, this many distinct completion words, no
    # instruction) is retyped to a state and moved cold.
    retype_after_days: int = 60
    retype_done_markers: int = 2
    redundant_idle_days: int = 30  # an idle hot rule a cold memory already states moves cold (from soft usage)
    # Stubs (from hard usage): dormant rules are replaced by pointers to their cold text.
    stub_idle_days: int = 45
    activity_days: int = 30  # the tasks of this many days say which rules are in use
    max_stubs_per_run: int = 3
    stub_max_chars: int = 40
    stub_gc_min_age_days: float = 1.0


@dataclass(frozen=True, slots=True)
class ContextSettings:
    budget_chars: int = 6000
    profile_budget_chars: int = 2000
    abstract_steps: tuple[int, ...] = (320, 160, 80, 32, 0)
    max_resident_policies: int = 3
    min_similarity: float = 0.3
    min_word_similarity: float = 0.2


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    rrf_k: int = 10
    weight_fts: float = 1.0
    weight_vector: float = 1.0
    alpha_recency: float = 0.2
    alpha_event_time: float = 0.2
    alpha_proof: float = 0.1
    alpha_trust: float = 0.1
    alpha_usefulness: float = 0.1
    include_external: bool = False
    limit: int = 10
    max_context_chars: int = 4000
    min_score: float = 0.05
    relevance_floor: float = 0.75
    meaning_floor: float = 0.55
    named_relevance_floor: float = 0.55
    named_meaning_floor: float = 0.25
    vector_fusion: str = "max"
    candidates: int = 100
    duplicate_similarity: float = 0.95
    revive_score: float = 0.5
    neighbour_factor: float = 0.0  # linked memories join at this share of a hit's score (0: they do not)
    rerank: bool = True
    rerank_depth: int = 50
    rerank_terms: float = 1.0
    rerank_tags: float = 2.0
    rerank_time: float = 1.0
    rerank_thread: float = 1.0
    rerank_unanimous: bool = True  # word coverage does not overturn a unanimous lane order
    rerank_tag_gate: float = 1.0  # a named tag lifts a memory by its meaning's share of the closest one's (see rerank)
    time_slack_days: int = 14
    fts_context: float = 1.0
    fts_when: float = 1.0
    sentence_lane: bool = True
    weight_expansion: float = 0.0
    expansion_similarity: float = 0.6
    expansion_per_word: int = 3
    weight_feedback: float = 1.0
    feedback_docs: int = 2
    vector_drop_tags: bool = True
    drop_tag_share: float = 0.05


@dataclass(frozen=True, slots=True)
class ConsolidationSettings:
    merge_similarity: float = 0.70
    review_similarity: float = 0.40
    crosslink_similarity: float = 0.60
    text_similarity: float = 0.5
    conflict_similarity: float = 0.55
    conflict_text_similarity: float = 0.6
    link_limit: int = 3
    neighbours: int = 10
    short_words: int = 12  # a note with at most this many content words is short ...
    short_cosine: float = 0.9  # ... and merges with a note saying something else only from this cosine


@dataclass(frozen=True, slots=True)
class SynthesisSettings:
    max_members: int = 8  # the most memories one synthesis covers (under 2: no syntheses)


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    max_cold: int = 1000
    target_cold: int = 500
    digest_size: int = 20


@dataclass(frozen=True, slots=True)
class DecaySettings:
    half_life_days: float = 90.0
    exempt_importance: float = 0.8
    forget_below: float = 0.05
    stale_max_chars: int = 80  # an inferred note this short marked stale ("obsolete", "[stale]") goes to the trash
    stale_after_days: int = 30  # an inferred in-progress note idle this long is judged by the language model


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    model: str = "local/all-MiniLM-L6-v2-int8"
    batch_size: int = 16
    threads: int = 2
    max_tokens: int = 256
    int8: bool = True  # the default model's matrix products in int8 (index/model_graph.py)


@dataclass(frozen=True, slots=True)
class CacheSettings:
    dir: str = ""  # memvault's cache folder ("": $XDG_CACHE_HOME/memvault, else ~/.cache/memvault)
    embeddings_mb: int = 1024  # the embedding cache's bound (0: no cache)


@dataclass(frozen=True, slots=True)
class LlmSettings:
    provider: str = "auto"
    fast_model: str = "claude-haiku-4-5"
    strong_model: str = "claude-sonnet-4-6"
    timeout: float = 30.0
    max_retries: int = 4


@dataclass(frozen=True, slots=True)
class IngestSettings:
    min_turns: int = 3
    max_buffer: int = 10
    load_threshold: float = 0.7
    chunk_size: int = 2000
    overlap: int = 200
    tool_output_min_chars: int = 1500
    load_chars: int = 6000


@dataclass(frozen=True, slots=True)
class WatchSettings:
    debounce_ms: int = 150
    maintain_every_hours: float = 24.0
    maintain_after_changes: int = 200
    learn_every_minutes: float = 10.0


@dataclass(frozen=True, slots=True)
class ServerSettings:
    port: int = 7788
    warm_minutes: float = 15.0  # a hook with no server to ask starts one that exits idle this long (0: never)


@dataclass(frozen=True, slots=True)
class GitSettings:
    sync_every_minutes: float = 0.0  # `memvault watch` runs `memvault git sync` this often (0: never)
    remote: str = "origin"


@dataclass(frozen=True, slots=True)
class VaultConfig:
    """Every setting of a vault; immutable once loaded."""

    vault: VaultSettings = field(default_factory=VaultSettings)
    tiers: TierSettings = field(default_factory=TierSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)
    consolidation: ConsolidationSettings = field(default_factory=ConsolidationSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    synthesis: SynthesisSettings = field(default_factory=SynthesisSettings)
    decay: DecaySettings = field(default_factory=DecaySettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    llm: LlmSettings = field(default_factory=LlmSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)
    watch: WatchSettings = field(default_factory=WatchSettings)
    server: ServerSettings = field(default_factory=ServerSettings)
    git: GitSettings = field(default_factory=GitSettings)


@dataclass(frozen=True, slots=True)
class Environment:
    """What memvault takes from the process environment."""

    vault_dir: str | None = None  # MEMVAULT_DIR: the vault when --vault is not given
    template: str | None = None  # MEMVAULT_TEMPLATE: the template vault, instead of the packaged one
    home: str | None = None  # HOME: where the default vault lives (and the agents' settings)
    codex_home: str | None = None  # CODEX_HOME: where Codex keeps its config.toml (default ~/.codex)
    cache_home: str | None = None  # XDG_CACHE_HOME: where memvault's cache folder goes (default ~/.cache)
    debug: bool = False  # MEMVAULT_DEBUG: tracebacks for internal errors, debug logging in servers
    anthropic_api_key: str = field(default="", repr=False)  # ANTHROPIC_API_KEY: never printed
    settings: tuple[tuple[str, str], ...] = ()  # every MEMVAULT_<SECTION>_<KEY> variable, sorted


def environment(environ: Mapping[str, str] | None = None) -> Environment:
    """The variables memvault honours, from ``environ`` (the process environment by default)."""
    env = os.environ if environ is None else environ
    prefixes = tuple(f"MEMVAULT_{f.name.upper()}_" for f in dataclasses.fields(VaultConfig))
    return Environment(
        vault_dir=env.get("MEMVAULT_DIR") or None,
        template=env.get("MEMVAULT_TEMPLATE") or None,
        home=env.get("HOME") or None,
        codex_home=env.get("CODEX_HOME") or None,
        cache_home=env.get("XDG_CACHE_HOME") or None,
        debug=bool(env.get("MEMVAULT_DEBUG")),
        anthropic_api_key=env.get("ANTHROPIC_API_KEY", "").strip(),
        settings=tuple(sorted((k, v) for k, v in env.items() if k.startswith(prefixes))),
    )


@dataclass(frozen=True, slots=True)
class CachePlace:
    """Where memvault keeps its caches, and why the folder set (or the default one) was passed over."""

    folder: Path
    refused: str | None = None  # "the cache folder X is not used (why); memvault keeps its caches in Y"


def cache_place(settings: CacheSettings, vault: Path | None = None,
                environ: Mapping[str, str] | None = None) -> CachePlace:
    """memvault's cache folder, shared by every vault of this user: ``[cache] dir`` (``~`` expanded),
    else ``$XDG_CACHE_HOME/memvault``, else ``~/.cache/memvault``.

    What a cache holds is read back and trusted (the model's graph, vectors, the MCP tool list an agent
    is shown), so a folder another user could write to, or one inside ``vault`` (whose files every
    teammate can commit; ``[cache] dir`` itself may come from a teammate's ``memvault.toml``), is passed
    over for the default one, else for the vault's own ``.memvault/cache``."""
    env = environment(environ)
    default = (Path(env.cache_home) / "memvault" if env.cache_home
               else Path(env.home or Path.home()) / ".cache" / "memvault")
    candidates = [default]
    if settings.dir:
        folder = Path(settings.dir)
        chosen = Path(env.home, *folder.parts[1:]) if folder.parts[:1] == ("~",) and env.home else folder
        candidates.insert(0, chosen)
    if vault is not None:
        candidates.append(vault / STATE_DIR / "cache")
    first: tuple[Path, str] | None = None
    for folder in candidates:
        problem = _untrusted(folder, vault)
        if problem is None:
            return CachePlace(folder, None if first is None else
                              f"the cache folder {first[0]} is not used ({first[1]}); memvault keeps its caches "
                              f"in {folder}")
        first = first or (folder, problem)
    return CachePlace(candidates[-1])  # nowhere better: as before


def _untrusted(folder: Path, vault: Path | None) -> str | None:
    from .fsio import others_can_write

    if not folder.is_absolute():
        return "a relative path, which would change with the folder a command runs in"
    if vault is not None:
        inside = folder.resolve(strict=False)
        root = vault.resolve(strict=False)
        if inside.is_relative_to(root) and not inside.is_relative_to(root / STATE_DIR):
            return "it lies inside the vault, whose files anyone who shares it can commit"
    return others_can_write(folder)


def cache_folder(settings: CacheSettings, environ: Mapping[str, str] | None = None, *,
                 vault: Path | None = None) -> Path:
    """The folder :func:`cache_place` chooses."""
    return cache_place(settings, vault, environ).folder


# What the libraries memvault loads are told through their own variables, set before they load.
# onnxruntime, which runs the embedding model, keeps telemetry on Linux and macOS since 1.29: a device id
# and an event database under ~/.cache/Microsoft/DeveloperTools/.onnxruntime, uploaded to Microsoft.
# memvault writes nothing outside the vault and sends nothing anywhere, so it is off. onnxruntime reads the
# variable once, when it is first imported (``onnxruntime.disable_telemetry_events()`` comes too late:
# the import has written the files).
LIBRARY_ENVIRONMENT: Mapping[str, str] = {"ORT_DISABLE_TELEMETRY": "1"}


def prepare_libraries(environ: MutableMapping[str, str] | None = None) -> None:
    """Set :data:`LIBRARY_ENVIRONMENT` in ``environ`` (the process environment by default); called before
    a library it names is imported."""
    (os.environ if environ is None else environ).update(LIBRARY_ENVIRONMENT)


_KINDS = {bool: "boolean", int: "whole number", float: "number", str: "string", tuple: "list of whole numbers"}
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


def _whole(value: Any) -> int:
    """A TOML integer (or a float without a fraction) as an int; booleans are not numbers here."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError
    if isinstance(value, float) and not value.is_integer():
        raise ValueError
    return int(value)


def _coerce(value: Any, current: Any, where: str, path: Path | None, from_env: bool = False) -> Any:
    """Convert ``value`` to the type of the default ``current``.

    A file value must already have the right TOML type; an environment value
    is text and is parsed.
    """
    try:
        if from_env and not isinstance(current, str):
            text = str(value).strip()
            if isinstance(current, bool):
                if text.lower() not in _TRUE | _FALSE:
                    raise ValueError
                return text.lower() in _TRUE
            if isinstance(current, int):
                return int(text)
            if isinstance(current, float):
                return float(text)
            if isinstance(current, tuple):
                return tuple(int(x) for x in text.split(",")) if text else ()
        if isinstance(current, bool):
            if not isinstance(value, bool):
                raise ValueError
            return value
        if isinstance(current, int):
            return _whole(value)
        if isinstance(current, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError
            return float(value)
        if isinstance(current, tuple):
            if not isinstance(value, list):
                raise ValueError
            return tuple(_whole(x) for x in value)
        if isinstance(current, str):
            if not isinstance(value, str):
                raise ValueError
            return value
    except (TypeError, ValueError):
        pass
    raise ConfigError(f"setting {where} must be a {_KINDS[type(current)]}, got {value!r}", path=path)


CHOICES: dict[str, tuple[str, ...]] = {
    "retrieval.vector_fusion": ("body-apart", "max", "lanes"),
    "llm.provider": ("auto", "offline", "anthropic"),
}


# Settings that only make sense within bounds (inclusive; None: unbounded on that side).
BOUNDS: dict[str, tuple[float | None, float | None]] = {
    **{f"retrieval.{name}": (0.0, None) for name in (
        "rrf_k", "weight_fts", "weight_vector", "weight_expansion", "fts_context", "fts_when", "rerank_depth",
        "rerank_terms", "rerank_tags", "rerank_time", "rerank_thread", "rerank_tag_gate", "time_slack_days",
        "expansion_per_word", "weight_feedback", "feedback_docs")},
    "retrieval.drop_tag_share": (0.0, 1.0),
    "retrieval.limit": (1, None),
    "retrieval.candidates": (1, None),
    "retrieval.expansion_similarity": (-1.0, 1.0),
}


def _check_choice(where: str, value: Any, path: Path | None) -> None:
    key = where.split(" ", 1)[0]
    if key in CHOICES and value not in CHOICES[key]:
        raise ConfigError(f"setting {where} must be one of {', '.join(CHOICES[key])}, got {value!r}", path=path)
    low, high = BOUNDS.get(key, (None, None))
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"at least {low:g}" if high is None else f"between {low:g} and {high:g}"
        raise ConfigError(f"setting {where} must be {bounds}, got {value!r}", path=path)


def _apply(section: Any, values: Mapping[str, Any], prefix: str, path: Path | None) -> Any:
    names = {f.name for f in dataclasses.fields(section)}
    changes = {}
    for key, value in values.items():
        if key not in names:
            raise ConfigError(f"unknown setting {prefix}.{key}", path=path)
        changes[key] = _coerce(value, getattr(section, key), f"{prefix}.{key}", path)
        _check_choice(f"{prefix}.{key}", changes[key], path)
    return dataclasses.replace(section, **changes)


def load(root: Path | None, environ: Mapping[str, str] | None = None) -> VaultConfig:
    """Load the configuration of the vault at ``root`` (defaults when None).

    Raises:
        ConfigError: the file is not valid TOML, or names an unknown or mistyped setting.
    """
    env = dict(environment(environ).settings)
    config = VaultConfig()
    file_values: dict[str, Any] = {}
    path = root / CONFIG_FILE if root is not None else None
    if path is not None and path.is_file():
        try:
            file_values = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"invalid TOML: {exc}", path=path) from None
        except OSError as exc:
            raise ConfigError(f"cannot read file: {exc.strerror}", path=path) from None
    sections = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    for name, values in file_values.items():
        if name not in sections:
            raise ConfigError(f"unknown section [{name}]", path=path)
        if not isinstance(values, dict):
            raise ConfigError(f"[{name}] must be a table of settings, got {values!r}", path=path)
        sections[name] = _apply(sections[name], values, name, path)
    for name, section in sections.items():
        overrides: dict[str, Any] = {}
        for f in dataclasses.fields(section):
            var = f"MEMVAULT_{name}_{f.name}".upper()
            if var in env:
                where = f"{name}.{f.name} (from {var})"
                overrides[f.name] = _coerce(env[var], getattr(section, f.name), where, None, from_env=True)
                _check_choice(where, overrides[f.name], None)
        if overrides:
            sections[name] = dataclasses.replace(section, **overrides)
    return VaultConfig(**sections)
