"""Maintainers' tools run as ``python -m doclens.tools.NAME``; no command and no library code imports
them (``docs/design.md`` §6: the top layer)."""
