"""Words of the scripts written without spaces: runs, bigrams, and the same words on every side."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault_engine.index import segment
from vault_engine.index.fulltext import _TERM, query_terms
from vault_engine.retrieval import relevance, rerank

CHINESE = "数据库备份每天凌晨两点在上海服务器上运行。"
JAPANESE = "毎週金曜日にデータベースのバックアップを確認する。"
WORD = re.compile(r"\w+")


def test_a_chinese_run_is_its_overlapping_bigrams() -> None:
    assert segment.words("数据库备份", WORD) == ["数据", "据库", "库备", "备份"]
    assert segment.words(CHINESE, WORD)[:4] == ["数据", "据库", "库备", "备份"]
    assert segment.words(CHINESE, WORD)[-1] == "运行"  # the full stop ends the run and is no word
    assert len(segment.words(CHINESE, WORD)) == len("数据库备份每天凌晨两点在上海服务器上运行") - 1


def test_a_one_character_run_is_its_character() -> None:
    assert segment.words("猫", WORD) == ["猫"]
    assert segment.words("猫、狗。", WORD) == ["猫", "狗"]


def test_han_past_the_basic_plane_is_part_of_a_run() -> None:
    assert segment.words("𠮷野家で食べた", WORD) == ["𠮷野", "野家", "家で", "で食", "食べ", "べた"]
    assert segment.has_runs("a 𠮷") and not segment.has_runs("a 😀 — “b”")


def test_punctuation_ends_a_run() -> None:
    assert segment.words("上海，北京", WORD) == ["上海", "北京"]
    assert segment.words("データ・バックアップ", WORD) == ["デー", "ータ", "バッ", "ック", "クア", "アッ", "ップ"]
    assert segment.words("「確認」する", WORD) == ["確認", "する"]


def test_kana_and_kanji_make_one_run() -> None:
    words = segment.words(JAPANESE, WORD)
    assert {"金曜", "バッ", "ック", "クア", "アッ", "ップ", "確認", "にデ", "ータ", "ース"} <= set(words)
    assert "ー" not in words  # the long vowel mark is a letter of the run, not a word of its own


def test_mixed_scripts_split_where_the_script_changes() -> None:
    assert segment.words("使用 pnpm 安装依赖", WORD) == ["使用", "pnpm", "安装", "装依", "依赖"]
    assert segment.words("用pnpm装", WORD) == ["用", "pnpm", "装"]
    assert segment.words("Postgres 16数据库", WORD) == ["Postgres", "16", "数据", "据库"]


def test_korean_and_thai_runs() -> None:
    assert segment.words("데이터베이스를 백업", WORD) == ["데이", "이터", "터베", "베이", "이스", "스를", "백업"]
    thai = segment.words("ไม่ดี", WORD)
    assert thai == ["ไม", "ม่", "่ด", "ดี"]  # the tone mark stays in the run


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60))
def test_text_without_a_run_is_left_exactly_as_it_is(text: str) -> None:
    if segment.has_runs(text):
        return
    assert segment.spaced(text) == text
    assert segment.indexed(text) == text
    assert segment.words(text, _TERM) == _TERM.findall(text)


@pytest.mark.parametrize(("text", "terms"), [
    ("English only, with a ❤️ and a zero\u200bwidth space", "english zero width space"),
    ("I ❤️ it", "i it"),  # nothing but function words: all of them
    ("café naïve", "café naïve"),
])
def test_english_text_keeps_its_words_and_query(text: str, terms: str) -> None:
    assert not segment.has_runs(text)
    assert query_terms(text) == terms


@pytest.mark.parametrize("text", [CHINESE, JAPANESE, "使用 pnpm 安装依赖", "猫", "pnpm使用", "ไม่ดี", "上海，北京",
                                  "a\u200bb 数据\u2060库"])
def test_the_indexed_form_reads_back_as_written(text: str) -> None:
    indexed = segment.indexed(text)
    assert indexed != text
    expected = text.replace("\u200b", " ").replace("\u2060", " ")  # the text's own invisible separators
    assert segment.readable(indexed) == expected
    # A snippet starts and ends at a word: any such stretch reads as a stretch of the text.
    tail = indexed[indexed.index("据库"):] if "据库" in indexed else indexed
    assert segment.readable(tail) in expected


def test_the_indexed_form_has_the_bigrams_as_tantivy_words() -> None:
    # rerank.stems runs Tantivy's own analyzer: the index splits the stored form into the bigrams.
    assert rerank.stems(segment.indexed("数据库备份。")) == ["数据", "据库", "库备", "备份"]
    assert rerank.stems(segment.indexed("使用pnpm")) == ["使用", "pnpm"]


def test_queries_and_the_rerankers_words_are_the_bigrams() -> None:
    assert query_terms("数据库备份") == "数据 据库 库备 备份"
    assert query_terms("使用 pnpm 安装依赖") == "使用 pnpm 安装 装依 依赖"
    assert query_terms("What is 数据库?") == "数据 据库"
    assert rerank.words("バックアップ") == ["バッ", "ック", "クア", "アッ", "ップ"]
    assert rerank.stems("数据库备份") == ["数据", "据库", "库备", "备份"]
    assert rerank.stems("Deploying 数据库") == ["deploy", "数据", "据库"]


def test_the_relevance_floor_reads_the_bigrams_and_covers_a_substring_fully() -> None:
    assert relevance.content_stems("数据库备份") == ["数据", "据库", "库备", "备份"]
    query = relevance.QueryWords.of("备份")
    assert query.coverage(rerank.terms_of(CHINESE)) == 1.0
    other = relevance.QueryWords.of("猫喜欢吃鱼")
    assert other.coverage(rerank.terms_of(CHINESE)) == 0.0
    assert relevance.QueryWords.of("金曜 バックアップ").coverage(rerank.terms_of(JAPANESE)) == 1.0


@pytest.mark.parametrize(("query", "wholly"), [
    ("数据库备份", True), ("バックアップ。", True), ("凌晨2点", True),  # digits and punctuation aside
    ("使用 pnpm", False), ("backup", False), ("", False), ("I ❤️ it", False),
])
def test_a_query_written_wholly_in_these_scripts(query: str, wholly: bool) -> None:
    assert segment.wholly_in_runs(query) is wholly
