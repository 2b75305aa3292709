"""The JSON contract: the CLI's --json, the HTTP API and the golden files in contract/ agree.

The golden files are real responses of the HTTP API on the example vault
(scripts/examples.jsonl). The Obsidian plugin's tests decode the same files,
so a change of shape on either side fails a test until both sides agree.
Values differ from run to run (ids, scores, times); the shape may not: the
same keys at every level (free-keyed maps excepted) and the same JSON types,
where ``null`` stands for "absent or of the other type".

Rewrite the files after an intended change with::

    .venv/bin/python -m pytest tests/integration/test_contract.py --update-contract
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

import pytest
from click.testing import CliRunner

from vault_engine.cli import cli
from vault_engine.server import http as http_api
from vault_engine.server.service import MemoryService
from vault_engine.store import create_vault
from vault_engine.vault import Vault

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "contract"
MAPS = {"by_type", "by_lifecycle", "by_tier", "lanes", "similarity", "boosts", "rerank", "extra"}  # data, not shape
FIXTURES = ("status", "search", "read", "read-depth0", "context", "feedback", "forget", "remember", "correct",
            "error")

pytestmark = pytest.mark.slow


def shape(value: Any, key: str = "") -> Any:
    """The JSON type tree of ``value``: dicts by key, lists by the union of their items, maps by value type."""
    if isinstance(value, dict):
        if key in MAPS:
            kinds = {json.dumps(shape(v), sort_keys=True) for v in value.values()}
            return {"<map>": sorted(kinds)}
        return {k: shape(v, k) for k, v in value.items()}
    if isinstance(value, list):
        items: dict[str, Any] = {}
        for item in value:
            items.setdefault(json.dumps(shape(item, key), sort_keys=True), shape(item, key))
        return [items[k] for k in sorted(items)]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


def differences(want: Any, got: Any, where: str = "$") -> list[str]:
    """Where ``got`` does not have the shape of ``want`` (both from :func:`shape`)."""
    if want == "null" or got == "null":
        return []
    if isinstance(want, dict) and isinstance(got, dict):
        if "<map>" in want or "<map>" in got:
            return []
        found = [f"{where}.{k}: missing" for k in want if k not in got]
        found += [f"{where}.{k}: not in the contract" for k in got if k not in want]
        for k in want.keys() & got.keys():
            found += differences(want[k], got[k], f"{where}.{k}")
        return found
    if isinstance(want, list) and isinstance(got, list):
        if not want or not got:
            return []
        return [d for g in got for d in differences(want[0], g, f"{where}[]")]
    return [] if want == got else [f"{where}: {got} where the contract has {want}"]


@pytest.fixture(scope="module")
def example_vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    root = tmp_path_factory.mktemp("contract") / "vault"
    create_vault(root, git=False)
    vault = Vault(root, auto_sync=True)
    result = vault.import_jsonl((REPO / "scripts" / "examples.jsonl").read_text(encoding="utf-8").splitlines())
    assert not result.errors and len(result.added) >= 8
    vault.sync()
    yield vault


@pytest.fixture(scope="module")
def responses(example_vault: Vault) -> dict[str, Any]:
    """Every golden response, made through the real HTTP API on a real port."""
    service = MemoryService(example_vault, source="tool:http")
    out: dict[str, Any] = {}
    with http_api.running(service) as served:

        def post(name: str, body: dict[str, Any] | None = None) -> Any:
            request = Request(f"{served.url}/v1/{name}", data=None if body is None else json.dumps(body).encode(),
                              headers={"Authorization": f"Bearer {served.token}"})
            try:
                with urlopen(request, timeout=60) as answer:
                    return json.loads(answer.read())
            except Exception as exc:  # HTTPError carries the body of an error answer
                return json.loads(exc.read())  # type: ignore[attr-defined]

        out["remember"] = post("remember", {"text": "The release checklist lives in docs/release.md.",
                                            "title": "Release checklist location"})
        doomed = post("remember", {"text": "Nightly builds publish to the staging bucket at 02:00 UTC.",
                                   "title": "Nightly builds publish at 02:00"})
        out["forget"] = post("forget", {"id": doomed["id"]})
        out["search"] = post("search", {"query": "nightly builds publish to the staging bucket", "limit": 3})
        out["context"] = post("context", {"task": "add a test for the signup confirmation email",
                                          "project": "github.com/example/webapp", "path": "tests/signup/test_x.py"})
        first = out["context"]["manifest"][0]["id"]
        out["feedback"] = post("feedback", {"id": first, "outcome": "used-successfully",
                                            "application": out["context"]["application"]})
        out["read"] = post("read", {"id": first, "depth": 2})
        out["read-depth0"] = post("read", {"id": first, "depth": 0})
        out["correct"] = post("correct", {"id": out["remember"]["id"],
                                          "text": "The release checklist lives in docs/releasing.md."})
        out["error"] = post("read", {"id": "m-00000000000000000000000000"})
        out["status"] = post("status")
    service.close()
    return out


def test_the_example_covers_every_list(responses: dict[str, Any]) -> None:
    """Empty lists would make the contract say nothing about their items."""
    assert responses["search"]["hits"] and responses["search"]["revivable"]
    assert responses["context"]["resident"] and responses["context"]["manifest"]
    assert responses["context"]["application"]
    assert responses["read"]["links"] is not None and "body" in responses["read"]
    assert responses["error"]["error"]["kind"] == "MemoryNotFound"


@pytest.mark.parametrize("name", FIXTURES)
def test_http_answers_match_the_golden_files(name: str, responses: dict[str, Any], example_vault: Vault,
                                             request: pytest.FixtureRequest) -> None:
    path = CONTRACT / f"{name}.json"
    if request.config.getoption("--update-contract"):
        CONTRACT.mkdir(exist_ok=True)
        text = json.dumps(responses[name], ensure_ascii=False, indent=2) + "\n"
        path.write_text(text.replace(str(example_vault.root), "/home/you/vault"), encoding="utf-8")
    golden = json.loads(path.read_text(encoding="utf-8"))
    assert differences(shape(golden), shape(responses[name])) == []


def test_every_golden_file_is_checked() -> None:
    assert sorted(p.stem for p in CONTRACT.glob("*.json")) == sorted(FIXTURES)


@pytest.fixture(scope="module")
def cli_json(example_vault: Vault) -> Callable[..., Any]:
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(cli, ["--vault", str(example_vault.root), "--json", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    return run


@pytest.mark.parametrize(("name", "args"), [
    ("status", ("status",)),
    ("search", ("search", "--limit", "3", "--", "signup confirmation email")),
    ("context", ("context", "--task=add a test for the signup email", "--project=github.com/example/webapp")),
    ("read-depth0", ("show", "--depth", "0", "--", "{first}")),
    ("read", ("show", "--depth", "2", "--", "{first}")),
])
def test_cli_json_has_the_same_shape(name: str, args: tuple[str, ...], cli_json: Callable[..., Any],
                                     responses: dict[str, Any]) -> None:
    first = responses["context"]["manifest"][0]["id"]
    got = cli_json(*(a.replace("{first}", first) for a in args))
    golden = json.loads((CONTRACT / f"{name}.json").read_text(encoding="utf-8"))
    assert differences(shape(golden), shape(got)) == []


def test_cli_writes_have_the_same_shape(cli_json: Callable[..., Any], responses: dict[str, Any]) -> None:
    added = cli_json("add", "Deploys are frozen on Fridays after 15:00.", "--title", "Friday deploy freeze")
    assert differences(shape(json.loads((CONTRACT / "remember.json").read_text())), shape(added)) == []
    context = cli_json("context", "--task=review the deploy freeze")
    target = context["manifest"][0]["id"] if context["manifest"] else added["id"]
    feedback = cli_json("feedback", "--outcome", "ignored", "--", target)
    assert differences(shape(json.loads((CONTRACT / "feedback.json").read_text())), shape(feedback)) == []
    forgot = cli_json("forget", "--", added["id"])
    assert differences(shape(json.loads((CONTRACT / "forget.json").read_text())), shape(forgot)) == []


def test_the_shape_check_can_fail() -> None:
    golden = {"hits": [{"id": "m-1", "score": 1.0, "lanes": {"fts": 1}}], "notice": None}
    assert differences(shape(golden), shape({"hits": [{"id": "m-2", "score": 0.5, "lanes": {"body": 3}}],
                                             "notice": "built"})) == []
    assert differences(shape(golden), shape({"hits": [{"id": 7, "score": 1.0, "lanes": {}}], "notice": None})) \
        == ["$.hits[].id: number where the contract has string"]
    assert differences(shape(golden), shape({"hits": [{"id": "m", "lanes": {}, "extra": 1}], "notice": None})) \
        == ["$.hits[].score: missing", "$.hits[].extra: not in the contract"]
