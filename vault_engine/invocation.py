"""How another program runs this installation of memvault: an agent's hooks, git's merge drivers."""

from __future__ import annotations

import sys
from pathlib import Path


def memvault_command() -> list[str]:
    """This installation's ``memvault`` script when it is the one running, else ``python -m vault_engine``
    with this interpreter: either way the same code, whatever ``PATH`` says when the command runs."""
    script = Path(sys.argv[0])
    if script.name == "memvault" and script.is_file():
        return [str(script.resolve())]
    return [sys.executable, "-m", "vault_engine"]
