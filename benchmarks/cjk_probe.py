#!/usr/bin/env python3
"""Chinese and Japanese searches: found, answered, and what the model's cosine says about them.

One vault (the real indexes and model) holds Chinese and Japanese memories beside English
ones.  Two kinds of query are asked of it, through ``Vault.search`` with ``weak`` on:

- own: a word of one memory's text (two or more characters, a substring of it), or the
  memory's words in another order; the memory should be the first hit, answered;
- joined: words of one memory joined by a particle or in another order ("上海的服务器"); the
  bigrams across the join (海的, 的服) are words no memory carries, so it is covered in part;
- foreign: a Chinese or Japanese sentence about something the vault does not hold (some share a
  word with a memory: "上海的天气"); the search should answer nothing.

Printed per query: the rank of the memory it asks for, the best evidence among the candidates,
the best cosine among them and the cosine of the memory asked for (the model's, whether the
evidence counts it or not), and whether the search is answered.  Then the totals, and the
cosines of the memories own queries ask for beside the best cosines of foreign queries (the
model reads English: whether its cosine separates them in these scripts).

Usage:
    .venv/bin/python -m benchmarks.cjk_probe
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from vault_engine.retrieval.request import SearchQuery
from vault_engine.store import create_vault
from vault_engine.vault import NewMemory, Vault

MEMORIES = {
    "backup": "数据库备份每天凌晨两点在上海服务器上运行。",
    "pnpm": "使用 pnpm 安装依赖",
    "review": "代码评审至少需要两位同事批准才能合并。",
    "oncall": "值班工程师的电话号码记录在共享表格里。",
    "cache": "图片缓存保存七天，然后自动清除。",
    "weekly": "毎週金曜日にデータベースのバックアップを確認する。",
    "tests": "テストはプルリクエストごとに自動で実行される。",
    "deploy": "本番環境へのデプロイは火曜日の午後だけ許可されている。",
    "cdn": "The CDN caches static assets for 600 seconds.",
    "commit": "Write commit messages in the imperative mood.",
}
OWN = [
    ("数据库备份", "backup"), ("备份", "backup"), ("上海服务器", "backup"), ("凌晨两点", "backup"),
    ("安装依赖", "pnpm"), ("pnpm", "pnpm"), ("代码评审", "review"),
    ("电话号码", "oncall"), ("图片缓存", "cache"), ("金曜", "weekly"), ("バックアップ", "weekly"),
    ("データベース", "weekly"), ("プルリクエスト", "tests"), ("デプロイ", "deploy"), ("火曜日の午後", "deploy"),
]
JOINED = [
    ("备份数据库", "backup"), ("上海的服务器", "backup"), ("数据库的备份", "backup"), ("图片的缓存", "cache"),
    ("金曜日の確認", "weekly"), ("デプロイは火曜日", "deploy"),
]
FOREIGN = [
    "猫喜欢吃鱼", "今天天气很好", "我明天去北京开会", "这本书很有意思", "红烧肉的做法", "周末去爬山",
    "东京的天气", "孩子们在公园里踢足球", "上海的天气", "数据分析课程",
    "東京の天気", "犬の散歩は朝七時", "新しい靴を買いたい", "週末は映画を見に行く",
]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        create_vault(root, git=False)
        vault = Vault(root, auto_sync=True)
        ids = {name: vault.add(NewMemory(text)).id for name, text in MEMORIES.items()}
        print(f"{'query':<16} {'kind':<8} {'rank':>4} {'evidence':>8} {'cosine':>6} {'its cos':>7}  answered")
        answered_by: dict[str, int] = {"own": 0, "joined": 0, "foreign": 0}
        first: dict[str, int] = {"own": 0, "joined": 0, "foreign": 0}
        cosines: dict[str, list[float]] = {"own": [], "joined": [], "foreign": []}
        asked = [*((q, n, "own") for q, n in OWN), *((q, n, "joined") for q, n in JOINED),
                 *((q, "", "foreign") for q in FOREIGN)]
        for query, name, kind in asked:
            result = vault.search(SearchQuery(query, weak=True))
            best = result.relevance or {}
            answered = any(not h.weak for h in result.hits) or bool(best.get("subjects"))
            ranked = [h.id for h in result.hits]
            rank = ranked.index(ids[name]) + 1 if name and ids[name] in ranked else 0
            top = max((max(h.similarity.values(), default=0.0) for h in result.hits), default=0.0)
            its = next((max(h.similarity.values(), default=0.0) for h in result.hits if name and h.id == ids[name]),
                       0.0)
            answered_by[kind] += answered and (rank == 1 or not name)
            first[kind] += rank == 1
            cosines[kind].append(its if name else top)
            print(f"{query:<16} {kind:<8} {rank or '-':>4} {best.get('best', 0.0):>8.3f} {top:>6.3f} "
                  f"{its if name else 0.0:>7.3f}  {'yes' if answered else 'no'}")
        print()
        for kind, total in (("own", len(OWN)), ("joined", len(JOINED))):
            print(f"{kind} queries: {first[kind]}/{total} found first, {answered_by[kind]}/{total} found first "
                  f"and answered")
        print(f"foreign queries: {answered_by['foreign']}/{len(FOREIGN)} answered (should be 0)")
        for kind, label in (("own", "the memory an own query asks for"), ("foreign", "a foreign query's best")):
            values = sorted(cosines[kind])
            print(f"cosine of {label}: median {values[len(values) // 2]:.3f}, max {values[-1]:.3f}")

if __name__ == "__main__":
    main()
