"""The README documents every command, and every command has help text."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from vault_engine.cli import cli

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def _commands(group: click.Group, prefix: str = "") -> list[str]:
    names = []
    for name, command in sorted(group.commands.items()):
        names.append(prefix + name)
        if isinstance(command, click.Group):
            names += _commands(command, prefix + name + " ")
    return names


@pytest.mark.parametrize("name", _commands(cli))
def test_every_command_is_in_the_readme_table(name: str) -> None:
    assert f"| `memvault {name}" in README or f"`memvault {name.split()[0]} " in README


@pytest.mark.parametrize("name", _commands(cli))
def test_every_command_has_help(name: str) -> None:
    command: click.Command = cli
    for part in name.split():
        assert isinstance(command, click.Group)
        command = command.commands[part]
    assert (command.help or "").strip(), f"memvault {name} has no help text"
