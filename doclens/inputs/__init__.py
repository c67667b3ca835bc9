"""What is read first: instances from JSONL files and tables, and a submission's predictions
joined by id with a references table."""
