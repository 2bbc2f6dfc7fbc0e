"""A sweep: every (language, model, seed) of a config, skipping finished runs, on the chosen executor."""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import _store as store
from ._store_checks import DAMAGED, NEWER, UNFINISHED, UNREADABLE, finished_state
from diagnostics.core.errors import UserInputError

from ._config import EXECUTOR_NAMES, NOT_IN_RUN_HASH, ConfigError, SweepConfig
from ._run_spec import RunSpec, spec_dict

if TYPE_CHECKING:
    from ._detach import DetachedSweep


#: Outcomes of a sweep's runs that make it end with exit status 1 (the others: done, skipped).
PROBLEM_STATES = ("failed", "interrupted", "locked", "lost")


def sweep_runs(config: SweepConfig) -> list[RunSpec]:
    """List all runs of a sweep, ordered language -> model -> seed.

    Parameters
    ----------
    config : SweepConfig
        The sweep.

    Returns
    -------
    list of RunSpec
        One spec per (language, model, seed).
    """
    data = config.to_dict()
    return [RunSpec(data, language, spec_dict(model), seed)
            for language in config.languages for model in config.models for seed in config.seeds]


def settings_conflict(config: SweepConfig, spec: RunSpec) -> str | None:
    """Say why a finished run in ``spec.path`` cannot belong to this sweep (made with other settings).

    Parameters
    ----------
    config : SweepConfig
        The sweep.
    spec : RunSpec
        One of its runs.

    Returns
    -------
    str or None
        The settings that differ (``key: old -> new``, ``;``-separated); ``None`` when the run is not finished,
        is unreadable or was made with the same settings.
    """
    if not store.is_done(spec.path):
        return None
    try:
        stored = store.Run.at(spec.path).config()
    except (FileNotFoundError, ValueError):
        return None  # unreadable: verify_run reports the run as corrupt and the sweep trains it again
    recorded = stored.get("run", {}).get("run_hash")
    expected = config.run_hash()
    if recorded is None or recorded == expected:
        return None
    old, new = stored.get("sweep", {}), config.to_dict()
    changed = [f"{k}: {old.get(k, '(not recorded)')!r} -> {new.get(k, '(not set)')!r}"
               for k in sorted(set(old) | set(new)) if k not in NOT_IN_RUN_HASH and old.get(k) != new.get(k)]
    return "; ".join(changed) or f"run_hash {recorded} != {expected}"


class SettingsConflictError(UserInputError):
    """A run folder of the sweep holds a finished run made with other settings (the sweep would mix them)."""


def check_compatible(config: SweepConfig, specs: list[RunSpec]) -> None:
    """Refuse to mix a finished run made with different settings into this sweep's folder.

    Parameters
    ----------
    config : SweepConfig
        The sweep.
    specs : list of RunSpec
        Its runs.

    Raises
    ------
    SettingsConflictError
        For the first run whose folder holds a finished run made with other settings.
    """
    for spec in specs:
        what = settings_conflict(config, spec)
        if what is not None:
            origin = getattr(config._source, "path", None)
            raise SettingsConflictError(f"{origin + ': ' if origin else ''}{spec.path} holds a finished run made "
                                        f"with other settings ({what}); choose another experiment name or output "
                                        "directory, or delete that folder")


def run_states(config: SweepConfig) -> list[tuple[RunSpec, str]]:
    """Every run of a sweep with what a real run would do with it.

    States: ``done`` (skipped), ``conflict`` (finished with other settings: the real run refuses the whole sweep),
    ``corrupt`` (finished, but damaged, :func:`~diagnostics.finetune.verify_run`: trained again), ``unreadable``
    (finished, a file the system could not read: left alone), ``newer`` (finished by a newer version: left alone),
    ``running`` (locked by a live process), ``failed`` / ``interrupted`` (retried from scratch) or ``pending``.

    Parameters
    ----------
    config : SweepConfig
        The sweep.

    Returns
    -------
    list of tuple of (RunSpec, str)
        Each run of :func:`plan` with its state.
    """
    out = []
    for spec in sweep_runs(config):
        state = store.run_state(spec.path)
        if state == "done" and settings_conflict(config, spec) is not None:
            state = "conflict"
        elif state == "done":
            state = {DAMAGED: "corrupt", UNREADABLE: "unreadable", NEWER: "newer"}.get(finished_state(spec.path)[0],
                                                                                      state)
        out.append((spec, state))
    return out


