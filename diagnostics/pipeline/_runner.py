"""Run the main job end to end, reusing every finished run, cached vector and executed notebook input."""

from __future__ import annotations

import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from diagnostics.core.errors import UserInputError
from diagnostics.core.io_utils import write_json_atomic
from diagnostics.core.resources import default_reports_dir, notebooks_dir

from ._inputs import PipelineInputs
from ._scale_plan import ScalePlan, experiment_configs

if TYPE_CHECKING:
    from ._plan import CheckedPlan

#: Notebooks the main job does not execute, each with the reason: they read a store the main job does not make.
NOT_IN_MAIN_JOB = {
    "12_evaluate_any_model": "reads the runs `diagnostics evaluate` stored for models trained elsewhere; the main job "
                             "scores the models it trains itself, already in the other notebooks",
}
# the demo's longest notebooks (probing 256 s, behave 55 s, annotators 42 s of 263 s on 2 cores), started first
SLOWEST_FIRST = ("05_probing", "08_behave", "07_annotate_new_language")
#: Environment of the kernels when notebooks run side by side: OpenMP threads that wait yield their core instead of
#: spinning. Each kernel's torch uses every core (and the probing notebook adds fitting processes), so lanes
#: oversubscribe the cores, and GNU OpenMP's default spin-wait took CPU time from the other lane (demo, 2 cores, 2
#: lanes: the notebooks took 342 s and 649 CPU-s spinning, 263 s and 497 CPU-s yielding). A value the user set wins.
SHARED_CORES_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}
PACKAGES = ("numpy", "pandas", "scipy", "scikit-learn", "torch", "transformers", "spacy", "pymorphy3", "seaborn")


class PlanError(UserInputError):
    """A plan that cannot run; ``problems`` holds one line per problem.

    Parameters
    ----------
    problems : list of str
        One line per problem (the message joins them with newlines).
    """

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


class RunsNotFinishedError(UserInputError):
    """Runs a caller needs are not finished in the run store, and it asked not to train them."""


def unfinished_runs(plan: ScalePlan, only: tuple[str, ...] | None = None) -> tuple[list[Path], int]:
    """Find the run folders of a plan's experiments without a finished run (reads the run store only).

    ``plan`` is the resolved scale; ``only`` names experiment families (``base``, ``extra``, ``presence``), all by
    default. Returns the unfinished run folders, in plan order, and the number of runs those experiments have in all.
    """
    from diagnostics.finetune import is_done
    from diagnostics.finetune import sweep_runs

    paths = [spec.path for config in experiment_configs(plan, only).values() for spec in sweep_runs(config)]
    return [p for p in paths if not is_done(p)], len(paths)


def require_finished(plan: ScalePlan, only: tuple[str, ...] | None = None) -> None:
    """Raise :class:`RunsNotFinishedError` unless every run of a plan's experiments is finished in its run store.

    ``plan`` and ``only`` as for :func:`unfinished_runs`. The error names how many runs are missing (the first
    five listed) and the command that makes them.
    """
    missing, total = unfinished_runs(plan, only)
    if not missing:
        return
    families = ", ".join(only) if only else "all"
    scale = plan.scale
    command = "bash scripts/demo.sh" if scale == "demo" else f"diagnostics pipeline --scale {scale}"
    shown = [str(p) for p in missing[:5]] + ([f"... and {len(missing) - 5} more"] if len(missing) > 5 else [])
    raise RunsNotFinishedError(
        f"{len(missing)} of {total} runs of the {scale} scale ({families} experiments) are not finished in the run "
        f"store {plan.runs_dir.resolve()}; nothing was trained. Run `{command}` from the project root first "
        f"(or pass runs_dir= to a run store that holds them, or train_missing=True to train them here)."
        + "".join(f"\n  {line}" for line in shown))


