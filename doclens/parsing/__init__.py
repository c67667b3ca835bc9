"""Reading text: statements and their citations, note sections, source units, claim lists and
judge replies. Pure functions over strings; no model, no file."""
