"""What drives the scorer over chunks and where finished chunks go: sinks (memory, or the
journal and output files), the progress bar, the Ray engine."""
