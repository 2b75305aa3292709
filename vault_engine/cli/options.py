"""Options shared by every command, and output helpers."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(slots=True)
class Settings:
    vault_path: str | None = None
    as_json: bool = False

    def open_vault(self) -> Any:
        from ..vault import Vault

        return Vault.open(Path(self.vault_path) if self.vault_path else None)


def _merge_vault(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    settings = ctx.find_object(Settings)
    if settings is not None and value:
        settings.vault_path = value
    return value


def _merge_json(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    settings = ctx.find_object(Settings)
    if settings is not None and value:
        settings.as_json = True
    return value


def common(func: F) -> F:
    """Give a command ``--vault`` and ``--json`` (also accepted before the command)."""
    func = click.option("--json", "_json", is_flag=True, expose_value=False, callback=_merge_json,
                        help="Print one JSON document.")(func)
    func = click.option("--vault", "_vault", type=click.Path(file_okay=False), expose_value=False,
                        callback=_merge_vault, help="Vault folder.")(func)
    return func


def emit(settings: Settings, data: Any, human: Callable[[], None]) -> None:
    """Print ``data`` as JSON with --json, else call ``human``."""
    if settings.as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        human()
