"""The pipeline: :class:`doclens.DocLens` prepares instances, asks the evaluator, counts the
verdicts and builds the :class:`doclens.Report`; also the run signature and the dry-run estimate."""
