"""The context director: what an agent should know before a task, and where it is exported."""
