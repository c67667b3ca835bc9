"""A sentence encoder's transformer run by ONNX Runtime (``Encoder(runtime="onnx")``,
:mod:`doclens.evaluators.models.sentence_encoder`; ``docs/design.md``, "Sentence encoder runtimes").

A BERT encoder's graph (the shipped MiniLM) is made in memory at each start by
:func:`doclens.evaluators.models.onnx_graph.build_apart`, without torch, its weights handed to the
session as arrays (no file: issue 49; until round 13 a 90 MB file was written, sealed, and read and
checked again by each later run, for a graph derived from the package's data alone). Any other model
is exported once a machine with ``torch.onnx.export`` (TorchScript exporter, opset 17, float32,
batch and length dynamic; ``models/<fingerprint>-torch<version>-opset17.onnx``), :func:`onnx_path`,
sealed with the user's key and checked before it is loaded: ``docs/caches.md``; a folder that
cannot be written keeps it in memory for the process). After that a run imports neither torch nor
``transformers``: the text is cut into word pieces by the model's own ``tokenizer.json`` through
the ``tokenizers`` library (the same ids as ``transformers``' fast tokenizer, which wraps it) and
the graph runs in an ONNX Runtime session of one thread a run (no intra-op pool), ``threads``
batches at once, each in a thread of its own (:meth:`OnnxTransformer.pooled_batches`), so it leaves
the process's torch and BLAS pools as they are.

Same weights, same arithmetic up to float rounding: the pooled vectors differ from torch's by
about 3e-7; ``clinical-rules``' verdicts were compared on the 21 systems of ACI-BENCH test 2
(``cards/clinical-rules.md``, "Speed").
"""

from __future__ import annotations

import io
import json
import logging
import warnings
from pathlib import Path

import numpy as np

from doclens.core.errors import ConfigurationError, require

logger = logging.getLogger(__name__)

#: The ONNX opset of the export (ONNX Runtime 1.32 runs up to 23; 17 has LayerNormalization).
OPSET = 17
#: The graph's inputs, as BERT-style encoders take them.
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_path(fingerprint: str, torch_version: str, directory: Path | None = None, graph: str | None = None) -> Path:
    """Where the export of the model with content ``fingerprint`` is kept: ``directory``, else
    ``models/`` in the DocLens cache folder; named by what made it, ``graph`` (a graph written from
    the weights, :data:`doclens.evaluators.models.onnx_graph.GRAPH`) or else torch's version."""
    from doclens.evaluators.cache import default_cache_dir

    folder = directory if directory is not None else default_cache_dir() / "models"
    return Path(folder) / f"{fingerprint}-{graph or 'torch' + torch_version}-opset{OPSET}.onnx"


def graph_of(folder: str | Path) -> str | None:
    """The name of the graph :mod:`~doclens.evaluators.models.onnx_graph` writes for the model in
    ``folder`` (a BERT encoder), or ``None``: it is exported with torch (:func:`export`)."""
    from doclens.evaluators.models.onnx_graph import GRAPH, buildable

    return GRAPH if buildable(folder) else None


def export(folder: str) -> bytes:
    """The ONNX bytes of the ``transformers`` encoder in ``folder`` (its last hidden state)."""
    torch = require("torch", "exporting the sentence encoder to ONNX", "clinical")
    transformers = require("transformers", "exporting the sentence encoder to ONNX", "clinical")
    model = transformers.AutoModel.from_pretrained(folder).eval()

    class Hidden(torch.nn.Module):  # type: ignore[name-defined]  # torch is imported lazily
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    sample = (ids, (ids != 0).long(), torch.zeros_like(ids))
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's warnings on shape-dependent branches
        torch.onnx.export(Hidden().eval(), sample, buffer, input_names=list(INPUTS), output_names=["hidden"],
                          dynamic_axes={**{n: {0: "batch", 1: "length"} for n in INPUTS},
                                        "hidden": {0: "batch", 1: "length"}},
                          opset_version=OPSET, dynamo=False)
    return buffer.getvalue()


#: ``exported``'s ``directory`` for an export never written (``doclens score --no-cache``): the
#: cache folder's export is used where a run kept one sealed with this user's key (a model file,
#: not an answer; ``docs/caches.md``), else the model is exported into memory for the process
IN_MEMORY = "in memory"
#: what a kept export's seal is made for (:func:`doclens.evaluators.cache.write_sealed_file`)
SEAL_KIND = "onnx export"


def exported(folder: str, fingerprint: str, directory: Path | str | None = None) -> bytes:
    """The model's ONNX bytes: the kept export's, read once and checked against this user's seal
    (``docs/caches.md``), else made now (a BERT encoder's graph written from its weights by
    :func:`doclens.evaluators.models.onnx_graph.build`, any other model exported by torch) and
    kept (in memory only when the folder cannot be written, or when ``directory`` is
    :data:`IN_MEMORY`); ``directory`` ``None``: the cache folder's ``models/``. A kept file whose
    seal does not check (crafted, another user's, kept before issue 47) is never loaded: one
    warning names it, and it is made again (and
    overwritten, :data:`IN_MEMORY` aside)."""
    from importlib.metadata import version

    from doclens.evaluators.cache import read_sealed_file, write_sealed_file

    memory = directory == IN_MEMORY
    graph = graph_of(folder)
    path = onnx_path(fingerprint, "" if graph else version("torch"),
                     None if memory or directory is None else Path(directory), graph)
    kept = read_sealed_file(path, SEAL_KIND)
    if kept is not None:
        return kept
    if graph:  # a BERT encoder: its graph written from the weights, no torch (onnx_graph.py)
        from doclens.evaluators.models.onnx_graph import build

        data = build(folder)
    else:
        data = export(folder)
    if not memory:
        try:
            write_sealed_file(path, SEAL_KIND, data)
        except OSError as exc:  # a read-only cache folder: exported again at the next start, nothing else
            logger.debug("ONNX export %s not written: %s", path, exc)
    return data


