"""A tool call's arguments checked against the tool's input schema, in the words an agent reads.

This is the MCP boundary's own check, over the subset of JSON Schema the tools
use; it mends what a model often gets slightly wrong and can mean only one
way ("5" for 5, "true" for true). One string where a list is asked for is
refused, as over HTTP: ``"types": "fact"`` could be a list of one, or a
comma-separated list, or a slip for another field, and a guess stored
under the wrong tags is worse than a one-line error the model corrects.
The request's ``parse`` then builds the service's request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InvalidInput
from ..requests import Strings
from .tools import ToolSpec


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check(name: str, value: Any, schema: Mapping[str, Any], item_name: str | None = None) -> Any:
    """``value`` checked against the subset of JSON Schema the tools use; harmless mismatches are mended.

    ``item_name`` names one item of a list (``type`` for ``types``).
    """
    kind = schema.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise InvalidInput(f"{name} must be a string, got {_describe(value)}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise InvalidInput(f"{name} is too long ({len(value)} characters; at most {schema['maxLength']})")
        if schema.get("minLength") and not value.strip():
            raise InvalidInput(f"{name} must not be empty")
    elif kind == "integer":
        mendable = isinstance(value, str) and value.strip().isdigit()
        if mendable or (isinstance(value, float) and value.is_integer()):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidInput(f"{name} must be a whole number, got {_describe(value)}")
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise InvalidInput(f"{name} must be {bounds}, got {value}")
    elif kind == "boolean":
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if not isinstance(value, bool):
            raise InvalidInput(f"{name} must be true or false, got {_describe(value)}")
    elif kind == "array":
        if not isinstance(value, list):
            raise InvalidInput(f"{name} must be a list, got {_describe(value)}")
        if len(value) > schema.get("maxItems", len(value)):
            raise InvalidInput(f"{name} has too many items ({len(value)}; at most {schema['maxItems']})")
        value = [_check(item_name or name, item, schema["items"]) for item in value]
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(c) for c in schema["enum"])
        if kind == "integer":
            raise InvalidInput(f"{name} must be one of {choices}, got {value}")
        raise InvalidInput(f"unknown {name} {_describe(value)}; expected one of {choices}")
    return value


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments of a call to ``spec``, checked against its input schema (``null`` counts as absent).

    Raises:
        InvalidInput: an unknown or missing argument, a wrong type, a value out of bounds or not in the enum.
    """
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise InvalidInput(f"the arguments of {spec.name} must be an object")
    properties: dict[str, Any] = spec.input_schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise InvalidInput(f"unknown argument {unknown[0]!r} for {spec.name}; it takes {', '.join(properties)}")
    items = {name: arg.item_name for name, (arg, _default) in spec.request.specs().items() if isinstance(arg, Strings)}
    checked = {name: _check(name, value, properties[name], items.get(name))
               for name, value in arguments.items() if value is not None}
    for name in spec.input_schema.get("required", ()):
        if name not in checked:
            raise InvalidInput(f"{name} is required")
    return checked
