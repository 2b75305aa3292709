"""config.load(): defaults < memvault.toml < MEMVAULT_<SECTION>_<KEY> environment variables."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from vault_engine import config
from vault_engine.config import VaultConfig
from vault_engine.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "vault_template"


def write_config(root: Path, text: str) -> Path:
    path = root / config.CONFIG_FILE
    path.write_text(text, encoding="utf-8")
    return path


def all_settings(value: VaultConfig) -> dict[str, dict[str, Any]]:
    return {
        f.name: dataclasses.asdict(getattr(value, f.name)) for f in dataclasses.fields(value)
    }


def test_defaults_without_a_vault() -> None:
    loaded = config.load(None, environ={})
    assert loaded == VaultConfig()
    assert loaded.tiers.hot_budget_chars == 5000
    assert loaded.tiers.soft_ratio == 0.6 and loaded.tiers.hard_ratio == 0.8 and loaded.tiers.target_ratio == 0.4
    assert loaded.context.budget_chars == 6000 and loaded.context.profile_budget_chars == 2000
    assert loaded.context.abstract_steps == (320, 160, 80, 32, 0)
    # Tuned on the LoCoMo development half (the spec starts from k=60, 1.0/1.5).
    assert loaded.retrieval.rrf_k == 10 and loaded.retrieval.weight_fts == 1.0 and loaded.retrieval.weight_vector == 1.0
    assert loaded.retrieval.vector_fusion == "max"
    assert loaded.vault.trash_days == 30
    assert loaded.compaction.max_cold == 1000 and loaded.compaction.target_cold == 500
    assert loaded.ingest.chunk_size == 2000 and loaded.ingest.overlap == 200
    assert loaded.ingest.min_turns == 3 and loaded.ingest.max_buffer == 10


def test_defaults_when_the_vault_has_no_config_file(tmp_path: Path) -> None:
    assert config.load(tmp_path, environ={}) == VaultConfig()


def test_config_is_frozen() -> None:
    loaded = config.load(None, environ={})
    with pytest.raises(dataclasses.FrozenInstanceError):
        loaded.tiers.hot_budget_chars = 1  # type: ignore[misc]


def test_file_overrides_defaults(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        """
[tiers]
hot_budget_chars = 8000
soft_ratio = 0.5

[context]
abstract_steps = [200, 100, 0]

[retrieval]
include_external = true
weight_vector = 2  # an integer is fine for a float setting