#: Loaded models by (folder, fingerprint, max_length, threads): a process that makes several judges
#: (tests, a Ray worker, a reward beside a scorer) loads each once; a session runs calls from any thread.
_LOADED: dict[tuple, OnnxTransformer] = {}


def load(folder: str, fingerprint: str, max_length: int, threads: int,
         directory: Path | str | None = None) -> OnnxTransformer:
    """The :class:`OnnxTransformer` of the model, loaded once a process (``directory``: :func:`exported`'s)."""
    key = (str(folder), fingerprint, max_length, threads)
    found = _LOADED.get(key)
    if found is None:
        found = _LOADED[key] = OnnxTransformer(folder, fingerprint, max_length, threads, directory)
    return found


class OnnxTransformer:
    """``hidden(texts)`` → ``(last hidden states, attention mask)`` as numpy arrays, from ONNX
    Runtime; ``ids(texts)`` → each text's word-piece ids, cut at ``max_length``."""

    def __init__(self, folder: str, fingerprint: str, max_length: int, threads: int,
                 directory: Path | str | None = None):
        from tokenizers import Tokenizer

        ort = require("onnxruntime", "the sentence encoder's ONNX runtime", "clinical")
        self.max_length = max_length
        vocabulary = Path(folder) / "tokenizer.json"
        if not vocabulary.is_file():
            raise ConfigurationError(f"runtime 'onnx' reads the model's tokenizer.json, which {folder} lacks; "
                                     "use runtime='torch'")
        # two tokenizers, each set once (a shared model is called from several threads): the
        # model's input, cut at max_length, and whole texts, counted for texts_truncated
        self.tokenizer, self._whole = Tokenizer.from_file(str(vocabulary)), Tokenizer.from_file(str(vocabulary))
        for tokenizer in (self.tokenizer, self._whole):
            tokenizer.no_padding()
            tokenizer.no_truncation()
        self.tokenizer.enable_truncation(max_length)
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
        self.pad_id = int(config.get("pad_token_id") or 0)
        self.hidden_size = int(config["hidden_size"])
        #: how many batches :meth:`pooled_batches` runs at once, each in a thread of its own
        self.runs = max(1, int(threads))
        options = ort.SessionOptions()
        # one thread a run: the count is spent on whole batches run at once, not on a pool whose
        # threads wait on each other (core/threads.py); a batch's arithmetic is the same at any count
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-wait (core/threads.py)
        options.log_severity_level = 3
        if graph_of(folder):  # a BERT encoder: its graph made now, its weights handed over as arrays (no file)
            from doclens.evaluators.models.onnx_graph import build_apart

            graph, weights = build_apart(folder)
            #: the weights' buffers, which the session reads in place: kept alive as long as it is
            self._weights = [ort.OrtValue.ortvalue_from_numpy(array) for array in weights.values()]
            options.add_external_initializers(list(weights), self._weights)
            self.session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        else:
            self.session = ort.InferenceSession(exported(folder, fingerprint, directory), options,
                                                providers=["CPUExecutionProvider"])

    def lengths(self, texts: list[str]) -> tuple[list[int], int]:
        """Each text's length in tokens (at most ``max_length``) and how many were longer."""
        whole = [len(self._whole.encode(text).ids) for text in texts]  # one at a time: no tokenizer pool
        return [min(n, self.max_length) for n in whole], sum(n > self.max_length for n in whole)

    def hidden(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        encodings = [self.tokenizer.encode(text) for text in texts]
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(texts), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        types = np.zeros((len(texts), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, :len(encoding.ids)] = encoding.ids
            mask[row, :len(encoding.ids)] = encoding.attention_mask
            types[row, :len(encoding.ids)] = encoding.type_ids
        hidden = self.session.run(["hidden"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        return hidden.astype(np.float32, copy=False), mask

    def pooled_batches(self, batches: list[list[str]], mode: str) -> list[np.ndarray]:
        """Each batch's pooled rows (:func:`pool`), in order. With :attr:`runs` > 1 that many
        batches run at once, each whole in a thread of its own (ONNX Runtime's ``run`` releases the
        GIL and a session takes concurrent runs): the threads share nothing but the queue of
        batches, so none waits on another, and each batch is computed as it would be alone, its
        rows the same bit for bit (tests/evaluators/models/test_onnx_encoder.py). Batches come
        longest first, so the last ones, which may leave a thread idle, are the shortest."""
        def one(texts: list[str]) -> np.ndarray:
            hidden, mask = self.hidden(texts)
            return pool(hidden, mask, mode)

        runs = min(self.runs, len(batches))
        if runs <= 1:
            return [one(texts) for texts in batches]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(runs, thread_name_prefix="doclens-encoder") as workers:
            return list(workers.map(one, batches))


def pool(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Pooled and L2-normalised rows, as the torch path computes them (``cls``, ``max`` or mean)."""
    weights = mask[..., None].astype(np.float32)
    if mode == "cls":
        pooled = hidden[:, 0]
    elif mode == "max":
        pooled = np.where(weights > 0, hidden, -np.inf).max(axis=1)
    else:
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
