"""A run's report and its files: the ``Report`` type, the checked scores-file reader, the
streamed results files and journal, submissions and their schemas, atomic writes."""
