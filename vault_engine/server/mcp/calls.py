"""One tool call: look the tool up, check its arguments, run it, render the result; never raise."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import InvalidInput, VaultError
from ...format.text import printable
from ..project import CurrentProject
from ..service import MemoryService
from ..views import error_json
from .arguments import check_arguments
from .tools import TOOLS_BY_NAME

log = logging.getLogger("vault_engine.mcp")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one tool call gives back: the text for the model, the JSON view, and whether it failed."""

    text: str
    structured: dict[str, Any]
    is_error: bool = False


def failure(exc: BaseException) -> Outcome:
    """A tool error: a :class:`VaultError`'s one line, or "internal error (Type: message)" for anything else."""
    if isinstance(exc, VaultError):
        return Outcome(f"error: {exc.one_line()}", error_json(exc), True)
    message = " ".join(str(exc).split())
    line = f"internal error ({type(exc).__name__}: {message})" if message else f"internal error ({type(exc).__name__})"
    return Outcome(f"error: {line}", {"error": {"kind": "InternalError", "message": line}}, True)


def call_tool(service: MemoryService, name: str, arguments: Mapping[str, Any] | None,
              here: CurrentProject | None = None) -> Outcome:
    """Run tool ``name``; never raises (every failure is an error :class:`Outcome`)."""
    try:
        spec = TOOLS_BY_NAME.get(name)
        if spec is None:
            raise InvalidInput(f"unknown tool {name!r}; the tools are {', '.join(TOOLS_BY_NAME)}")
        args = check_arguments(spec, arguments)
        result = spec.call(service, args, here or CurrentProject())
    except VaultError as exc:
        log.info("%s: %s", name, exc.one_line())
        return failure(exc)
    except Exception as exc:
        log.exception("%s failed", name)
        return failure(exc)
    try:
        text = printable(spec.render(result))  # shown in an agent's terminal: no escape sequence runs
    except Exception:  # the call is done: a rendering bug must not turn it into a failure
        log.exception("%s: cannot render the result", name)
        text = json.dumps(result, ensure_ascii=False, default=str)
    return Outcome(text, result)