[llm]
provider = "offline"
""",
    )
    loaded = config.load(tmp_path, environ={})
    assert loaded.tiers.hot_budget_chars == 8000
    assert loaded.tiers.soft_ratio == 0.5
    assert loaded.tiers.hard_ratio == 0.8  # untouched keys keep their default
    assert loaded.context.abstract_steps == (200, 100, 0)
    assert loaded.retrieval.include_external is True
    assert loaded.retrieval.weight_vector == 2.0 and isinstance(loaded.retrieval.weight_vector, float)
    assert loaded.llm.provider == "offline"
    assert loaded.vault == VaultConfig().vault  # untouched sections keep their defaults


def test_env_overrides_defaults_and_file(tmp_path: Path) -> None:
    write_config(tmp_path, "[tiers]\nhot_budget_chars = 8000\nsoft_ratio = 0.5\n")
    env = {
        "MEMVAULT_TIERS_HOT_BUDGET_CHARS": "9000",
        "MEMVAULT_RETRIEVAL_INCLUDE_EXTERNAL": "yes",
        "MEMVAULT_CONTEXT_ABSTRACT_STEPS": "100, 50,0",
        "MEMVAULT_LLM_TIMEOUT": "2.5",
        "MEMVAULT_EMBEDDING_MODEL": "BAAI/bge-small-en-v1.5",
        "MEMVAULT_SERVER_PORT": " 8080 ",
    }
    loaded = config.load(tmp_path, environ=env)
    assert loaded.tiers.hot_budget_chars == 9000  # env beats file
    assert loaded.tiers.soft_ratio == 0.5  # file beats default
    assert loaded.retrieval.include_external is True
    assert loaded.context.abstract_steps == (100, 50, 0)
    assert loaded.llm.timeout == 2.5
    assert loaded.embedding.model == "BAAI/bge-small-en-v1.5"
    assert loaded.server.port == 8080


def test_env_is_read_from_os_environ_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_VAULT_TRASH_DAYS", "7")
    assert config.load(tmp_path).vault.trash_days == 7


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("TRUE", True), ("1", True), ("yes", True), ("false", False), ("0", False), ("No", False)],
)
def test_env_booleans(value: str, expected: bool) -> None:
    loaded = config.load(None, environ={"MEMVAULT_RETRIEVAL_INCLUDE_EXTERNAL": value})
    assert loaded.retrieval.include_external is expected


def test_unrelated_env_variables_are_ignored() -> None:
    env = {"MEMVAULT_DIR": "/somewhere", "MEMVAULT_NOPE_KEY": "1", "OTHER_TIERS_HOT_BUDGET_CHARS": "1"}
    assert config.load(None, environ=env) == VaultConfig()


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("MEMVAULT_TIERS_HOT_BUDGET_CHARS", "lots"),
        ("MEMVAULT_TIERS_HOT_BUDGET_CHARS", "12.5"),
        ("MEMVAULT_TIERS_SOFT_RATIO", "half"),
        ("MEMVAULT_RETRIEVAL_INCLUDE_EXTERNAL", "maybe"),
        ("MEMVAULT_CONTEXT_ABSTRACT_STEPS", "320,x"),
    ],
)
def test_bad_env_value_names_the_variable(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config.load(None, environ={var: value})
    assert var in caught.value.one_line()
    assert repr(value) in caught.value.one_line()


def test_unknown_section_is_an_error_with_the_file_path(tmp_path: Path) -> None:
    path = write_config(tmp_path, "[tier]\nhot_budget_chars = 1\n")
    with pytest.raises(ConfigError) as caught:
        config.load(tmp_path, environ={})
    line = caught.value.one_line()
    assert line.startswith(str(path) + ": ")
    assert "unknown section [tier]" in line


def test_top_level_key_is_an_unknown_section(tmp_path: Path) -> None:
    path = write_config(tmp_path, "budget = 5\n")
    with pytest.raises(ConfigError, match=r"unknown section \[budget\]") as caught:
        config.load(tmp_path, environ={})
    assert caught.value.path == str(path)


def test_known_section_that_is_not_a_table(tmp_path: Path) -> None:
    path = write_config(tmp_path, "tiers = 5\n")
    with pytest.raises(ConfigError, match=r"\[tiers\] must be a table") as caught:
        config.load(tmp_path, environ={})
    assert caught.value.path == str(path)


def test_unknown_key_is_an_error_with_the_file_path(tmp_path: Path) -> None:
    path = write_config(tmp_path, "[tiers]\nhot_budget = 1\n")
    with pytest.raises(ConfigError) as caught:
        config.load(tmp_path, environ={})
    assert caught.value.one_line() == f"{path}: unknown setting tiers.hot_budget"


@pytest.mark.parametrize(
    ("toml", "setting", "kind"),
    [
        ('[tiers]\nhot_budget_chars = "5000"', "tiers.hot_budget_chars", "whole number"),
        ("[tiers]\nhot_budget_chars = 12.5", "tiers.hot_budget_chars", "whole number"),
        ("[tiers]\nhot_budget_chars = true", "tiers.hot_budget_chars", "whole number"),
        ('[tiers]\nsoft_ratio = "0.5"', "tiers.soft_ratio", "number"),
        ("[tiers]\nsoft_ratio = false", "tiers.soft_ratio", "number"),
        ('[retrieval]\ninclude_external = "true"', "retrieval.include_external", "boolean"),
        ("[retrieval]\ninclude_external = 1", "retrieval.include_external", "boolean"),
        ("[embedding]\nmodel = 5", "embedding.model", "string"),
        ("[llm]\nprovider = []", "llm.provider", "string"),
        ('[context]\nabstract_steps = "320,160"', "context.abstract_steps", "list of whole numbers"),
        ("[context]\nabstract_steps = [320, 1.5]", "context.abstract_steps", "list of whole numbers"),
        ("[context]\nabstract_steps = [true]", "context.abstract_steps", "list of whole numbers"),
        ("[context]\nabstract_steps = 320", "context.abstract_steps", "list of whole numbers"),
    ],
)
def test_wrong_type_is_an_error_with_the_file_path(tmp_path: Path, toml: str, setting: str, kind: str) -> None:
    path = write_config(tmp_path, toml + "\n")
    with pytest.raises(ConfigError) as caught:
        config.load(tmp_path, environ={})
    line = caught.value.one_line()
    assert line.startswith(f"{path}: setting {setting} must be a {kind}, got ")


def test_integral_float_is_accepted_for_a_whole_number(tmp_path: Path) -> None:
    write_config(tmp_path, "[vault]\ntrash_days = 14.0\n")
    loaded = config.load(tmp_path, environ={})
    assert loaded.vault.trash_days == 14 and isinstance(loaded.vault.trash_days, int)


@pytest.mark.parametrize("text", ["[tiers\nhot_budget_chars = 1\n", "[tiers]\nhot_budget_chars = \n", "a = 1\na = 2\n"])
def test_invalid_toml_is_a_config_error(tmp_path: Path, text: str) -> None:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        config.load(tmp_path, environ={})
    assert caught.value.one_line().startswith(f"{path}: invalid TOML")
    assert "\n" not in caught.value.one_line()


def test_non_utf8_config_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / config.CONFIG_FILE
    path.write_bytes(b"[llm]\nprovider = \"\xff\"\n")
    with pytest.raises(ConfigError) as caught:
        config.load(tmp_path, environ={})
    assert caught.value.path == str(path)


def test_template_config_loads_to_exactly_the_defaults() -> None:
    assert (TEMPLATE / config.CONFIG_FILE).is_file()
    assert config.load(TEMPLATE, environ={}) == VaultConfig()


def documented_settings() -> dict[str, dict[str, Any]]:
    """The template's commented-out settings ("#key = value" under each [section]), parsed as TOML."""
    document: dict[str, dict[str, Any]] = {}
    section: dict[str, Any] | None = None
    for line in (TEMPLATE / config.CONFIG_FILE).read_text(encoding="utf-8").splitlines():
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            section = document.setdefault(header.group(1), {})
        elif re.match(r"#\w+ = ", line):
            assert section is not None, line
            section.update(tomllib.loads(line[1:]))
        else:
            assert not re.match(r"\w+ *=", line), f"a setting is set, not documented: {line}"
    return document


