"""The request schemas: each limit is written once, and the MCP schema, the MCP check and the service's
check all hold it (one character more is refused everywhere)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from vault_engine.errors import InvalidInput
from vault_engine.server import requests
from vault_engine.server.http import OPERATIONS
from vault_engine.server.mcp import TOOLS, TOOLS_BY_NAME, check_arguments
from vault_engine.server.requests import (
    MAX_BUDGET,
    MAX_LIMIT,
    MAX_QUERY,
    MAX_SUMMARY,
    MAX_TASK,
    MAX_TEXT,
    ContextRequest,
    RememberRequest,
    SearchRequest,
    Text,
)

TEXT_FIELDS = [(spec.name, name, arg) for spec in TOOLS
               for name, (arg, _default) in spec.request.specs().items() if isinstance(arg, Text)]


def _minimal(request: type[requests.Request]) -> dict[str, Any]:
    """The required fields of ``request``, each with a one-character value."""
    filled = {"outcome": "ignored"}
    return {name: filled.get(name, "x") for name, (_arg, default) in request.specs().items()
            if default is dataclasses.MISSING}


def test_the_limits_are_the_named_constants() -> None:
    props = {spec.name: spec.input_schema["properties"] for spec in TOOLS}
    assert props["memory_search"]["query"]["maxLength"] == MAX_QUERY == 2000
    assert props["memory_context"]["task"]["maxLength"] == MAX_TASK == 4000
    assert props["memory_remember"]["text"]["maxLength"] == props["memory_correct"]["text"]["maxLength"] == MAX_TEXT
    assert props["memory_remember"]["summary"]["maxLength"] == props["memory_remember"]["trigger"]["maxLength"] \
        == MAX_SUMMARY == 2000
    assert props["memory_search"]["limit"]["maximum"] == MAX_LIMIT
    assert props["memory_context"]["budget"]["maximum"] == MAX_BUDGET


@pytest.mark.parametrize(("tool", "name", "arg"), TEXT_FIELDS, ids=[f"{t}.{n}" for t, n, _ in TEXT_FIELDS])
def test_every_text_limit_holds_at_both_boundaries(tool: str, name: str, arg: Text) -> None:
    spec = TOOLS_BY_NAME[tool]
    assert spec.input_schema["properties"][name]["maxLength"] == arg.max_length
    at_most = {**_minimal(spec.request), name: "y" * arg.max_length}
    one_more = {**at_most, name: "y" * (arg.max_length + 1)}
    assert getattr(spec.request.parse(check_arguments(spec, at_most)), name) == at_most[name]
    message = f"{name} is too long ({arg.max_length + 1} characters; at most {arg.max_length})"
    for check in (lambda: check_arguments(spec, one_more), lambda: spec.request.parse(one_more)):
        with pytest.raises(InvalidInput) as caught:
            check()
        assert caught.value.one_line() == message


def test_the_http_api_and_the_tools_take_the_same_fields() -> None:
    for spec in TOOLS:
        operation = spec.name.removeprefix("memory_")
        assert OPERATIONS[operation] is spec.request
        assert set(spec.input_schema["properties"]) == set(spec.request.specs())


def test_parse_applies_defaults_and_keeps_the_service_messages() -> None:
    assert SearchRequest.parse({"query": "q", "types": ["fact"], "project": "  "}) == \
        SearchRequest("q", types=("fact",), project=None)
    remembered = RememberRequest.parse({"text": "t"})
    assert (remembered.type, remembered.authority, remembered.force, remembered.paths) == \
        ("fact", "explicit", False, ())
    assert ContextRequest.parse({"task": "t"}).record is True
    for values, message in (
        ({"query": "q", "limit": MAX_LIMIT + 1}, f"limit must be a whole number from 1 to {MAX_LIMIT}, got 101"),
        ({"query": "q", "limit": "5"}, f"limit must be a whole number from 1 to {MAX_LIMIT}, got '5'"),
        ({"query": 5}, "query must be a string, got int"),
        ({"query": "q", "trust": ["high"]}, "unknown trust level 'high'; expected one of system, learned, "
                                            "external, any"),
        ({"query": "q", "types": [1]}, "types must be a list of strings, got list [1]"),
        ({"query": "q", "types": "fact"}, "types must be a list of strings, got string 'fact'"),
        ({"query": "q", "weak": "yes"}, "weak must be true or false, got string 'yes'"),
    ):
        with pytest.raises(InvalidInput) as caught:
            SearchRequest.parse(values)
        assert caught.value.one_line() == message
    with pytest.raises(InvalidInput, match=r"^budget must be a whole number of characters, at least 0, got -1$"):
        ContextRequest.parse({"task": "t", "budget": -1})


FLAG_FIELDS = [(spec.name, name) for spec in TOOLS for name, (arg, _d) in spec.request.specs().items()
               if isinstance(arg, requests.Flag)]
LIST_FIELDS = [(spec.name, name) for spec in TOOLS for name, (arg, _d) in spec.request.specs().items()
               if isinstance(arg, requests.Strings)]


@pytest.mark.parametrize(("tool", "name"), FLAG_FIELDS, ids=[f"{t}.{n}" for t, n in FLAG_FIELDS])
@pytest.mark.parametrize("value", ["yes", "true", 1, 0, [], {}])
def test_a_flag_is_a_json_boolean(tool: str, name: str, value: Any) -> None:
    request = TOOLS_BY_NAME[tool].request
    with pytest.raises(InvalidInput, match=rf"^{name} must be true or false, got "):
        request.parse({**_minimal(request), name: value})
    assert getattr(request.parse({**_minimal(request), name: True}), name) is True


@pytest.mark.parametrize(("tool", "name"), LIST_FIELDS, ids=[f"{t}.{n}" for t, n in LIST_FIELDS])
@pytest.mark.parametrize("value", ["fact", 5, True, {"fact": 1}, ["fact", 5]])
def test_a_list_is_a_json_array_of_strings(tool: str, name: str, value: Any) -> None:
    request = TOOLS_BY_NAME[tool].request
    with pytest.raises(InvalidInput, match=rf"^{name} must be a list of strings, got "):
        request.parse({**_minimal(request), name: value})


def test_list_items_keep_their_limits_and_null_takes_the_default() -> None:
    base = {"text": "Staging is at staging.acme.dev."}
    for values, message in (
        ({"tags": ["t"] * 51}, "tags has too many items (51; at most 50)"),
        ({"tags": ["x" * 201]}, "tag is too long (201 characters; at most 200)"),
        ({"paths": [" "]}, "path must not be empty"),
        ({"force": None, "type": None, "tags": None}, None),
    ):
        if message is None:
            parsed = RememberRequest.parse({**base, **values})
            assert (parsed.force, parsed.type, parsed.tags) == (False, "fact", ())
            continue
        with pytest.raises(InvalidInput) as caught:
            RememberRequest.parse({**base, **values})
        assert caught.value.one_line() == message
    with pytest.raises(InvalidInput, match=r"^text is required$"):
        RememberRequest.parse({"text": None})
