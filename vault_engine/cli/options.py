"""Options shared by every command, and output helpers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import click

from ..format.memory import TRUSTS

F = TypeVar("F", bound=Callable[..., Any])
ANY_TRUST = "any"  # every trust level


class ProgressBar:
    """A progress bar on stderr, drawn only on a terminal; a callable ``(done, total)``."""

    def __init__(self, label: str):
        self.label = label
        self._bar: Any = None
        self._done = 0

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            if total < 1:
                return
            self._bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self._bar.__enter__()
        self._bar.update(done - self._done)
        self._done = done
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
            self._done = 0


@dataclass(slots=True)
class Settings:
    vault_path: str | None = None
    as_json: bool = False
    opened: list[Any] = field(default_factory=list)

    def open_vault(self, *, write: bool = False) -> Any:
        """The vault; a ``write`` command keeps the indexes current (with a bar on a terminal)."""
        from ..vault import Vault

        interactive = not self.as_json and sys.stderr.isatty()
        vault = Vault.open(Path(self.vault_path) if self.vault_path else None, auto_sync=write,
                           progress=ProgressBar("embedding") if interactive else None)
        self.opened.append(vault)
        return vault

    def index_warnings(self) -> list[str]:
        return [v.index_warning for v in self.opened if getattr(v, "index_warning", None)]


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


def trust_option(help: str) -> Callable[[F], F]:
    """``--trust LEVEL``, repeatable: a trust level or ``any``; the same values for every command
    that filters by trust (``search``, ``list``)."""
    return click.option("--trust", "trust", multiple=True, type=click.Choice((*TRUSTS, ANY_TRUST)), help=help)


def emit(settings: Settings, data: Any, human: Callable[[], None]) -> None:
    """Print ``data`` as JSON with --json, else call ``human``."""
    if settings.as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        human()
