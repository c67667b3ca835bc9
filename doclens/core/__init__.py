"""The bottom layer: the data types, errors and exit codes, the metric definitions and their
counting rule, the task list, and the shipped resources. Imports nothing else of doclens."""
