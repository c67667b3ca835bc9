"""Rule judges, offline and deterministic: ``clinical-rules`` and ``overlap``."""
