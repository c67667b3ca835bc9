"""The :class:`Signature` type: a run's signature as fields, and the text they render to.

Runs are signed by :func:`doclens.scoring.signature.get_signature` (whose docstring says what each
field means); this module holds only the type, low enough that a report, its files and its views
hold and read signatures as data.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: one signature field, ``(key, value)``: signatures are built and compared as lists of these and
#: rendered to text once, by :func:`render_signature`
SignatureField = tuple[str, str]


def render_signature(fields: Iterable[SignatureField]) -> str:
    """``[("a", "1"), ("b", "x")]`` → ``"a:1|b:x"``: the one place a signature becomes text."""
    return "|".join(f"{key}:{value}" for key, value in fields)


def parse_signature(signature: str) -> dict[str, str]:
    """``"a:1|b:x:y"`` → ``{"a": "1", "b": "x:y"}``: the fields of a signature read back as text
    (:meth:`Signature.read`; prefer :meth:`Signature.as_dict` on a signature the run built)."""
    return dict(Signature.read(signature).fields)


class Signature(str):
    """A run's signature: ``fields`` as data, and the text they render to (the ``str`` value).

    Made from fields (``Signature(fields)``, rendered here once) or read back from text
    (:meth:`read`, the one place signature text is parsed: files written by any version). Two
    signatures are equal when their text is; numbers are comparable only under equal signatures.
    Immutable, hashable, picklable (it pickles as its fields).
    """

    fields: tuple[SignatureField, ...]

    def __new__(cls, fields: Iterable[SignatureField] = ()) -> Signature:
        fields = tuple((str(key), str(value)) for key, value in fields)
        made = super().__new__(cls, render_signature(fields))
        object.__setattr__(made, "fields", fields)
        return made

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Signature is immutable")

    def __reduce__(self):
        return (type(self), (self.fields,))

    @classmethod
    def read(cls, text: str | Signature | None) -> Signature:
        """The signature ``text`` renders (``"a:1|b:x:y"``: each ``|``-separated part split at its
        first ``:``); a :class:`Signature` is returned as it is, ``None`` or ``""`` gives the empty
        signature. The one place signature text is parsed (results files, journals, old reports)."""
        if isinstance(text, Signature):
            return text
        if not text:
            return cls()
        fields = [tuple(part.split(":", 1)) if ":" in part else (part, "") for part in text.split("|")]
        read = cls(fields)  # type: ignore[arg-type]
        if read != text:  # a key without ':' renders as 'key:' — keep the text as it was written
            read = str.__new__(cls, text)
            object.__setattr__(read, "fields", tuple(fields))
        return read

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of field ``key`` (the first, if a signature names it twice), else ``default``."""
        return next((value for name, value in self.fields if name == key), default)

    def as_dict(self) -> dict[str, str]:
        """``{key: value}`` of every field (a key named twice keeps its last value)."""
        return dict(self.fields)

    def differences(self, other: str | Signature) -> list[str]:
        """Human-readable ``field: a != b`` lines for the fields where this and ``other`` differ."""
        a, b = self.as_dict(), Signature.read(other).as_dict()
        return [f"{key}: {a.get(key, '(absent)')} != {b.get(key, '(absent)')}"
                for key in list(dict.fromkeys([*a, *b])) if a.get(key) != b.get(key)]