def ensure_runs(plan: ScalePlan, only: tuple[str, ...] | None = None, *, train: bool = True) -> pd.DataFrame:
    """Run every unfinished sweep of a plan (finished runs are skipped) and return their predictions.

    Parameters
    ----------
    plan : ScalePlan
        The resolved scale (:meth:`ScalePlan.resolve`), whose run store is read and written.
    only : tuple of str, optional
        Experiment families to run (``base``, ``extra``, ``presence``); all by default.
    train : bool
        Train the unfinished runs (default). With ``False`` nothing trains: an unfinished run raises
        :class:`RunsNotFinishedError`, which names the command that makes the runs. When every run is finished
        and sound (:func:`~diagnostics.finetune.verify_run`) the store is only read, so a read-only run store
        works.

    Returns
    -------
    pandas.DataFrame
        The predictions table of every finished run of those experiments.
    """
    from diagnostics.finetune import collect_predictions, is_done, run_sweeps, verify_run
    from diagnostics.finetune import check_compatible, sweep_runs

    if not train:
        require_finished(plan, only)
    configs = experiment_configs(plan, only)
    specs = []
    for config in configs.values():
        specs += sweep_runs(config)
        check_compatible(config, sweep_runs(config))  # finished runs made with other settings are never read as these
    # a finished, sound store is only read (it may be read-only): nothing there is rewritten
    if train and any(not is_done(spec.path) or verify_run(spec.path) for spec in specs):
        status = run_sweeps(list(configs.values()))
        failed = status[~status["state"].isin(["done", "skipped"])]
        if len(failed):
            raise RuntimeError(f"runs not finished:\n{failed.to_string(index=False)}")
    frames = [collect_predictions(plan.runs_dir / name) for name in configs]
    return pd.concat(frames, ignore_index=True)


def versions() -> dict[str, Any]:
    """Record the Python and library versions next to results.

    Keys ``python``, one per package of :data:`PACKAGES` (``"not installed"`` when missing) and ``code``: this
    package's version and git commit (:func:`diagnostics.core.version.code_version`).
    """
    from diagnostics.core.version import code_version

    found: dict[str, Any] = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    found["code"] = code_version()
    return found


def execute_notebook(script: Path, scale: str | None, out_dir: Path, runs_dir: Path,
                     parameters: dict[str, Any] | None = None) -> float:
    """Execute one jupytext notebook script with papermill into ``out_dir/notebooks``.

    The executed notebook goes to ``out_dir/notebooks/``, its figures to ``out_dir/figures/``. The kernel listens
    on sockets of its own (:mod:`diagnostics.pipeline._kernel`), so notebooks started at once never race for a port.

    Parameters
    ----------
    script : Path
        The notebook's jupytext script (``notebooks/NN_*.py``).
    scale : str or None
        Its ``scale`` parameter (unused with ``parameters``).
    out_dir : Path
        The report folder.
    runs_dir : Path
        The run store it reads (its ``runs_dir`` parameter).
    parameters : dict, optional
        The notebook's own parameters, instead of ``scale`` and ``train_missing`` (a notebook of
        :data:`NOT_IN_MAIN_JOB`); ``output_dir`` and ``runs_dir`` are passed always.

    Returns
    -------
    float
        The seconds of execution, rounded to 0.1.
    """
    import jupytext
    import papermill

    from ._kernel import notebook_kernel_manager

    (out_dir / "notebooks").mkdir(parents=True, exist_ok=True)
    source = out_dir / "notebooks" / f".{script.stem}.source.ipynb"
    jupytext.write(jupytext.read(script), source)
    t0 = time.perf_counter()
    papermill.execute_notebook(str(source), str(out_dir / "notebooks" / f"{script.stem}.ipynb"),
                               cwd=str(notebooks_dir().parent), kernel_name="python3", progress_bar=False,
                               kernel_manager_class=notebook_kernel_manager(),
                               parameters={"output_dir": str((out_dir / "figures").resolve()),
                                           "runs_dir": str(Path(runs_dir).resolve()),
                                           **({"scale": scale, "train_missing": True} if parameters is None
                                              else parameters)},
                               # only errors from the kernel's start-up (over TCP, on Windows: a warning per notebook)
                               extra_arguments=["--IPKernelApp.log_level=ERROR"])
    source.unlink()
    return round(time.perf_counter() - t0, 1)


