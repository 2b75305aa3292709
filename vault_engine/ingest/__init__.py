"""Learning: conversations, documents, the detail tier and reflection."""
