"""Agents: memvault in a coding agent's lifecycle, without anyone calling a tool.

- :mod:`.hooks`: ``memvault hook AGENT EVENT``, what the agent runs at session
  start, on each prompt, before compaction and at the end;
- :mod:`.backend`: where a hook's questions go (a running server, or this process);
- :mod:`.capture`: a session's transcript stored as episodes of its project, once;
- :mod:`.session`: what each session was given and what of it is stored;
- :mod:`.messages`: a transcript's messages, as every agent's reader gives them;
- :mod:`.claude_code`, :mod:`.codex`: each agent's formats and files;
- :mod:`.install`: ``memvault install AGENT``, planned, then applied.

On the way a hook takes to a running server only the standard library and memvault's own
light modules (the config reader, the project key) are imported: no model, no index, no click.
"""