def execute_notebooks(scale: str, out_dir: Path, runs_dir: Path, names: list[str] | None = None,
                      lanes: int = 1) -> dict[str, float]:
    """Execute the analysis notebooks with papermill into ``out_dir/notebooks``; returns seconds per notebook.

    ``scale`` (``tiny``, ``demo`` or ``paper``) and the run store ``runs_dir`` are passed to each notebook, as in
    :func:`execute_notebook`; ``names`` are the notebook stems to execute (all by default; never those of
    :data:`NOT_IN_MAIN_JOB`, which read a store the main job does not make). ``lanes`` notebooks are
    executed at once (separate processes). The notebooks only read the run store and write their own files, so
    their order does not matter; the slowest (:data:`SLOWEST_FIRST`) start first. Two lanes on 2 cores overlap
    the single-threaded parts (kernel start-up, imports, spaCy, probe fits) of one notebook with another's; their
    kernels run with :data:`SHARED_CORES_ENV`.
    Returns notebook stem -> seconds, sorted by stem.
    """
    (out_dir / "notebooks").mkdir(parents=True, exist_ok=True)
    scripts = [s for s in sorted(notebooks_dir().glob("[0-9][0-9]_*.py"))
               if s.stem not in NOT_IN_MAIN_JOB and (names is None or s.stem in names)]
    scripts.sort(key=lambda s: (SLOWEST_FIRST.index(s.stem) if s.stem in SLOWEST_FIRST else len(SLOWEST_FIRST),
                                s.stem))
    at_once = max(1, min(lanes, len(scripts)))
    print(f"notebooks: executing {len(scripts)}, {at_once} at a time", file=sys.stderr, flush=True)
    timings: dict[str, float] = {}
    if at_once == 1:
        for script in scripts:
            _started(script.stem)
            timings[script.stem] = execute_notebook(script, scale, out_dir, runs_dir)
            _finished(script.stem, timings[script.stem], len(timings), len(scripts))
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(max_workers=lanes, mp_context=mp.get_context("spawn"),
                                 initializer=_share_cores) as pool:
            futures = {pool.submit(execute_notebook, s, scale, out_dir, runs_dir): s.stem for s in scripts}
            for future in as_completed(futures):
                timings[futures[future]] = future.result()
                _finished(futures[future], timings[futures[future]], len(timings), len(scripts))
    return dict(sorted(timings.items()))


def _started(stem: str) -> None:
    print(f"notebook {stem}: running", file=sys.stderr, flush=True)


def _finished(stem: str, seconds: float, done: int, total: int) -> None:
    print(f"notebook {stem}: done in {seconds:.1f} s ({done}/{total})", file=sys.stderr, flush=True)


def _share_cores() -> None:
    """Set :data:`SHARED_CORES_ENV` in a lane's process (its kernels inherit it), keeping what the user set."""
    import os

    for key, value in SHARED_CORES_ENV.items():
        os.environ.setdefault(key, value)


def prepare(plan: ScalePlan) -> CheckedPlan:
    """Check a resolved scale's plan and record its inputs in the run store, before anything trains.

    The plan's problems (missing or too small sources, models not available locally, a language without a
    diagnostic set, finished runs made with other settings) and then the presence mixtures' (a feature too rare
    for a share) raise :class:`PlanError`. Its notices (a language skipped, a dataset standing in for the study's)
    are printed to stderr as ``notice: ...`` lines once the plan passes. Returns the checked plan of runs; the
    plan's inputs are recorded as ``<runs_dir>/pipeline.json`` with its substitutions (datasets standing in for
    the study's, see :func:`diagnostics.pipeline._inputs.load_substitutions`).
    """
    from ._plan import build_mixtures, check_plan

    checked = check_plan(plan)
    if checked.problems:
        raise PlanError(checked.problems)
    problems = build_mixtures(experiment_configs(plan, ("presence",)))
    if problems:
        raise PlanError(problems)
    plan.inputs.save(plan.runs_dir, checked.substitutions)  # only inputs that passed every check are recorded
    for notice in checked.notices:
        print(f"notice: {notice}", file=sys.stderr)
    return checked