def prepare_features(config: SweepConfig, specs: list[RunSpec]) -> dict[str, float]:
    """Compute the frozen-layer features of every (language, model) once, before runs start (top-k only).

    Nothing to do without ``train_top_k_layers``; finished runs of ``specs`` are skipped. Returns the seconds spent
    per ``language/model``.
    """
    if config.train_top_k_layers is None:
        return {}
    import torch

    from diagnostics.models import load_tokenizer

    from ._batching import encode_pairs
    from ._features import FeatureCache
    from ._mixtures import evaluation_sets, training_mixture
    from ._train import _autocast_dtype, _device, feature_folder, resolve_model_path

    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    timings = {}
    seen = set()
    for spec in specs:
        key = (spec.language, spec.model_spec.slug)
        if key in seen or store.is_done(spec.path):
            continue
        seen.add(key)
        t0 = time.perf_counter()
        model_path = resolve_model_path(spec.model_spec)
        tokenizer = load_tokenizer(model_path)
        frames = {"train": training_mixture(config, spec.language)} | evaluation_sets(config, spec.language)
        device = _device(config)
        cache = FeatureCache(feature_folder(config, spec.model_spec), model_path,
                             config.train_top_k_layers, config.max_seq_length, config.feature_dtype,
                             device=device, batch_size=config.eval_batch_size, progress=config.progress,
                             autocast=_autocast_dtype(config, device))
        for name, frame in frames.items():
            cache.get(name, encode_pairs(tokenizer, frame, config.max_seq_length, config.truncation))
        timings["/".join(key)] = time.perf_counter() - t0
    return timings


def run_sweep(config: SweepConfig, *, executor: str | None = None, workers: int | None = None) -> pd.DataFrame:
    """Run every unfinished run of ``config`` and return one row per run.

    Finished runs (``DONE``) are skipped, interrupted ones restart from scratch, runs locked by another live process
    are reported as ``locked`` (the others go on).

    Parameters
    ----------
    config : SweepConfig
        The sweep.
    executor : str, optional
        Overrides ``config.executor`` (``inprocess``, ``pool``, ``submitit``).
    workers : int, optional
        Overrides ``config.workers`` (pool size).

    Returns
    -------
    pandas.DataFrame
        ``language, model, seed, state, error, path``; ``state`` in done / skipped / locked / failed /
        interrupted (stopped from outside: a killed worker, a cancelled, preempted or timed-out job) / lost (its
        lease was taken over by another host while this sweep trained it).
    """
    return run_sweeps([config], executor=executor, workers=workers).drop(columns="experiment")


