"""CPU runtimes for the in-process NLI judges (``runtime=``; ``docs/design.md`` §2, "NLI runtimes").

* ``torch`` (default) — the ``transformers`` model as loaded, in the judge's dtype.
* ``onnx`` — the same model exported to ONNX (``torch.onnx.export``, TorchScript exporter) and run
  by ONNX Runtime's CPU provider in float32. Same weights, same arithmetic up to float rounding
  (logits differ by ~1e-5): verdicts equal the torch path's except for a pair whose margin is
  that small.
* ``onnx-int8`` — that ONNX model with ONNX Runtime's dynamic int8 quantisation of its weights
  (``onnxruntime.quantization.quantize_dynamic``). Faster, but the logits move: verdicts near
  the decision boundary change.
* ``bf16-checked`` (the ``nli`` classifier judge only) — a bfloat16 copy of the model judges
  every input; an input whose verdict is within :data:`RECHECK_MARGIN` logits of the decision
  boundary is judged again by the float32 model, whose verdict stands. bf16 moves this
  project's benchmark logits by at most ~0.2, so verdicts equal float32's unless bf16 errs by
  more than the margin; fast only on a CPU with AVX512-BF16 or AMX (elsewhere torch emulates
  bf16 and it is slower). Source support (3-way probabilities) uses the float32 model.
* ``torch-int8`` — torch's dynamic int8 quantisation of every ``nn.Linear``
  (``torch.ao.quantization.quantize_dynamic``, deprecated by torch in favour of ``torchao`` but
  still shipped); logits move as with ``onnx-int8``.

Every runtime but ``torch`` runs on the CPU in float32 (a GPU user keeps ``torch``). The runtime
is part of the judge's signature and of its cache keys, so verdicts of different runtimes never
mix. Measured speeds and agreement: ``cards/in-process-evaluators.md`` ("Runtimes").
ONNX Runtime comes with the ``[onnx]`` extra.
"""

from __future__ import annotations

import copy
import logging
import tempfile
import warnings
from pathlib import Path
from types import SimpleNamespace

from doclens.core.errors import ConfigurationError, require

#: The runtimes an in-process NLI judge can run its model on; the first is the default.
RUNTIMES = ("torch", "onnx", "onnx-int8", "torch-int8", "bf16-checked")

#: ``bf16-checked``: an input whose bf16 decision margin (logits) is below this is judged again in
#: float32. The largest bf16 logit error measured on the benchmark's 1,197 inputs was 0.18
#: (cards/in-process-evaluators.md, Runtimes); 0.3 leaves room and re-runs about 5 % of them.
RECHECK_MARGIN = 0.3


def check_runtime(runtime: str) -> str:
    if runtime not in RUNTIMES:
        raise ConfigurationError(f"unknown NLI runtime {runtime!r}; use one of {', '.join(RUNTIMES)}")
    return runtime


def apply_runtime(judge, sample: dict):
    """The network ``judge`` runs for its runtime: its torch model as is, quantised, or an
    ONNX Runtime session behind the same call (``network(**batch).logits``). ``sample`` is a
    padded batch of the judge's inputs (tensors, with the names the model is called with):
    the export traces it."""
    if judge.runtime == "torch":
        return judge.network
    torch = judge.torch
    if judge.device != "cpu" or judge.dtype != torch.float32:
        raise ConfigurationError(f"runtime {judge.runtime!r} runs on the CPU in float32; this judge is set to "
                                 f"{judge.device} / {str(judge.dtype).replace('torch.', '')} (use runtime='torch' there, "
                                 "or device='cpu')")
    if judge.runtime == "bf16-checked":
        if not getattr(judge, "supports_recheck", False):
            raise ConfigurationError(f"runtime 'bf16-checked' is for the 'nli' classifier judge, not {judge.name!r}")
        judge.exact_network = judge.network
        return copy.deepcopy(judge.network).to(torch.bfloat16).eval()
    if judge.runtime == "torch-int8":
        with warnings.catch_warnings():  # torch announces the move to torchao; the API still works
            warnings.simplefilter("ignore")
            return torch.ao.quantization.quantize_dynamic(judge.network, {torch.nn.Linear}, dtype=torch.qint8)
    return OnnxNetwork(judge.network, sample, quantise=judge.runtime == "onnx-int8",
                       threads=torch.get_num_threads())


def _logits_module(network, names: list[str]):
    """A module that calls the model with named inputs and returns its logits alone (what the
    exporter traces: a tensor, no cache objects)."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.network = network

        def forward(self, *tensors):
            extra = {"use_cache": False} if network.config.is_encoder_decoder else {}
            return self.network(**dict(zip(names, tensors)), **extra, return_dict=True).logits

    return Logits()


class OnnxNetwork:
    """The judge's model exported to ONNX and run by ONNX Runtime (CPU provider, ``threads``
    intra-op threads, like torch's pool). Called like the torch model; returns ``.logits`` as a
    torch tensor. ``config`` is the torch model's."""

    def __init__(self, network, sample: dict, quantise: bool, threads: int):
        import torch

        ort = require("onnxruntime", "NLI runtime 'onnx'", "onnx")
        self.config = network.config
        self.names = list(sample)
        axes = {name: {0: "batch", 1: f"{name}_length"} for name in self.names}  # decoder ids: a length of their own
        with tempfile.TemporaryDirectory(prefix="doclens-onnx-") as folder:
            path = Path(folder) / "model.onnx"
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")  # the exporter's tracer warnings (shape-dependent branches)
                torch.onnx.export(_logits_module(network, self.names).eval(), tuple(sample[n] for n in self.names),
                                  str(path), input_names=self.names, output_names=["logits"],
                                  dynamic_axes={**axes, "logits": {0: "batch"}}, opset_version=17, dynamo=False)
            if quantise:
                from onnxruntime.quantization import QuantType, quantize_dynamic

                quantised = Path(folder) / "model-int8.onnx"
                previous = logging.root.manager.disable
                logging.disable(logging.WARNING)  # its root-logger advice to pre-process (shape inference) first
                try:
                    quantize_dynamic(str(path), str(quantised), weight_type=QuantType.QInt8)
                finally:
                    logging.disable(previous)
                path = quantised
            import onnx

            #: the graph's operator types (int8: ``MatMulInteger`` / ``DynamicQuantizeLinear``)
            self.operators = {node.op_type for node in onnx.load(str(path)).graph.node}
            options = ort.SessionOptions()
            options.intra_op_num_threads = max(1, int(threads))
            options.inter_op_num_threads = 1
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def __call__(self, use_cache: bool = False, **batch):
        """``.logits`` for a batch named as at export; ``use_cache`` is accepted and ignored (the
        exported graph returns logits alone and builds no key/value cache)."""
        import torch

        unknown = set(batch) - set(self.names)
        if unknown:
            raise ConfigurationError(f"the ONNX model was exported with inputs {self.names}; called with {sorted(unknown)}")
        feeds = {name: batch[name].cpu().numpy() for name in self.names}
        return SimpleNamespace(logits=torch.from_numpy(self.session.run(["logits"], feeds)[0]))

    def to(self, device):  # the judge moves its network; this one stays on the CPU
        return self

    def eval(self):
        return self
