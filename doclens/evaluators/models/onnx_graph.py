"""A BERT encoder's ONNX graph written from its weights, without torch (``docs/design.md``,
"Sentence encoder runtimes"; issue 49).

``torch.onnx.export`` of the shipped MiniLM cost a machine's first run about 6 CPU seconds (importing
torch and ``transformers``, loading the model, tracing it): a quarter of the cold run's CPU on the
project's 2-core machine (``cards/clinical-rules.md``, "Speed where users run it"). The graph of a
BERT encoder is small and fixed, so :func:`build` writes it with ``onnx.helper`` from the
``model.safetensors`` weights (read by ``safetensors``' numpy loader) in a fraction of a second:
the embeddings (word + token type, then position) and their layer norm; per layer the
self-attention (queries, keys and values, scores scaled by 1/√head size, the padding masked with
float32's lowest value as ``transformers`` does, softmax) with its output projection, residual and
layer norm, then the feed-forward block (exact, erf-based GELU) with its residual and layer norm;
the output is the last hidden state, as the traced export's. The same arithmetic as the traced
graph up to float rounding (tests/evaluators/models/test_onnx_encoder.py compares the two). The
encoder runs :func:`build_apart`'s graph, whose weights stay numpy arrays handed to ONNX Runtime,
made at each start (about 0.2 s of CPU) and kept in no file.

Only a model :func:`buildable` accepts is written this way (``BertModel``, absolute positions,
GELU, ``model.safetensors``); any other is exported with torch as before
(:func:`doclens.evaluators.models.onnx_encoder.export`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from doclens.core.errors import require

#: Names the graph and its arithmetic in the export's file name and in the vector store's namespace
#: (a vector of this graph is never mixed with one of the traced export).
GRAPH = "bert-graph-1"
#: The ONNX opset of the graph (LayerNormalization is in 17).
OPSET = 17


def _config(folder: str | Path) -> dict | None:
    path = Path(folder) / "config.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def buildable(folder: str | Path) -> bool:
    """Whether :func:`build` writes this model's graph: a BERT encoder with absolute positions and
    GELU whose weights are in ``model.safetensors``."""
    config = _config(folder)
    return (config is not None and config.get("model_type") == "bert"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and config.get("hidden_act") == "gelu" and (Path(folder) / "model.safetensors").is_file())


#: Weights of at least this many values are handed to ONNX Runtime apart from the graph
#: (:func:`build_apart`); the smaller constants (scales, shapes) stay in it.
APART_SIZE = 1024


class _Graph:
    """Nodes and initialisers, each name made once; with ``apart``, the weights of
    :data:`APART_SIZE` values or more are kept as arrays (:attr:`weights`) and the graph holds a
    placeholder for each (external data, filled by ONNX Runtime's ``add_external_initializers``)."""

    def __init__(self, helper, numpy_helper, apart: bool = False):
        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list = []
        self.initializers: list = []
        self.weights: dict[str, np.ndarray] = {}
        self._apart = apart
        self._count = 0

    def constant(self, name: str, value: np.ndarray) -> str:
        if self._apart and value.size >= APART_SIZE:
            from onnx import TensorProto, helper

            placeholder = TensorProto(name=name, data_type=helper.np_dtype_to_tensor_dtype(value.dtype),
                                      dims=value.shape, data_location=TensorProto.EXTERNAL)
            entry = placeholder.external_data.add()
            entry.key, entry.value = "location", "handed-over-in-memory"
            self.initializers.append(placeholder)
            self.weights[name] = np.ascontiguousarray(value)
        else:
            self.initializers.append(self.numpy_helper.from_array(value, name))
        return name

    def op(self, kind: str, inputs: list[str], **attributes) -> str:
        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        self.nodes.append(self.helper.make_node(kind, inputs, [out], **attributes))
        return out

    def linear(self, x: str, weights: dict, prefix: str) -> str:
        """``x @ W.T + b`` of the layer ``prefix`` (a ``transformers`` ``nn.Linear``)."""
        w = self.constant(f"{prefix}.weight_t", np.ascontiguousarray(weights[f"{prefix}.weight"].T))
        b = self.constant(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x: str, weights: dict, prefix: str, epsilon: float) -> str:
        scale = self.constant(f"{prefix}.weight", weights[f"{prefix}.weight"])
        bias = self.constant(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=epsilon)


def _attention(g: _Graph, x: str, mask: str, weights: dict, prefix: str, heads: int, size: int) -> str:
    """One self-attention block: its context, projected (before the residual)."""
    split = g.constant(f"{prefix}.split", np.array([0, 0, heads, size // heads], dtype=np.int64))
    q, k, v = (g.op("Transpose", [g.op("Reshape", [g.linear(x, weights, f"{prefix}.self.{n}"), split])],
                    perm=[0, 2, 1, 3]) for n in ("query", "key", "value"))
    scale = g.constant(f"{prefix}.scale", np.array(1.0 / np.sqrt(size // heads), dtype=np.float32))
    scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]), scale]), mask])
    context = g.op("Transpose", [g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])], perm=[0, 2, 1, 3])
    joined = g.constant(f"{prefix}.join", np.array([0, 0, size], dtype=np.int64))
    return g.linear(g.op("Reshape", [context, joined]), weights, f"{prefix}.output.dense")


