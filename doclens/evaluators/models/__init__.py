"""Judges run in this process: NLI models, the local chat judge, and the torch and
transformers helpers they share."""
