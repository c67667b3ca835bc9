"""What every in-process (``transformers``) evaluator shares: importing the ``[local]`` extra,
choosing a device and a dtype, and resolving where a model's files are.

Nothing here downloads anything by itself: a model name that is not a local path is handed to
``transformers``, which fetches from the Hub only for users who are online and have not set
``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from doclens.core.errors import ConfigurationError, require
from doclens.core.settings import DTYPES  # noqa: F401  (the vocabulary lives with the settings)


def import_torch(feature: str):
    """``(torch, transformers)`` or a :class:`~doclens.core.errors.MissingExtraError` naming ``[local]``."""
    torch = require("torch", feature, "local")
    transformers = require("transformers", feature, "local")
    return torch, transformers


def choose_device(torch, requested: str | None = None) -> str:
    """``requested`` when given (checked), else CUDA, then Apple MPS, then CPU."""
    if requested:
        try:
            torch.empty(0, device=requested)
        except (RuntimeError, AssertionError) as exc:
            raise ConfigurationError(f"device {requested!r} is not usable here: {exc}") from exc
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def set_threads(torch, threads: int | None) -> None:
    """``torch.set_num_threads(threads)`` when given (for the whole process: torch has one CPU
    thread pool). On a CPU shared with other jobs, torch's default of one thread per core can be
    several times slower than one thread (``cards/local-chat.md``, "Threads")."""
    if threads is not None:
        torch.set_num_threads(int(threads))




def choose_dtype(torch, device: str, requested: str | None = None, gpu_dtype: str = "bfloat16"):
    """``requested`` (``float32``, ``bfloat16``, ``float16``) or: ``gpu_dtype`` on a CUDA GPU
    (bf16 only where the GPU supports it), float32 elsewhere (CPU bf16 is slower than float32 on
    most CPUs). A judge whose verdicts bf16 moves passes ``gpu_dtype="float32"``."""
    if requested:
        dtype = getattr(torch, requested, None)
        if not isinstance(dtype, torch.dtype):
            raise ConfigurationError(f"unknown dtype {requested!r}; use {', '.join(DTYPES)}")
        return dtype
    if device.startswith("cuda") and gpu_dtype == "bfloat16" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def placement(torch, requested_device: str | None = None, requested_dtype: str | None = None,
              gpu_dtype: str = "bfloat16") -> dict:
    """``{"device": kind, "dtype": name}`` a model will run with (``cpu``/``cuda``/``mps`` and
    ``float32``/``bfloat16``/``float16``), resolved as loading resolves them but without loading:
    what cache keys and signatures name, since a bf16 GPU verdict can differ from a float32 CPU one
    (``docs/design.md`` §3: keyed by everything that can change the answer)."""
    # a requested device is named as given, not checked here: where it is unusable, loading says
    # so (and an engine may check it first: Ray refuses cuda on a cluster without GPUs)
    device = requested_device or choose_device(torch)
    if requested_dtype:
        dtype = requested_dtype
    else:
        try:
            dtype = str(choose_dtype(torch, device, gpu_dtype=gpu_dtype)).replace("torch.", "")
        except (RuntimeError, AssertionError):  # a CUDA device this torch cannot query
            dtype = "auto"
    return {"device": device.split(":", 1)[0], "dtype": dtype}


def describe_in_process(component, model: str, demo: bool = False) -> dict:
    """:meth:`~doclens.evaluators.usage.Component.describe` of a judge that loads ``model`` into
    this process: the model (local path and size on disk, or a name ``transformers`` resolves
    from the local Hugging Face cache), the device and precision it would run on, and its batch
    size — nothing is loaded."""
    from doclens.evaluators.usage import size_on_disk

    described: dict = {"class": f"{type(component).__module__}.{type(component).__qualname__}", "model": str(model)}
    described["model_bytes"] = size = size_on_disk(str(model))
    if size is None:
        described["model_source"] = ("not a local path: transformers would look it up in the Hugging Face "
                                     "cache (with HF_HUB_OFFLINE=1 nothing is downloaded)")
    if demo:
        described["demo_quality"] = True
    requested = component.requested_device
    try:
        import torch

        described["device"] = choose_device(torch, requested)
    except ImportError:
        described["device"] = requested or "cpu (torch is not installed: the [local] extra)"
    except ConfigurationError as exc:
        described["device"] = f"not usable: {exc}"
    gpu_dtype = getattr(component, "gpu_dtype", "bfloat16")
    described["dtype"] = component.requested_dtype or (
        "auto (bf16 on a GPU that has it, else float32)" if gpu_dtype == "bfloat16" else "auto (float32)")
    described["batch_size"] = component.batch_size or getattr(
        component, "auto_batch_size", "auto (8 on CPU, 32 on GPU)")
    return described


def model_fingerprint(model: str) -> str:
    """A short content hash of a local model (folder or file): every file's name and size, and the
    bytes of its first and last MiB — cheap even for 40 GB of weights, equal for copies of the same
    model, different when weights or configs change. For a hub id: the id itself."""
    path = Path(model)
    if not path.exists():
        return model
    digest = hashlib.sha256()
    files = sorted(p for p in (path.rglob("*") if path.is_dir() else [path]) if p.is_file())
    for file in files:
        size = file.stat().st_size
        digest.update(f"{file.relative_to(path) if path.is_dir() else file.name}|{size}\n".encode())
        with open(file, "rb") as handle:
            digest.update(handle.read(1 << 20))
            if size > 2 << 20:
                handle.seek(-(1 << 20), os.SEEK_END)
                digest.update(handle.read())
    return digest.hexdigest()[:16]


#: What some tokenizers store as ``model_max_length`` when no limit is set (``int(1e30)``).
_NO_LIMIT = 10**9


def stated_window(tokenizer, config) -> int | None:
    """The smallest real length limit the tokenizer (``model_max_length``) and the model config
    (``max_position_embeddings``) state, or ``None`` when neither states one."""
    stated = [getattr(tokenizer, "model_max_length", None), getattr(config, "max_position_embeddings", None)]
    limits = [int(x) for x in stated if isinstance(x, (int, float)) and 0 < x < _NO_LIMIT]
    return min(limits) if limits else None
