"""Scoring on a Ray cluster: ``doclens score --engine ray`` (``cards/scale-ray.md``).

The input becomes a Ray Dataset with one row per chunk of instances (``chunk_size`` of them, the
same chunks the single-process run makes). ``map_batches`` runs the chunks on a fixed pool of
actors; each actor holds one judge, built on the worker from the same options the command line
resolved (an in-process judge asks for one GPU where the cluster has them; an LLM judge keeps its
own concurrency inside the actor). A chunk comes back as its per-instance results plus what the
report needs besides them: tasks met, whether claims were extracted or given, capped statements,
the usage counters and the answers the judge cached. The driver takes the chunks back **in input
order** (:meth:`RayScoring.chunks`), checks that every instance came back exactly once, and
hands each chunk to the same sink as the single-process run (:mod:`doclens.engines.sink`: in
memory, or streamed to files with ``--output-format`` / ``--resume``): same scores, same
per-instance results, same signature, same files.

Answer caches: SQLite is not safe on a network filesystem, so no file is shared. The driver sends
each node a read-only copy of the user's cache; each actor writes its own shard on its node's
local disk and returns, with every chunk, the answers it stored; the driver merges them into the
user's cache as the chunks arrive (a key is stored once). A rerun therefore finds every answer
in the copy it is sent. An actor that dies mid-chunk is restarted by Ray and the chunk retried;
the restarted actor reopens its shard and hands back what its previous life had stored. Its
usage counters for the lost attempt die with it: usage counts the attempts that returned.

Why not ``ray.data.read_json`` / ``read_text``: the first infers one Arrow type per field (an
input whose ``source`` is a string on one line and a list on the next fails), the second splits
lines with ``str.splitlines`` (a JSON string holding U+2028 is cut in two) and reads a whole
file as one block. The input is instead read and checked on the driver by the one reader every
command uses (bad input is refused, naming line and field, before anything is sent) and shipped
to the cluster's object store.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from doclens.core import errors as errors_module
from doclens.core.errors import ConfigurationError, InputError, MissingExtraError
from doclens.core.settings import ScoringSettings
from doclens.core.types import Instance, InstanceResult
from doclens.engines.sink import ResultSink
from doclens.evaluators.cache import Cache, CachedAnswers, ShardCache, default_cache_dir
from doclens.evaluators.usage import Usage
from doclens.families import result_from_dict
from doclens.parsing.statements import strip_citations
from doclens.reports.report import Report
from doclens.scoring.run import Run, RunMeta
from doclens.scoring.signature import component_signature

logger = logging.getLogger("doclens")

#: Retries of a chunk whose actor died, and restarts of each actor (Ray's defaults are infinite:
#: a judge that crashes its process on every chunk would loop for ever).
MAX_RETRIES = 3


def require_ray():
    """The ``ray`` module with Ray Data, or :class:`MissingExtraError` saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401  (Ray Data is the part used; plain ``ray`` lacks it)
    except ImportError as exc:
        raise MissingExtraError("--engine ray", "ray", "ray[data]") from exc
    return ray


# ---- what runs on the workers -----------------------------------------------------------------------
def _components(scorer) -> list:
    """The scorer's judge and extractor, and a judge an extractor wraps (an LLM extractor holds
    its own judge), each once, in a fixed order (the driver and the actors agree on it)."""
    found: list = []
    for component in (scorer.evaluator, scorer.extractor, getattr(scorer.extractor, "judge", None)):
        if component is not None and all(component is not other for other in found):
            found.append(component)
    return found


def _usage_fields(usage: Usage) -> dict:
    return {f.name: getattr(usage, f.name) for f in dataclasses.fields(usage) if not f.name.startswith("_")}


def _facts(component, default_decoding, families=()) -> dict | None:
    """What :func:`build_report` reads of a judge or extractor, as plain data: its signature,
    config, prompts, decoding, and what the run's metric ``families`` read of it for their
    signature fields and report blocks (:attr:`doclens.families.MetricFamily.reads_judge`: each
    attribute's value, or a method's answer)."""
    if component is None:
        return None
    decoding = getattr(component, "decoding", None)
    facts = {"signature": component_signature(component), "config": component.config(),
             "prompt_tags": list(getattr(component, "prompt_tags", lambda: [])()),
             "decoding": decoding() if callable(decoding) else default_decoding,
             "style": getattr(component, "style", None), "keeps_data_local": component.keeps_data_local,
             "class_name": type(component).__name__}
    read: dict[str, dict] = {}
    for name in dict.fromkeys(name for family in families for name in family.reads_judge):
        if hasattr(component, name):  # a judge has what the families read; an extractor may not
            value = getattr(component, name)
            read[name] = {"called": callable(value), "value": value() if callable(value) else value}
    facts["read_by_families"] = read
    return facts