def run_sweeps(configs: list[SweepConfig], *, executor: str | None = None,
               workers: int | None = None) -> pd.DataFrame:
    """Run several sweeps (e.g. the experiments of one study) as one queue on one executor.

    Each sweep's frozen-layer features are prepared first; then every unfinished run of every sweep goes to the
    executor of the first config together, so a process pool stays full across sweeps of a few seeds each.

    Parameters
    ----------
    configs : list of SweepConfig
        Their ``experiment`` names must differ.
    executor : str, optional
        Overrides the first config's ``executor``; its ``executor_options`` apply to all runs.
    workers : int, optional
        Overrides the first config's ``workers``.

    Returns
    -------
    pandas.DataFrame
        ``experiment, language, model, seed, state, error, path``, in config then plan order.

    Raises
    ------
    ConfigError
        Before anything is written or trained: a model or data source this machine lacks, or a size the data
        cannot supply (:meth:`SweepConfig.check_inputs`), or a bad ``executor`` / ``workers``.
    SettingsConflictError
        Before anything is written: a run folder holds a finished run made with other settings.
    """
    from tqdm.auto import tqdm

    from ._executors import get_executor

    name, lead, rows, todo, order = _prepare(configs, executor, workers)
    run = get_executor(name)
    names = [c.experiment for c in configs]
    if todo:
        by_path = {str(s.path): (config, s) for config, s in todo}
        bar = tqdm(total=len(order), initial=len(rows), desc=f"sweep {'+'.join(names)}", disable=not lead.progress)
        queue = jobs(todo, name)
        for outcome in run(queue, lead.executor_options, workers or lead.workers):
            config, spec = by_path[outcome["path"]]
            rows.append(_row(config, spec, outcome["state"], outcome.get("error"), outcome["path"]))
            bar.update(1)
            if outcome.get("error"):
                bar.write(f"{config.experiment} {spec.describe()}: {outcome['state']}: {outcome['error']}")
            elif lead.progress:  # each run as it ends (a cluster's jobs end in any order)
                bar.write(f"{config.experiment} {spec.describe()}: {outcome['state']}")
        bar.close()
    return pd.DataFrame(rows).sort_values("path", key=lambda c: c.map(order)).reset_index(drop=True)


def _prepare(configs: list[SweepConfig], executor: str | None, workers: int | None) -> tuple:
    """Check the sweeps, record them, find the runs to train (damaged finished ones too) and prepare features:
    everything before the executor. Returns the executor's name, the first config, the rows of skipped runs, the pending
    ``(config, spec)`` pairs and each run's place in plan order."""
    if not configs:
        raise ValueError("no sweep to run")
    names = [c.experiment for c in configs]
    if len(set(names)) != len(names):
        raise ValueError(f"experiment names repeat: {names}")
    if executor is not None and executor not in EXECUTOR_NAMES:
        raise ConfigError([("executor", f"expected one of {', '.join(EXECUTOR_NAMES)}, found {executor!r}")])
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ConfigError([("workers", f"expected an integer >= 1, found {workers!r}")])
    lead = configs[0]
    # everything that can be known before training is checked for every sweep before anything is written
    sources: dict = {}
    for config in configs:
        config.check_inputs(sources)
        check_compatible(config, sweep_runs(config))
    rows, todo, order = [], [], {}
    for config in configs:
        specs = sweep_runs(config)
        root = Path(config.output_dir) / config.experiment
        root.mkdir(parents=True, exist_ok=True)
        store.write_json_atomic(root / "sweep.json", config.to_dict())
        order.update({str(s.path): len(order) + i for i, s in enumerate(specs)})
        pending = []
        for spec in specs:
            state, problems = finished_state(spec.path)
            if state == DAMAGED:  # withdrawn and trained again by the job that takes its lease
                warnings.warn(f"{spec.path}: finished run is corrupt ({'; '.join(problems)}); training it again",
                              stacklevel=3)
            elif state == UNREADABLE:
                warnings.warn(f"{spec.path}: finished run left alone: {'; '.join(problems)}", stacklevel=3)
            elif state == NEWER:
                rows.append(_row(config, spec, "failed", f"{spec.path}: {problems[0]}", str(spec.path)))
                continue
            if state in (DAMAGED, UNFINISHED):
                pending.append(spec)
            else:
                rows.append(_row(config, spec, "skipped", None, str(spec.path)))
        if pending:
            prepare_features(config, pending)
            todo += [(config, s) for s in pending]
    return executor or lead.executor, lead, rows, todo, order