def _feed_forward(g: _Graph, x: str, weights: dict, prefix: str) -> str:
    """The intermediate layer with exact GELU, ``0.5·h·(1 + erf(h/√2))``, and the output layer."""
    h = g.linear(x, weights, f"{prefix}.intermediate.dense")
    root2, half, one = (g.constant(f"{prefix}.{n}", np.array(v, dtype=np.float32))
                        for n, v in (("root2", np.sqrt(2.0)), ("half", 0.5), ("one", 1.0)))
    gelu = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", [g.op("Erf", [g.op("Div", [h, root2])]), one])])
    return g.linear(gelu, weights, f"{prefix}.output.dense")


def build(folder: str | Path) -> bytes:
    """The ONNX bytes of the BERT encoder in ``folder`` (:func:`buildable`): inputs ``input_ids``,
    ``attention_mask``, ``token_type_ids`` (int64, batch × length), output ``hidden`` (its last
    hidden state, float32). The weights are in the bytes (about 90 MB for MiniLM)."""
    return _build(folder, apart=False)[0]


def build_apart(folder: str | Path) -> tuple[bytes, dict[str, np.ndarray]]:
    """:func:`build`'s graph with its weights apart: the graph's bytes (about 110 kB for MiniLM:
    each weight a placeholder) and the weights by name, as ``SessionOptions.add_external_initializers``
    takes them. The same graph and the same arithmetic as :func:`build`'s (bit for bit:
    tests/evaluators/models/test_onnx_encoder.py), without copying 90 MB into a protobuf, checking,
    writing, sealing and parsing it again: what a first run did once and every later run that
    encoded paid in reading the kept file and checking its seal (issue 49)."""
    return _build(folder, apart=True)


def _build(folder: str | Path, apart: bool) -> tuple[bytes, dict[str, np.ndarray]]:
    onnx = require("onnx", "writing the sentence encoder's ONNX graph", "clinical")
    safetensors_numpy = require("safetensors.numpy", "reading the sentence encoder's weights", "clinical")
    from onnx import TensorProto, helper, numpy_helper

    config = _config(folder) or {}
    weights = {name.removeprefix("bert."): value
               for name, value in safetensors_numpy.load_file(str(Path(folder) / "model.safetensors")).items()}
    size, heads, epsilon = int(config["hidden_size"]), int(config["num_attention_heads"]), float(config["layer_norm_eps"])
    g = _Graph(helper, numpy_helper, apart)
    # embeddings: words + token types, then positions (BertEmbeddings' order), then the layer norm
    words = g.op("Gather", [g.constant("word_embeddings", weights["embeddings.word_embeddings.weight"]), "input_ids"])
    types = g.op("Gather", [g.constant("token_type_embeddings", weights["embeddings.token_type_embeddings.weight"]),
                            "token_type_ids"])
    length = g.op("Gather", [g.op("Shape", ["input_ids"]), g.constant("one_index", np.array([1], dtype=np.int64))])
    positions = g.op("Slice", [g.constant("position_embeddings", weights["embeddings.position_embeddings.weight"]),
                               g.constant("zero_index", np.array([0], dtype=np.int64)), length,
                               g.constant("zero_axis", np.array([0], dtype=np.int64))])
    x = g.layer_norm(g.op("Add", [g.op("Add", [words, types]), positions]), weights, "embeddings.LayerNorm", epsilon)
    # the padding mask added to every score: 0 where attended, float32's lowest value where padded
    lowest = g.constant("lowest", np.array(np.finfo(np.float32).min, dtype=np.float32))
    padded = g.op("Sub", [g.constant("mask_one", np.array(1.0, dtype=np.float32)),
                          g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)])
    mask = g.op("Unsqueeze", [g.op("Mul", [padded, lowest]), g.constant("mask_axes", np.array([1, 2], dtype=np.int64))])
    for n in range(int(config["num_hidden_layers"])):
        prefix = f"encoder.layer.{n}"
        attended = _attention(g, x, mask, weights, f"{prefix}.attention", heads, size)
        x = g.layer_norm(g.op("Add", [attended, x]), weights, f"{prefix}.attention.output.LayerNorm", epsilon)
        x = g.layer_norm(g.op("Add", [_feed_forward(g, x, weights, prefix), x]), weights,
                         f"{prefix}.output.LayerNorm", epsilon)
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "length"])
              for name in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", size])
    model = helper.make_model(helper.make_graph(g.nodes, GRAPH, inputs, [output], g.initializers),
                              opset_imports=[helper.make_opsetid("", OPSET)], producer_name="doclens")
    model.ir_version = 8  # what ONNX Runtime 1.32 and opset 17 read
    if not apart:  # the checker looks for the placeholders' files; the graph is build()'s, checked there
        onnx.checker.check_model(model)
    return model.SerializeToString(), g.weights