def _error_facts(exc: BaseException) -> dict:
    """An exception as data: its class (found again on the driver when it is DocLens's own), message
    and attributes (``field``, ``reason`` …)."""
    attributes = {k: v for k, v in vars(exc).items() if isinstance(v, (str, int, float, bool, type(None)))}
    return {"type": type(exc).__name__, "message": str(exc), "attributes": attributes}


def _rebuild_error(facts: dict) -> BaseException:
    cls = getattr(errors_module, facts["type"], None)
    if isinstance(cls, type) and issubclass(cls, errors_module.DocLensError):
        exc = cls.__new__(cls)
        Exception.__init__(exc, facts["message"])
        exc.__dict__.update(facts["attributes"])
        return exc
    return RuntimeError(f"{facts['type']}: {facts['message']}")


def _node_folder(run_id: str) -> Path:
    """This run's folder on the local disk of the node a worker runs on."""
    return Path(tempfile.gettempdir()) / f"doclens-ray-{run_id}"


def _directory_tag(directory: str) -> str:
    return hashlib.sha256(directory.encode("utf-8")).hexdigest()[:16]


class ScoreWorker:
    """One actor of the pool: one scorer (judge and extractor) built on the worker, scoring one
    chunk per row under the driver's own settings (``settings``, the driver scorer's
    :class:`~doclens.core.settings.ScoringSettings`, pickled to the worker: a scorer built with
    others is refused before it scores). Each cached judge gets a :class:`ShardCache`: the node's
    copy of the user's cache, read-only, under the actor's own shard."""

    def __init__(self, make_scorer: Callable, run_id: str, cache_plan: list, settings: ScoringSettings):
        import ray

        self.scorer = make_scorer()
        if self.scorer.settings != settings:  # the report is signed with the driver's settings: score under them
            raise ConfigurationError("the Ray worker's scorer was built with other settings than the driver's: "
                                     + "; ".join(f"{name}: {getattr(settings, name)!r} != "
                                                 f"{getattr(self.scorer.settings, name)!r}"
                                                 for name in settings.names()
                                                 if getattr(settings, name) != getattr(self.scorer.settings, name))
                                     + " (make_scorer must build the scorer with the driver's settings)")
        self.shards: dict[str, list[ShardCache]] = {}
        actor = ray.get_runtime_context().get_actor_id() or uuid.uuid4().hex  # kept across restarts
        folder = _node_folder(run_id)
        for component, plan in zip(_components(self.scorer), cache_plan):
            if plan is None or not isinstance(component, CachedAnswers):
                continue
            tag = _directory_tag(plan["directory"])
            base = None
            if plan["snapshot"] is not None:
                base = folder / f"base-{tag}.sqlite"
                if not base.exists():
                    _write_once(base, ray.get(plan["snapshot"]))
            shard = ShardCache(base, Cache(folder / f"shard-{actor}-{tag}"), refresh=plan["refresh"])
            component.set_cache(shard)
            self.shards.setdefault(plan["directory"], []).append(shard)

    def __call__(self, batch: dict) -> dict:
        out: dict[str, list] = {"first": [], "results": [], "meta": []}
        for first, text in zip(batch["first"], batch["instances"]):
            out["first"].append(int(first))
            results, meta = self.score(str(text))
            out["results"].append(json.dumps([r.to_dict() for r in results], allow_nan=False))
            out["meta"].append(json.dumps(meta))
        return out

    def score(self, text: str) -> tuple[list[InstanceResult], dict]:
        scorer = self.scorer
        instances = [Instance(**fields) for fields in json.loads(text)]
        evaluator_usage = getattr(scorer.evaluator, "usage", None)
        extractor_usage = getattr(scorer.extractor, "usage", None) if scorer.extractor is not None else None
        shared = extractor_usage is not None and extractor_usage is evaluator_usage
        before = [_usage_fields(u) if u is not None else None for u in (evaluator_usage, extractor_usage)]
        run, error = RunMeta(), None
        try:
            results, run = scorer.score_chunk(instances)
        except Exception as exc:  # sent back: the driver raises it in input order, after earlier chunks
            results, error = [], _error_facts(exc)
        deltas = []
        for usage, start in zip((evaluator_usage, extractor_usage), before):
            deltas.append(None if usage is None or start is None else
                          {k: v - start[k] for k, v in _usage_fields(usage).items()})
        meta = {"run": run.to_dict(), "usage": deltas[0], "extractor_usage": deltas[1],
                "shared_usage": shared, "error": error,
                "facts": {"evaluator": _facts(scorer.evaluator, {}, scorer.families),
                          "extractor": _facts(scorer.extractor, None)},
                "cache": {directory: {k: v for shard in shards for k, v in shard.drain().items()}
                          for directory, shards in self.shards.items()}}
        return results, meta


