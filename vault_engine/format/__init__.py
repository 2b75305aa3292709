"""The memory file format: the memory value, its YAML, ids, text helpers and redaction."""
