"""Labelled data shipped with DocLens, and the reader of a user's own labelled items.

Each set is a folder of JSONL files with a ``DATASHEET.md`` (source, licence, sampling, labelling
rules, halves, agreement between readers). Items are (claim, premise, label) triples; a premise is
either text or a reference to a note of ACI-BENCH, read at run time from the user's copy of it
(``--aci-bench-dir``): the notes themselves are never copied into the package.
:mod:`doclens.datasets.labelled` reads both kinds; ``doclens judge-check`` measures a judge on them
and ``doclens judge-fit`` fits clinical-rules' decision model on them.
"""
