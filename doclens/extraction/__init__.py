"""Claim extraction: the extractor contract, sentences and clauses (no model), and the LLM
extractor run on a chat judge's model."""
