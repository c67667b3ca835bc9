"""Files: the instance (JSONL) reader, the checked scores-file reader, submissions, and atomic
writes with the save fallback."""