def detach_pipeline(scale: str, runs_dir: str | Path | None = None, inputs: PipelineInputs | None = None):
    """Submit every unfinished run of a scale to the cluster and return at once (``pipeline --detach``).

    The plan is checked and its inputs recorded as for :func:`run_pipeline`; then the runs of every experiment go to
    the cluster as detached jobs (:func:`diagnostics.finetune.submit_sweeps`), which run on their own. Once they have
    finished, :func:`run_pipeline` with the same scale, run store and inputs trains nothing and writes the report.

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : str or Path, optional
        Run store; default ``<project root>/runs/<scale>``.
    inputs : PipelineInputs, optional
        Data files and overrides given (see :meth:`ScalePlan.resolve`); they must choose ``executor: submitit``.

    Returns
    -------
    DetachedSweep or None
        The record of what was submitted (written in every experiment folder); ``None`` when every run is finished.

    Raises
    ------
    ConfigError
        For a wrong setting, or an executor that is not the cluster one, before anything is submitted.
    PlanError
        When the plan cannot run (one line per problem).
    """
    from diagnostics.finetune import check_compatible, submit_sweeps, sweep_runs

    plan = ScalePlan.resolve(scale, runs_dir, inputs)
    prepare(plan)
    configs = experiment_configs(plan)
    for config in configs.values():
        check_compatible(config, sweep_runs(config))
    return submit_sweeps(list(configs.values()))


def run_pipeline(scale: str = "demo", out_dir: str | Path | None = None, runs_dir: str | Path | None = None,
                 notebooks: list[str] | None = None, lanes: int | None = None,
                 inputs: PipelineInputs | None = None) -> Path:
    """The main job: sweeps, then every analysis notebook, then ``index.html``.

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` (default) or ``paper``.
    out_dir : str or Path, optional
        Report folder; default ``<project root>/reports/<scale>``
        (:func:`~diagnostics.core.resources.default_reports_dir`).
    runs_dir : str or Path, optional
        Run store; default ``<project root>/runs/<scale>`` (:func:`~diagnostics.core.resources.default_runs_dir`), where
        the notebooks look. Finished runs and cached vectors there are reused.
    notebooks : list of str, optional
        Notebook stems to execute (all by default).
    lanes : int, optional
        Notebooks executed at once; the scale's ``notebook_lanes`` by default.
    inputs : PipelineInputs, optional
        Data files and overrides given (see :meth:`ScalePlan.resolve`).

    Returns
    -------
    Path
        The written ``index.html``.

    Raises
    ------
    ConfigError
        Before anything is written, for a wrong setting (one line naming each).
    PlanError
        Before anything trains, when the plan cannot run (one line per problem).
    """
    from diagnostics.report import render_report

    out_dir = Path(out_dir) if out_dir is not None else default_reports_dir(scale)
    started = time.perf_counter()
    plan = ScalePlan.resolve(scale, runs_dir, inputs)
    checked = prepare(plan)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    predictions = ensure_runs(plan)
    sweep_s = time.perf_counter() - t0
    notebook_s = execute_notebooks(plan.scale, out_dir, plan.runs_dir, notebooks,
                                   lanes=lanes or plan.spec.notebook_lanes)
    found_versions = versions()
    manifest = {
        "scale": plan.scale,
        "scale_spec": plan.spec.to_dict(),
        "inputs": plan.inputs.to_dict(),
        "substitutions": checked.substitutions,
        "configs": {name: cfg.to_dict() for name, cfg in plan.experiments.items()},
        "runs": int(predictions.groupby(["experiment", "language", "model", "seed"]).ngroups),
        "seeds": sorted(int(s) for s in predictions["seed"].unique()),
        "versions": found_versions,
        "code": found_versions["code"],
        "timings_s": {"sweeps": round(sweep_s, 1), "notebooks": notebook_s,
                      "total": round(time.perf_counter() - started, 1)},
    }
    write_json_atomic(out_dir / "manifest.json", manifest, sort_keys=False)
    return render_report(out_dir, title=f"NLI diagnostics — {plan.scale} scale")
