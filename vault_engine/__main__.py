"""``python -m vault_engine`` runs the memvault CLI."""

from .cli import main

main()
