"""The root group of ``memvault``: every failure of a command becomes one line on stderr."""

from __future__ import annotations

from typing import Any

import click

from ..config import environment
from ..errors import VaultError
from .options import Settings, echo

DEBUG_ENV = "MEMVAULT_DEBUG"


def _usage_error(exc: click.UsageError) -> None:
    """Report a usage error as one line (exit code 2), pointing at the right --help."""
    command = exc.ctx.command_path if exc.ctx is not None else "memvault"
    echo(f"error: {exc.format_message()} (see: {command} --help)", err=True)
    raise click.exceptions.Exit(2)


class MemvaultGroup(click.Group):
    """Root group that turns every failure into one line on stderr."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            if isinstance(exc, click.exceptions.NoArgsIsHelpError):
                raise
            _usage_error(exc)
            raise  # unreachable: _usage_error always raises

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultError as exc:
            _cache_notices()
            echo(f"error: {exc.one_line()}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            echo("interrupted", err=True)
            ctx.exit(130)
        except click.UsageError as exc:
            if isinstance(exc, click.exceptions.NoArgsIsHelpError):
                raise
            _usage_error(exc)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            echo(f"error: {where}{exc.strerror or exc}", err=True)
            ctx.exit(1)
        except Exception as exc:  # a bug: still one line, with a way to see more
            if environment().debug:
                raise
            echo(
                f"error: internal error ({type(exc).__name__}: {exc}); set {DEBUG_ENV}=1 for a traceback",
                err=True,
            )
            ctx.exit(70)


@click.group(cls=MemvaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--vault", "vault_path", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Vault folder (default: $MEMVAULT_DIR, a vault above the current folder, or ~/.memvault/vault).")
@click.option("--json", "as_json", is_flag=True, default=False, help="Print one JSON document.")
@click.version_option(package_name="memvault", prog_name="memvault")
@click.pass_context
def cli(ctx: click.Context, vault_path: str | None, as_json: bool) -> None:
    """memvault: a file-based memory vault for LLM agents.

    Every memory is a markdown file with YAML frontmatter in a git-trackable
    vault. Run `memvault COMMAND --help` for one command.

    \b
    Example:
        memvault add "Tests use pytest fixtures, not setUp" --project github.com/acme/api
        memvault list --json
    """
    ctx.obj = Settings(vault_path=vault_path, as_json=as_json)


@cli.result_callback()
@click.pass_obj
def _after(settings: Settings, /, *_args: object, **_kwargs: object) -> None:
    """After any command: say so when a write could not update the search indexes."""
    for warning in settings.index_warnings():
        echo(warning, err=True)
    _cache_notices()


def _cache_notices() -> None:
    """What the caches could not do during the command and no answer carried yet: one line each, on stderr."""
    from ..index import notices

    for line in notices.take():
        echo(line, err=True)