def test_template_documents_every_setting() -> None:
    """Every setting is spelled out in the template, commented out, with its default value."""
    document = documented_settings()
    defaults = all_settings(VaultConfig())
    assert set(document) == set(defaults)
    for section, values in defaults.items():
        assert set(document[section]) == set(values), section
        for key, value in values.items():
            written = document[section][key]
            assert (tuple(written) if isinstance(written, list) else written) == value, f"{section}.{key}"


def test_template_env_override_still_applies() -> None:
    loaded = config.load(TEMPLATE, environ={"MEMVAULT_TIERS_HOT_BUDGET_CHARS": "8000"})
    assert loaded.tiers.hot_budget_chars == 8000
    assert loaded.tiers.soft_ratio == VaultConfig().tiers.soft_ratio


def test_a_setting_with_fixed_choices_rejects_others(tmp_path: Path) -> None:
    (tmp_path / "memvault.toml").write_text('[retrieval]\nvector_fusion = "average"\n')
    with pytest.raises(ConfigError, match=r"retrieval\.vector_fusion must be one of body-apart, max, lanes"):
        config.load(tmp_path, environ={})
    with pytest.raises(ConfigError, match="must be one of"):
        config.load(None, environ={"MEMVAULT_RETRIEVAL_VECTOR_FUSION": "sum"})
    assert config.load(None, environ={"MEMVAULT_RETRIEVAL_VECTOR_FUSION": "lanes"}).retrieval.vector_fusion == "lanes"


@pytest.mark.parametrize(("line", "message"), [
    ("rerank_tags = -1.0", r"retrieval\.rerank_tags must be at least 0, got -1\.0"),
    ("limit = 0", r"retrieval\.limit must be at least 1, got 0"),
    ("expansion_similarity = 1.5", r"retrieval\.expansion_similarity must be between -1 and 1, got 1\.5"),
    ("weight_feedback = -0.5", r"retrieval\.weight_feedback must be at least 0, got -0\.5"),
    ("drop_tag_share = 2.0", r"retrieval\.drop_tag_share must be between 0 and 1, got 2\.0"),
])
def test_retrieval_settings_out_of_bounds_are_refused(tmp_path: Path, line: str, message: str) -> None:
    (tmp_path / "memvault.toml").write_text(f"[retrieval]\n{line}\n")
    with pytest.raises(ConfigError, match=message):
        config.load(tmp_path)


def test_retrieval_bounds_hold_for_environment_values_and_admit_zero(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"rerank_thread \(from MEMVAULT_RETRIEVAL_RERANK_THREAD\) must be at least"):
        config.load(None, environ={"MEMVAULT_RETRIEVAL_RERANK_THREAD": "-0.5"})
    assert config.load(None, environ={"MEMVAULT_RETRIEVAL_RERANK_THREAD": "0"}).retrieval.rerank_thread == 0.0


# ---------------------------------------------------------------- the environment, read in one place


def test_environment_reads_the_variables_memvault_honours() -> None:
    env = config.environment({"MEMVAULT_DIR": "/v", "MEMVAULT_TEMPLATE": "/t", "HOME": "/h", "MEMVAULT_DEBUG": "1",
                              "ANTHROPIC_API_KEY": " sk-test ", "MEMVAULT_VAULT_TRASH_DAYS": "7", "PATH": "/bin"})
    assert (env.vault_dir, env.template, env.home, env.debug) == ("/v", "/t", "/h", True)
    assert env.anthropic_api_key == "sk-test" and "sk-test" not in repr(env)
    assert env.settings == (("MEMVAULT_VAULT_TRASH_DAYS", "7"),)  # MEMVAULT_DIR is no setting
    assert config.environment({}) == config.Environment()


def test_no_other_module_reads_the_environment() -> None:
    """``config`` is the one reader of ``os.environ``; two modules only hand it on."""
    import ast

    package = Path(config.__file__).parent
    allowed = {
        "config.py",
        "__init__.py",  # sets the BLAS thread count before numpy loads (a write, not a setting)
        "context/project.py",  # passes the environment, less GIT_* variables, to the git it runs
    }
    readers = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_environ = isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb")
            if is_environ and isinstance(node.value, ast.Name) and node.value.id == "os" and rel not in allowed:
                readers.append(f"{rel}:{node.lineno}")
    assert readers == []