def _write_once(path: Path, data: bytes) -> None:
    """Write ``path`` unless it exists, atomically (actors on one node may race to write it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.link(temporary, path)  # fails if another actor was first: its copy is the same
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)


def _start_reaper() -> subprocess.Popen | None:
    """The watchdog that ends this driver's local Ray processes if the driver dies before
    ``ray.shutdown`` (:mod:`doclens.engines.reaper`; Linux only: it reads ``/proc``)."""
    if not os.path.isdir("/proc/self"):
        return None
    reaper = subprocess.Popen([sys.executable, "-m", "doclens.engines.reaper", str(os.getpid())],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    if reaper.stdout is not None:  # it has noted what ran before Ray (never Ray's): Ray may start
        reaper.stdout.readline()
    return reaper


def _tell_reaper(reaper: subprocess.Popen | None) -> None:
    """``ray.init`` has returned: the watchdog keeps to the processes it started and their
    descendants from now on, never another child of the driver (:mod:`doclens.engines.reaper`)."""
    if reaper is None or reaper.stdin is None:
        return
    try:
        reaper.stdin.write(b"ready\n")
        reaper.stdin.flush()
        if reaper.stdout is not None:  # it keeps to Ray's processes now: the driver may start others
            reaper.stdout.readline()
    except OSError:  # it is gone already
        pass


def _stop_reaper(reaper: subprocess.Popen | None) -> None:
    """A clean end: Ray was shut down, the watchdog leaves everything as it is."""
    if reaper is None or reaper.stdin is None:
        return
    try:
        reaper.stdin.write(b"done\n")
        reaper.stdin.close()
    except OSError:  # it is gone already
        pass
    try:
        reaper.wait(timeout=10)
    except subprocess.TimeoutExpired:
        reaper.kill()
    if reaper.stdout is not None:
        reaper.stdout.close()


def _remove_node_folder(run_id: str) -> None:
    shutil.rmtree(_node_folder(run_id), ignore_errors=True)


# ---- the driver ---------------------------------------------------------------------------------------
def _answer(value):
    """A method without arguments that answers ``value`` (a copy: the caller may change it)."""
    return lambda: json.loads(json.dumps(value))


class _Reported:
    """A judge or extractor as the workers reported it after scoring: what the report reads
    (its signature, config, prompts, decoding), with the usage summed over every chunk."""

    name = "reported"  # never "custom": the reported signature already names a custom class

    def __init__(self, facts: dict, usage: Usage, redact):
        self._facts = facts
        self.usage = usage
        self.style = facts["style"]
        self.keeps_data_local = facts["keeps_data_local"]
        self.class_name = facts["class_name"]
        self.decoding = (lambda: dict(facts["decoding"])) if facts["decoding"] is not None else None
        self.redact = redact
        for name, read in facts.get("read_by_families", {}).items():  # as the families read them
            setattr(self, name, _answer(read["value"]) if read["called"] else read["value"])

    def signature(self) -> str:
        return self._facts["signature"]

    def config(self) -> dict:
        return json.loads(json.dumps(self._facts["config"]))

    def prompt_tags(self) -> list[str]:
        return list(self._facts["prompt_tags"])


class RayScoring:
    """One run on Ray. :meth:`chunks` yields each chunk's results in input order while
    :attr:`run` collects the run's metadata (tasks met, extractor used, capped statements);
    :meth:`report` builds the report of :attr:`run` (the caller puts the results it wants
    reported in ``run.results``). :func:`score_on_ray` does both.

    Parameters
    ----------
    make_scorer : callable
        Builds a :class:`doclens.DocLens` (no arguments); called once here, for the settings and
        to check the options, and once in every actor. It is pickled to the workers: a function
        their Python can import (``doclens`` and any custom judge module installed or in the
        runtime environment's ``working_dir``). Each actor is sent the driver scorer's
        :attr:`~doclens.DocLens.settings` too, and refuses a scorer built with other settings
        (``doclens score --engine ray`` builds the actors' scorers from the driver's settings
        object, so they cannot differ).
    instances : iterable of dict or :class:`Instance`
        Read and checked whole before any work is sent (an id seen twice is an
        :class:`InputError`).
    workers : int
        Actors in the pool; each holds one judge.
    address : str, optional
        A running Ray cluster (``ray://head:10001``, ``auto``); default: the cluster named by
        ``$RAY_ADDRESS`` when it is set (as in a Ray job), else a new Ray instance on this machine
        (never another cluster that happens to run here). Ignored when Ray is already initialised
        in this process.
    runtime_env : dict, optional
        Ray runtime environment for the workers (``pip``, ``working_dir``, ``env_vars`` …).
    gpus_per_worker : float, optional
        GPUs each actor asks for; default 1 for an in-process judge when the cluster has GPUs (and
        an error when the judge was told ``device='cuda'`` and it has none), else 0.
    """

    def __init__(self, make_scorer: Callable, instances: Iterable[dict | Instance], *, workers: int = 2,
                 address: str | None = None, runtime_env: dict | None = None,
                 gpus_per_worker: float | None = None, progress: bool = True, scorer=None):
        if workers < 1:
            raise ConfigurationError(f"workers must be at least 1, got {workers!r}")
        self.make_scorer = make_scorer
        self.scorer = scorer if scorer is not None else make_scorer()
        self.workers = workers
        self.address = address
        self.runtime_env = runtime_env
        self.gpus_per_worker = gpus_per_worker
        self.progress = progress
        self.run = Run()
        self.usage = Usage()
        self.extractor_usage = Usage()
        self.shared_usage = False
        self.facts: dict | None = None
        self.run_id = uuid.uuid4().hex[:12]
        self._instances = instances
        self._rows: list[dict] | None = None
        self._ids: list[str] = []
        self._caches: dict[str, Cache] = {}

    def _pack(self, instances) -> tuple[list[dict], list[str]]:
        """The dataset's rows (one per chunk: its first position among the instances to score and
        its instances as JSON) and every id to score, in input order; the checks
        :meth:`doclens.DocLens.score` makes while reading. Instances in ``run.done`` (scored by the
        run a ``--resume`` continues) are read and checked but not sent."""
        rows, chunk, ids = [], [], []
        size = self.scorer.settings.chunk_size
        for position, item in enumerate(instances):
            instance = item if isinstance(item, Instance) else Instance.from_dict(item, position)
            if instance.id in self.run.seen:
                raise InputError(f"instance {instance.id!r}: id seen twice", field="id")
            self.run.seen.add(instance.id)
            if self.scorer.baselines:
                self.run.texts[instance.id] = (strip_citations(instance.prediction), instance.reference)
            if instance.id in self.run.done:
                continue
            ids.append(instance.id)
            chunk.append(dataclasses.asdict(instance))
            if len(chunk) == size:
                rows.append({"first": len(ids) - size, "instances": json.dumps(chunk)})
                chunk = []
        if chunk:
            rows.append({"first": len(ids) - len(chunk), "instances": json.dumps(chunk)})
        return rows, ids

    # ---- resources -------------------------------------------------------------------------------
    def _gpus(self, ray) -> float:
        if self.gpus_per_worker is not None:
            return self.gpus_per_worker
        cluster_gpus = ray.cluster_resources().get("GPU", 0)
        for component in (self.scorer.evaluator, self.scorer.extractor):
            if component is None or not hasattr(component, "requested_device"):
                continue  # not an in-process model
            device = component.requested_device
            if device is not None and str(device).startswith("cuda") and not cluster_gpus:
                raise ConfigurationError(f"the judge asks for device {device!r} but the Ray cluster has no GPU")
            if (device is None or str(device).startswith("cuda")) and cluster_gpus:
                return 1.0
        return 0.0

    def _cache_plan(self, ray) -> list:
        """Per cached component: the user's cache folder (resolved here, on the driver), a copy of
        it in the object store, and whether answers are refreshed; ``None`` for no cache."""
        plan: list = []
        snapshots: dict[str, object] = {}
        for component in _components(self.scorer):
            if not isinstance(component, CachedAnswers):
                plan.append(None)
                continue
            cache_dir, no_cache, refresh = component.cache_settings
            if no_cache:
                plan.append(None)
                continue
            directory = str(Path(cache_dir).expanduser().resolve() if cache_dir else default_cache_dir().resolve())
            if directory not in self._caches:
                self._caches[directory] = Cache(Path(directory))
                copy = None if refresh else self._caches[directory].snapshot()  # None: the cache is set aside
                snapshots[directory] = None if copy is None else ray.put(copy)
            plan.append({"directory": directory, "refresh": bool(refresh), "snapshot": snapshots.get(directory)})
        self._snapshots = snapshots  # keep the copies alive while actors may (re)start
        return plan

    # ---- the run ---------------------------------------------------------------------------------
    def chunks(self) -> Iterator[tuple[list[InstanceResult], RunMeta]]:
        """Each chunk's results, in input order, as the cluster finishes them, with what the chunk
        taught the run (already merged into :attr:`run`). The input is read and checked first. A
        chunk that failed on its worker (bad input, a stopped run) raises its error here, after
        every chunk before it was yielded."""
        from tqdm.auto import tqdm

        if self._rows is None:
            self._rows, self._ids = self._pack(self._instances)
        ray = require_ray()
        started = not ray.is_initialized()
        reaper = None
        if started:
            options: dict[str, object] = {"logging_level": logging.WARNING}
            if self.runtime_env:
                options["runtime_env"] = self.runtime_env
            if self.address:
                ray.init(address=self.address, **options)
            elif os.environ.get("RAY_ADDRESS"):  # set by the user, or by Ray for a job's driver
                ray.init(**options)
            else:  # "local": a new instance, never a cluster that merely happens to run here
                reaper = _start_reaper()  # first: it notes Ray's processes as ray.init starts them
                try:
                    ray.init(address="local", num_cpus=max(os.cpu_count() or 1, self.workers),
                             include_dashboard=False, **options)
                except BaseException:
                    _stop_reaper(reaper)
                    raise
                _tell_reaper(reaper)
        bar = tqdm(total=len(self._ids), disable=not self.progress, unit="instance", desc="DocLens (Ray)",
                   leave=False)
        try:
            if self._rows:
                yield from self._execute(ray, bar)
        finally:
            bar.close()
            self._clean_up(ray)
            for cache in self._caches.values():
                cache.close()
            if started:
                ray.shutdown()
            _stop_reaper(reaper)

    def _execute(self, ray, bar) -> Iterator[tuple[list[InstanceResult], RunMeta]]:
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # chunks come back in input order
        context.enable_progress_bars = False  # DocLens shows its own, per instance
        with warnings.catch_warnings():
            # passing max_restarts / max_task_retries this way is announced to end in Ray 2.64: the
            # [ray] extra pins ray<2.64 (setup.cfg), so the notice says nothing to a user
            warnings.filterwarnings("ignore", message=".*ray_remote_args.* is deprecated")
            dataset = ray.data.from_items(self._rows).map_batches(
                ScoreWorker, batch_size=1, compute=ray.data.ActorPoolStrategy(size=self.workers),
                fn_constructor_kwargs={"make_scorer": self.make_scorer, "run_id": self.run_id,
                                       "cache_plan": self._cache_plan(ray), "settings": self.scorer.settings},
                num_cpus=1, num_gpus=self._gpus(ray), max_restarts=MAX_RETRIES, max_task_retries=MAX_RETRIES)
        expected = 0
        for row in dataset.iter_rows():
            meta = json.loads(row["meta"])
            self._merge_cache(meta["cache"])
            if meta["error"] is not None:
                raise _rebuild_error(meta["error"])
            results = [result_from_dict(r) for r in json.loads(row["results"])]
            ids = [r.id for r in results]
            if int(row["first"]) != expected or ids != self._ids[expected:expected + len(results)] or not results:
                raise RuntimeError(f"Ray returned the chunk starting at instance {int(row['first'])} where the one "
                                   f"starting at {expected} was due: an instance would be lost or counted twice")
            expected += len(results)
            chunk_meta = self._record(meta)
            bar.update(len(results))
            yield results, chunk_meta
        if expected != len(self._ids):
            raise RuntimeError(f"Ray returned {expected} of {len(self._ids)} instances")

    def _record(self, meta: dict) -> RunMeta:
        chunk_meta = RunMeta.from_dict(meta["run"])
        self.run.merge(chunk_meta)
        self.shared_usage = meta["shared_usage"]
        for usage, delta in ((self.usage, meta["usage"]), (self.extractor_usage, meta["extractor_usage"])):
            if delta:
                usage.add(**delta)
        self.facts = meta["facts"]
        return chunk_meta

    def _merge_cache(self, entries: dict) -> None:
        for directory, items in entries.items():
            self._caches[directory].put_raw_many(items)

    def _clean_up(self, ray) -> None:
        """Remove this run's copies and shards from every node's local disk (they hold judge
        answers, which may quote clinical text)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        try:
            remove = ray.remote(num_cpus=0)(_remove_node_folder)
            ray.get([remove.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
                     .remote(self.run_id) for node in ray.nodes() if node.get("Alive")], timeout=60)
        except Exception:  # a node gone: its temporary folder goes with it
            logger.warning("could not remove doclens-ray-%s from every Ray node's temporary folder", self.run_id,
                           exc_info=logger.isEnabledFor(logging.DEBUG))

    # ---- the report ------------------------------------------------------------------------------
    def reported_scorer(self):
        """What :func:`build_report` reads of a scorer: the driver's own scorer — the same settings
        object, so the report, its blocks and its signature are built exactly as a local run's
        (:func:`doclens.scoring.signature.get_signature` of its ``settings``, the one place a run
        is signed; the actors scored under the same settings, :class:`ScoreWorker`) — with
        the judge and extractor as the workers reported them (the driver's own copies never
        loaded a model). Before any chunk came back: the driver's scorer."""
        if self.facts is None:
            return self.scorer
        redact = getattr(self.scorer.evaluator, "redact", lambda text: text)
        reported = copy.copy(self.scorer)
        reported.evaluator = _Reported(self.facts["evaluator"], self.usage, redact)
        if self.facts["extractor"] is not None:
            reported.extractor = _Reported(self.facts["extractor"],
                                           self.usage if self.shared_usage else self.extractor_usage, redact)
        return reported


def score_on_ray(make_scorer: Callable, instances: Iterable[dict | Instance], *,
                 sink: ResultSink | None = None, **options) -> Report:
    """Score ``instances`` on Ray (see :class:`RayScoring` for the options) and return the same
    :class:`Report` that :meth:`doclens.DocLens.score` returns. ``sink``: where the chunks go, in
    input order (default: kept in memory; a :class:`doclens.engines.sink.FileSink` streams them to
    files and honours ``resume``, as :meth:`doclens.DocLens.score_to` does). An error raised
    mid-run carries ``partial_report``: every chunk before the one that failed, in input order."""
    scoring = RayScoring(make_scorer, instances, **options)
    sink = sink if sink is not None else ResultSink(scoring.scorer.settings.on_unparsed)
    sink.start(scoring.scorer, scoring.run)  # a refused --resume stops here; a resumed one fills run.done
    try:
        for results, chunk_meta in scoring.chunks():
            # the sink's journal records the usage so far: as the workers count it
            sink.scorer = scoring.reported_scorer()
            sink.add_chunk(results, chunk_meta)
    except BaseException as exc:
        error = getattr(scoring.scorer.evaluator, "redact", lambda text: text)(f"{type(exc).__name__}: {exc}")
        # an attribute of whatever exception ended the run, as DocLens.score_to's (the CLI reads it with getattr):
        # no exception class declares it
        exc.partial_report = sink.finish(  # type: ignore[attr-defined]
            scoring.reported_scorer(), scoring.run, partial=True, error=error)
        raise
    return sink.finish(scoring.reported_scorer(), scoring.run)
