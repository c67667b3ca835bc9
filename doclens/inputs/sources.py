"""The instances a report page shows beside its scores (``doclens report --input``): the scored
input looked up by id, whatever its format.

A plain JSON Lines file is looked up line by line without being held
(:class:`doclens.inputs.jsonl.SourceIndex`); any other input ``doclens score`` reads (CSV, TSV,
Parquet, a JSON array, a saved dataset, outputs joined with ``--references``, with the same
``--columns`` / ``--reference-columns``) is read once through
:func:`doclens.inputs.references.read_instances` and held by id (:class:`InstanceIndex`). Each row
carries the ``source_units`` the scores were computed with (the signature's ``units:`` field), so
a source ACI-BENCH publishes unnumbered is numbered on the page exactly as it was when scored.
"""

from __future__ import annotations

from collections.abc import Iterable

from doclens.core.types import Instance


class InstanceIndex:
    """Instances held by id (the first of an id kept): what a report page needs of each, its
    prediction and source. Same interface as :class:`doclens.inputs.jsonl.SourceIndex`."""

    def __init__(self, instances: Iterable[Instance]):
        self.rows: dict[str, dict] = {}
        for instance in instances:
            self.rows.setdefault(instance.id, {"id": instance.id, "prediction": instance.prediction,
                                               "source": instance.source})
        self.offsets = self.rows  # the ids it holds, as SourceIndex names them
        self.unreadable: list[str] = []

    def get(self, ident: str) -> dict | None:
        return self.rows.get(ident)

    def close(self) -> None:
        self.rows = {}


class NumberedSources:
    """An index whose rows say how their source was cut into units when scored
    (``source_units``: ``lines``, ``turns`` … or ``given``)."""

    def __init__(self, index, units: str):
        self.index, self.units = index, units
        self.offsets, self.unreadable = index.offsets, index.unreadable

    def get(self, ident: str) -> dict | None:
        row = self.index.get(ident)
        return None if row is None else {**row, "source_units": self.units}

    def close(self) -> None:
        self.index.close()


def open_sources(path: str, units: str = "given", *, input_format: str | None = None, split: str | None = None,
                 columns=None, references: str | None = None, reference_columns=None) -> NumberedSources:
    """The scored input at ``path`` by id, for a report page (module docstring)."""
    from doclens.inputs.jsonl import SourceIndex
    from doclens.inputs.references import read_instances
    from doclens.inputs.tables import detect_format

    plain = not (columns or references or reference_columns or split)
    if plain and (input_format or detect_format(path)) == "jsonl":
        return NumberedSources(SourceIndex(path), units)
    return NumberedSources(InstanceIndex(read_instances(path, input_format=input_format, split=split, columns=columns,
                                                        references=references, reference_columns=reference_columns)),
                           units)
