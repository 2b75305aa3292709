"""Governance: keeping the vault healthy without losing a memory.

Each step is a pure planner over a :class:`~.actions.View` returning
:class:`~.actions.Action` objects with reasons; :mod:`.maintain` chains the
steps into one plan, applies it write-first-then-remove, journals each action
and undoes any of them.  :mod:`.audit` reports without writing.
"""
