"""Where a hook's questions are answered: a running server of the vault, or this process.

A hook runs on every prompt, so it must not load the embedding model each time.
When ``memvault serve`` or ``memvault mcp`` serves the vault (``.memvault/serve.json``
names a live process), :class:`ServedVault` asks it over loopback HTTP with the
token the file holds: the model and the indexes are warm there.  Otherwise
:class:`LocalVault` opens the vault in this process.  Both answer the JSON the
HTTP API answers (``contract/``), so the hook does not care which it talks to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..vault import Vault

REQUEST_TIMEOUT = 10.0  # seconds; past it the hook answers in-process instead


class Unavailable(Exception):
    """The server cannot answer (gone, refused, timed out, or answered an error)."""


class Answers(Protocol):
    """What the hooks ask a vault."""

    def context(self, task: str, project: str | None, budget: int | None) -> dict[str, Any]:
        """The context manifest of a session's start (``POST /v1/context``'s answer, an overview)."""

    def search(self, query: str, project: str | None, limit: int) -> dict[str, Any]:
        """The search result (``POST /v1/search``'s answer), narrowed to ``project`` and the global memories."""


class ServedVault:
    """A running server of the vault, asked over loopback HTTP."""

    def __init__(self, host: str, port: int, token: str):
        self.host, self.port, self.token = host, port, token

    @classmethod
    def find(cls, root: Path) -> ServedVault | None:
        """The server ``root``'s ``serve.json`` names (only one this user's server wrote, on a loopback
        address: :func:`~vault_engine.served.read_served`), if its process is alive."""
        from ..served import alive, read_served

        served = read_served(root)
        if served is None or not alive(served.pid):
            return None
        return cls(served.host, served.port, served.token)

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        import http.client

        payload = json.dumps(body).encode("utf-8")
        connection = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
        try:
            connection.request("POST", path, payload, {
                "Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                "Host": f"{self.host}:{self.port}" if ":" not in self.host else f"[{self.host}]:{self.port}"})
            response = connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise Unavailable(f"server at {self.host}:{self.port}: {exc}") from None
        finally:
            connection.close()
        try:
            answer = json.loads(data)
        except ValueError:
            raise Unavailable(f"server answered {response.status} with no JSON") from None
        if response.status != 200 or not isinstance(answer, dict):
            error = answer.get("error", {}) if isinstance(answer, dict) else {}
            raise Unavailable(f"server answered {response.status}: {error.get('message', 'no message')}")
        return answer

    def context(self, task: str, project: str | None, budget: int | None) -> dict[str, Any]:
        body: dict[str, Any] = {"task": task, "project": project, "overview": True}
        if budget is not None:
            body["budget"] = budget
        return self._post("/v1/context", body)

    def search(self, query: str, project: str | None, limit: int) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "limit": limit}
        body["project" if project else "all_projects"] = project or True
        return self._post("/v1/search", body)


class LocalVault:
    """The vault opened in this process (loads the model on the first search)."""

    def __init__(self, vault: Vault):
        self.vault = vault

    def context(self, task: str, project: str | None, budget: int | None) -> dict[str, Any]:
        from ..context.director import TaskRequest, build

        # The same task at every session start: its vector is kept, so the next one loads no model.
        return build(self.vault, TaskRequest(task, project=project, budget=budget, overview=True,
                                             keep_vector=True)).to_json()

    def search(self, query: str, project: str | None, limit: int) -> dict[str, Any]:
        from ..retrieval.searcher import SearchQuery

        return dict(self.vault.search(SearchQuery(query, limit=limit, project=project)).to_json())
