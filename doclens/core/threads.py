"""How many CPU threads DocLens computes with, chosen on purpose (``cards/clinical-rules.md``,
"Threads").

A judge that runs a model in this process (``clinical-rules``' MiniLM, through ONNX Runtime or
torch; the numpy products of its word vectors) computes with **one thread** unless told otherwise:

* ``threads=N`` (the judge's option; ``doclens score --threads N``; ``DocLensReward(threads=N)``)
  wins;
* else ``$OMP_NUM_THREADS``, when the user set it, is read as the count;
* else :data:`DEFAULT_THREADS`, 1.

Why one: on a machine whose cores other processes keep busy (a trainer beside the reward, other
jobs beside a leaderboard run) torch's and OpenBLAS's worker threads busy-wait for each other and
burn CPU seconds doing nothing; one thread never waits on another. ``benchmarks/real_system_speed.py``
measures it, idle and beside busy processes (the card gives the figures).

The count applies **only while DocLens computes** (:func:`computing_with`): torch's intra-op pool
and numpy's BLAS pools are process-wide, so they are set for the duration of a judge's call and set
back afterwards, and a training loop's own threads are left as the user had them. HF
``tokenizers`` is told not to parallelise while the judge computes (``TOKENIZERS_PARALLELISM=false``
for the call, unless the user set it); spaCy's blank English tokenizer runs in the calling thread.

Encoder runs. ONNX Runtime's session computes a batch in one thread (no intra-op pool); what it
runs at once is whole batches, each in a Python thread of its own
(:meth:`doclens.evaluators.models.onnx_encoder.OnnxTransformer.pooled_batches`): they share nothing
but the queue of batches, so none waits on another, and a vector is the same at any count. A count
given (the option or ``$OMP_NUM_THREADS``) is that many runs; with none, :data:`DEFAULT_ENCODER_RUNS`
(one), at most the usable cores (:attr:`ThreadPlan.runs`), measured with ``benchmarks/contention.py``
(``cards/clinical-rules.md``, "Round 14" and "Threads").
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from doclens.core.errors import ConfigurationError

#: The default count (module docstring): one thread, measured in benchmarks/real_system_speed.py.
DEFAULT_THREADS = 1
#: How many whole batches MiniLM's ONNX runtime runs at once when no count is set (module
#: docstring, "Encoder runs"), at most the cores this process may use: one, measured
#: (``cards/clinical-rules.md``, "Threads": two cost 5-9 % more CPU and no wall time on this
#: project's busy 2-core machine).
DEFAULT_ENCODER_RUNS = 1


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity where the system says, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity (macOS, Windows)
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ThreadPlan:
    """The count DocLens computes with and where it came from (``option``, ``OMP_NUM_THREADS`` or
    ``default``), and how many batches MiniLM's ONNX runtime runs at once (``encoder_runs``; the
    count itself unless the count is the default): what benchmarks and ``describe()`` print."""

    threads: int
    source: str
    encoder_runs: int | None = None

    @property
    def runs(self) -> int:
        """Batches the ONNX encoder runs at once (:attr:`encoder_runs`, else :attr:`threads`)."""
        return self.encoder_runs or self.threads

    def describe(self) -> dict:
        return {"threads": self.threads, "source": self.source, "encoder_runs": self.runs,
                "tokenizers_parallelism": os.environ.get("TOKENIZERS_PARALLELISM", "false while the judge computes")}


def check_threads(threads: int | None) -> int | None:
    """``threads`` as a positive int (``None`` stays ``None``), else a :class:`ConfigurationError`."""
    if threads is None:
        return None
    try:
        count = int(threads)
    except (TypeError, ValueError):
        count = 0
    if count < 1 or str(count) != str(threads).strip():
        raise ConfigurationError(f"threads must be a positive whole number, got {threads!r}")
    return count


def plan(threads: int | None = None) -> ThreadPlan:
    """The :class:`ThreadPlan` for a judge given ``threads`` (``None``: not set; module docstring)."""
    if threads is not None:
        return ThreadPlan(check_threads(threads) or DEFAULT_THREADS, "option")
    from_env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if from_env.isdigit() and int(from_env) > 0:
        return ThreadPlan(int(from_env), "OMP_NUM_THREADS")
    return ThreadPlan(DEFAULT_THREADS, "default", min(DEFAULT_ENCODER_RUNS, usable_cores()))


@contextlib.contextmanager
def quiet_tokenizers() -> Iterator[None]:
    """HF ``tokenizers`` encodes batches in the calling thread while the body runs (unless the user
    set ``TOKENIZERS_PARALLELISM``: then as they said): its pool would compete with the model's
    thread for the same cores. The variable is taken away again afterwards."""
    if "TOKENIZERS_PARALLELISM" in os.environ:
        yield
        return
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    try:
        yield
    finally:
        os.environ.pop("TOKENIZERS_PARALLELISM", None)


@contextlib.contextmanager
def computing_with(threads: int) -> Iterator[None]:
    """Run the body with torch's intra-op pool (when torch is imported) and numpy's BLAS pools
    (through ``threadpoolctl``, when installed) at ``threads``, and HF tokenizers in the calling
    thread (:func:`quiet_tokenizers`), each set back afterwards."""
    torch = sys.modules.get("torch")
    before = None
    if torch is not None and hasattr(torch, "get_num_threads"):
        before = torch.get_num_threads()
        if before != threads:
            torch.set_num_threads(threads)
    limits = contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with the [clinical] extra
        pass
    else:
        limits = threadpool_limits(limits=threads, user_api="blas")
    try:
        with limits, quiet_tokenizers():
            yield
    finally:
        if torch is not None and before is not None and torch.get_num_threads() != before:
            torch.set_num_threads(before)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the body runs, and on again afterwards when it
    was on (nested or concurrent uses leave it as the outermost found it). A judge's call makes
    hundreds of thousands of small objects (readings, findings, verdicts) that reference counting
    frees; the collector's full passes over the process's heap between them cost a warm reward step
    of 64 about 0.4 CPU seconds and find nothing to free (issue 49). Cycles made meanwhile are
    collected at the collector's next pass."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