def submit_sweeps(configs: list[SweepConfig], *, executor: str | None = None) -> DetachedSweep | None:
    """Submit every unfinished run of the sweeps to the cluster and return at once (``sweep run --detach``).

    The same checks and preparation as :func:`run_sweeps` run first; then the jobs go to the cluster
    (``executor: submitit``) and nothing watches them: the jobs run on their own, and neither logging out nor Ctrl-C
    cancels them. What was submitted is written to ``<output_dir>/<experiment>/.submitit/detached.json`` of each
    sweep, where :func:`~diagnostics.finetune.detached_status` and :func:`~diagnostics.finetune.wait_detached` find
    it.

    Parameters
    ----------
    configs : list of SweepConfig
        The sweeps (their ``experiment`` names must differ); the first one's ``executor_options`` apply to all.
    executor : str, optional
        Overrides the first config's ``executor``; must be ``submitit``.

    Returns
    -------
    DetachedSweep or None
        The record written; ``None`` when every run is finished already (nothing submitted).

    Raises
    ------
    ConfigError
        For an executor that is not a cluster one (``inprocess``, ``pool``) or ``cluster: debug``, before anything
        is written.
    UserInputError
        When a previous detached sweep of these experiments still has jobs in the queue.
    """
    from ._detach import check_no_live_detached, new_record, write_detached
    from ._executors import detach_submitit

    name = executor or (configs[0].executor if configs else None)
    if configs and name != "submitit":
        raise ConfigError([("executor", f"--detach needs the cluster executor submitit, found {name!r}")])
    if configs and configs[0].executor_options.get("cluster") == "debug":
        raise ConfigError([("executor_options.cluster", "--detach needs a cluster that runs the jobs on its own "
                                                        "(slurm or local), found 'debug'")])
    roots = [Path(c.output_dir) / c.experiment for c in configs]
    check_no_live_detached(roots)
    name, lead, _, todo, _ = _prepare(configs, name, None)
    if not todo:
        return None
    submitted = detach_submitit(jobs(todo, name), lead.executor_options)
    experiments = sorted({str(Path(c.output_dir) / c.experiment) for c, _ in todo})
    record = new_record(submitted["cluster"], submitted["folder"], submitted["jobs"], experiments,
                        submitted["poll_s"])
    write_detached(record)
    return record


def jobs(todo: list[tuple[SweepConfig, RunSpec]], executor: str = "inprocess") -> list[list[RunSpec]]:
    """Cut pending runs into the executor's jobs: single runs, or groups across the plan that train as one (``fuse``).

    Parameters
    ----------
    todo : list of (SweepConfig, RunSpec)
        Each pending run with its sweep, in plan order. Runs of any sweep that share a training key
        (:func:`~diagnostics.finetune._grouping.training_key`) share a job.
    executor : str
        The executor's name (see :func:`~diagnostics.finetune._grouping.group_jobs`). With ``fuse: auto``, a pool or
        cluster job is cut for the most slots ``auto`` takes and measures its own on the device it runs on (a login
        node has no GPU to measure).

    Returns
    -------
    list of list of RunSpec
        The jobs, each trained in :func:`~diagnostics.finetune._train.job_slots` slots.
    """
    from ._grouping import MAX_AUTO_GROUP, group_jobs
    from ._train import job_slots

    def slots(config: SweepConfig, specs: list[RunSpec]) -> int:
        if config.fuse == "auto" and executor != "inprocess":
            return MAX_AUTO_GROUP  # each job measures its slots on the device it lands on (train_group)
        return job_slots(config, specs)

    return group_jobs(todo, slots, executor)


def _row(config: SweepConfig, spec: RunSpec, state: str, error: str | None, path: str) -> dict[str, Any]:
    return {"experiment": config.experiment, "language": spec.language, "model": spec.model_spec.name,
            "seed": spec.seed, "state": state, "error": error, "path": path}


def summarise(results: pd.DataFrame) -> dict[str, Any]:
    """Count the run states of a sweep's results (as :func:`run_sweep` returns them): state -> runs."""
    return results["state"].value_counts().to_dict()
