"""The on-disk vector store: one FAISS index per (record, encoder), so a patient's record is
encoded once for every system scored against it, in this run and the next.

Why FAISS (``faiss-cpu``): it is one 18 MB wheel whose only dependency is numpy, it installs
offline here without touching numpy or scipy, and an exact inner-product index
(``IndexFlatIP``) over 10,000 facts of 384 dimensions is 15 MB on disk and searched in a few
milliseconds — one record never needs an approximate index. LanceDB would bring pyarrow (which
this project already has to hold at <26 for scispaCy) and a columnar table format; Qdrant's
local mode brings its client with gRPC, httpx and pydantic. Neither adds anything a one-record
exact search needs.

Layout: ``<directory>/<key>/vectors.faiss`` and ``meta.json``; the key is a hash of the facts'
content hash (:func:`doclens.retrieval.facts.facts_hash`), the encoder's fingerprint (content of
its folder) and the settings that change a vector (pooling, ``max_length``). A store entry is
written to a temporary folder and renamed into place, so a crash or a concurrent writer never
leaves a half-written entry; an entry that cannot be read (or whose row count does not match)
is rebuilt, with a warning. Every entry is sealed with the user's key (``meta.json``'s ``hmac``,
:func:`entry_seal_parts`; ``docs/caches.md``): one whose seal does not check (crafted by whoever
can write the folder, another user's, or written before issue 47) is rebuilt, with one warning
naming it, and its index is never loaded. A folder that cannot be written (read-only, on a read-only file
system) costs the encoding again in a later run, nothing else: one warning, the run goes on with
the index in memory (``doclens.evaluators.cache.set_aside``). ``persist=False`` (``doclens score
--no-cache``) neither reads nor writes the folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from doclens.core.errors import require
from doclens.core.sealing import seal, sealed

logger = logging.getLogger(__name__)

STORE_VERSION = 1


def default_store_dir() -> Path:
    """``$DOCLENS_CACHE/retrieval``, else ``$XDG_CACHE_HOME/doclens/retrieval``, else
    ``~/.cache/doclens/retrieval`` (the same root as DocLens's judge cache)."""
    if os.environ.get("DOCLENS_CACHE"):
        root = Path(os.environ["DOCLENS_CACHE"]).expanduser()
    elif os.environ.get("XDG_CACHE_HOME"):
        root = Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "doclens"
    else:
        root = Path.home() / ".cache" / "doclens"
    return root / "retrieval"


def store_key(facts_digest: str, encoder_fingerprint: str, pooling: str, max_length: int) -> str:
    text = json.dumps([STORE_VERSION, facts_digest, encoder_fingerprint, pooling, max_length])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def entry_seal_parts(key: str, meta: dict, data: bytes) -> tuple:
    """What an entry's seal (``meta.json``'s ``hmac``, :mod:`doclens.core.sealing`) is made of:
    the store's name, the entry's key (an entry moved to another key is a miss), its metadata
    but the seal (as canonical JSON) and the index's bytes."""
    rest = json.dumps({k: v for k, v in meta.items() if k != "hmac"}, sort_keys=True, separators=(",", ":"))
    return "retrieval", key, rest, data


def _faiss():
    return require("faiss", "the retrieval vector store", "retrieval")


class VectorStore:
    """FAISS indexes on disk, one folder per key. ``hits`` and ``misses`` count lookups."""

    def __init__(self, directory: os.PathLike | None = None, persist: bool = True):
        self.directory = Path(directory) if directory is not None else default_store_dir()
        self.persist = persist
        self.hits = 0
        self.misses = 0

    def path(self, key: str) -> Path:
        return self.directory / key

    def load(self, key: str, rows: int):
        """The stored index of ``key`` holding ``rows`` vectors, or ``None``: an entry that cannot
        be read is rebuilt with a warning, one whose seal does not check (:func:`entry_seal_parts`) is
        rebuilt with one warning naming it (:func:`doclens.evaluators.cache.not_sealed`). The
        index is made from the bytes that were checked, never read from the folder again."""
        folder = self.path(key)
        if not self.persist or not (folder / "meta.json").is_file():
            self.misses += 1
            return None
        faiss = _faiss()
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            data = (folder / "vectors.faiss").read_bytes()
            if not isinstance(meta, dict) or not sealed(str(meta.get("hmac", "")), *entry_seal_parts(key, meta, data)):
                from doclens.evaluators.cache import not_sealed

                not_sealed(folder)
                self.misses += 1
                return None
            index = faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))
            if meta.get("rows") != rows or index.ntotal != rows:
                raise ValueError(f"{index.ntotal} vectors stored, {rows} facts expected")
        except Exception as exc:  # a damaged entry is rebuilt, never trusted
            logger.warning("retrieval store entry %s is unreadable (%s); rebuilding it", folder, exc)
            self.misses += 1
            return None
        self.hits += 1
        return index

    def save(self, key: str, vectors: np.ndarray, meta: dict):
        """Store ``vectors`` (rows of unit length) under ``key``; returns the FAISS index."""
        faiss = _faiss()
        index = faiss.IndexFlatIP(int(vectors.shape[1]))
        if len(vectors):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        if self.persist:
            try:
                self._write(key, index, vectors, meta)
            except (OSError, RuntimeError) as exc:  # a folder that cannot be written (faiss raises RuntimeError)
                from doclens.evaluators.cache import set_aside

                self.persist = False
                set_aside(self.directory, exc, writing=True)
        return index

    def _write(self, key: str, index, vectors: np.ndarray, meta: dict) -> None:
        faiss = _faiss()
        self.directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=self.directory))
        try:
            data = faiss.serialize_index(index).tobytes()
            (staging / "vectors.faiss").write_bytes(data)
            meta = dict(meta, rows=int(vectors.shape[0]), version=STORE_VERSION)
            meta["hmac"] = seal(*entry_seal_parts(key, meta, data)).hex()
            (staging / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
            target = self.path(key)
            if target.exists():  # a damaged entry, or another process got there first
                shutil.rmtree(target, ignore_errors=True)
            try:
                os.replace(staging, target)
            except OSError:  # another writer renamed its copy in between: theirs is as good
                pass
        finally:
            shutil.rmtree(staging, ignore_errors=True)
