"""The vault for agents and editors: one service, its JSON views, the HTTP API and the MCP server."""
