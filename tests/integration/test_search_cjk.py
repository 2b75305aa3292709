"""Chinese and Japanese memories found and answered by a word of their text, with the real indexes
and model; an unrelated Chinese or Japanese query answers nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from vault_engine.index.fulltext import FullTextIndex
from vault_engine.retrieval.searcher import SearchQuery
from vault_engine.vault import Vault

pytestmark = pytest.mark.slow

FACTS = [
    "数据库备份每天凌晨两点在上海服务器上运行。",
    "毎週金曜日にデータベースのバックアップを確認する。",
    "使用 pnpm 安装依赖",
    "The CDN caches static assets for 600 seconds.",
    "Write commit messages in the imperative mood.",
]
INVISIBLE = ("\u200b", "\u2060")


@pytest.fixture
def world(vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> tuple[Vault, list[str]]:
    return vault_of(FACTS)


@pytest.mark.parametrize(("query", "memory"), [
    ("数据库备份", 0), ("备份", 0), ("上海服务器", 0),  # Chinese: any two or more characters of the text
    ("金曜", 1), ("バックアップ", 1), ("確認", 1),  # Japanese: kanji, katakana
    ("安装依赖", 2), ("依赖", 2), ("pnpm", 2),  # mixed: its Chinese and its English words
])
def test_a_word_of_the_text_finds_and_answers_its_memory(world: tuple[Vault, list[str]], query: str,
                                                          memory: int) -> None:
    vault, made = world
    result = vault.search(SearchQuery(query))
    assert result.hits and result.hits[0].id == made[memory], query
    top = result.hits[0]
    assert not top.weak and top.evidence >= vault.config.retrieval.relevance_floor
    if query != "pnpm":  # a query wholly in these scripts: its words alone, all of them carried
        assert top.evidence == pytest.approx(1.0)
    assert result.notice is None
    assert top.lanes.get("fts") == 1  # found by its words, not only by the model
    assert FACTS[memory].rstrip("。") in top.snippet and not any(c in top.snippet for c in INVISIBLE)


@pytest.mark.parametrize("query", ["猫喜欢吃鱼", "今天天气很好", "孩子们在公园里踢足球", "上海的天气", "東京の天気",
                                   "週末は映画を見に行く"])
def test_an_unrelated_query_answers_nothing(world: tuple[Vault, list[str]], query: str) -> None:
    vault, _made = world
    result = vault.search(SearchQuery(query))
    assert result.hits == []
    assert result.notice is not None and "relevance floor" in result.notice
    asked = vault.search(SearchQuery(query, weak=True))
    assert asked.hits and all(h.weak for h in asked.hits)
    assert all(any("does not read the query's script" in w for w in h.why) for h in asked.hits)


def test_english_queries_still_count_the_models_meaning(world: tuple[Vault, list[str]]) -> None:
    vault, made = world
    result = vault.search(SearchQuery("how long are static files cached"))
    assert result.hits and result.hits[0].id == made[3] and not result.hits[0].weak
    assert not any("does not read" in w for w in result.hits[0].why)


def test_a_long_chinese_summary_gives_a_readable_snippet_around_the_match(tmp_path: Path) -> None:
    index = FullTextIndex(tmp_path / "ft")
    filler = "这是一段很长的说明文字，" * 20  # 240 characters before the match
    summary = filler + "数据库备份每天凌晨两点运行。"
    index.apply([{"id": "m-a", "title": "说明", "summary": summary, "body": summary, "type": "fact",
                  "scope": "global", "trust": "learned", "lifecycle": "proven", "tier": "cold", "hash": "h",
                  "path": "memories/m-a.md"}], [])
    hits = index.search("数据库备份", 5)
    assert [h.id for h in hits] == ["m-a"]
    snippet = hits[0].snippet
    assert "数据库备份每天凌晨两点运行" in snippet and len(snippet) <= 160
    assert not any(c in snippet for c in INVISIBLE)
    assert snippet.replace("…", "") in summary  # a stretch of the summary as written


def test_an_english_snippet_keeps_its_invisible_characters(tmp_path: Path) -> None:
    index = FullTextIndex(tmp_path / "ft")
    summary = "The deploy\u200bkey and the word\u2060joiner stay as written."
    index.apply([{"id": "m-a", "title": "Deploy", "summary": summary, "body": summary, "type": "fact",
                  "scope": "global", "trust": "learned", "lifecycle": "proven", "tier": "cold", "hash": "h",
                  "path": "memories/m-a.md"}], [])
    assert index.search("deploy key", 5)[0].snippet == summary  # its closing full stop kept too


def test_a_word_between_brackets_is_found(vault_of: Callable[[list[str]], tuple[Vault, list[str]]]) -> None:
    vault, made = vault_of(["「確認」する"])
    assert [h.id for h in vault.search(SearchQuery("確認")).hits] == made
