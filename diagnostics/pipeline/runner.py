"""Run the main job end to end, reusing every finished run, cached vector and executed notebook input."""

from __future__ import annotations

import json
import platform
import time
from importlib import metadata
from pathlib import Path

import pandas as pd

from .scales import experiment_configs, scale_spec

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PACKAGES = ("numpy", "pandas", "scipy", "scikit-learn", "torch", "transformers", "spacy", "pymorphy3", "seaborn")


def ensure_runs(scale: str, runs_dir: str | Path, only: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Run every unfinished sweep of a scale (finished runs are skipped) and return their predictions.

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : str or Path
        Root of the run store.
    only : tuple of str, optional
        Experiment families to run (``base``, ``extra``, ``presence``); all by default.

    Returns
    -------
    pandas.DataFrame
        The predictions table of every finished run of those experiments.
    """
    from diagnostics.finetune import collect_predictions, run_sweeps

    configs = experiment_configs(scale, runs_dir, only)
    status = run_sweeps(list(configs.values()))
    failed = status[~status["state"].isin(["done", "skipped"])]
    if len(failed):
        raise RuntimeError(f"runs not finished:\n{failed.to_string(index=False)}")
    frames = [collect_predictions(Path(runs_dir) / name) for name in configs]
    return pd.concat(frames, ignore_index=True)


def versions() -> dict[str, str]:
    """Python and library versions, recorded next to results."""
    found = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "not installed"
    return found


def execute_notebooks(scale: str, out_dir: Path, runs_dir: Path, names: list[str] | None = None) -> dict[str, float]:
    """Execute the analysis notebooks with papermill into ``out_dir/notebooks``; returns seconds per notebook."""
    import jupytext
    import papermill

    (out_dir / "notebooks").mkdir(parents=True, exist_ok=True)
    timings = {}
    scripts = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
    for script in scripts:
        if names is not None and script.stem not in names:
            continue
        source = out_dir / "notebooks" / f".{script.stem}.source.ipynb"
        jupytext.write(jupytext.read(script), source)
        t0 = time.perf_counter()
        papermill.execute_notebook(str(source), str(out_dir / "notebooks" / f"{script.stem}.ipynb"),
                                   cwd=str(NOTEBOOKS.parent), kernel_name="python3", progress_bar=False,
                                   parameters={"scale": scale, "output_dir": str(out_dir / "figures"),
                                               "runs_dir": str(runs_dir)})
        source.unlink()
        timings[script.stem] = round(time.perf_counter() - t0, 1)
    return timings


def run_pipeline(scale: str = "demo", out_dir: str | Path | None = None, runs_dir: str | Path | None = None,
                 notebooks: list[str] | None = None) -> Path:
    """The main job: sweeps, then every analysis notebook, then ``index.html``.

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` (default) or ``paper``.
    out_dir : str or Path, optional
        Report folder; default ``reports/<scale>``.
    runs_dir : str or Path, optional
        Run store; default ``runs/<scale>``. Finished runs and cached vectors there are reused.
    notebooks : list of str, optional
        Notebook stems to execute (all by default).

    Returns
    -------
    Path
        The written ``index.html``.
    """
    from diagnostics.report import render_report

    spec = scale_spec(scale)
    out_dir = Path(out_dir or f"reports/{scale}")
    runs_dir = Path(runs_dir or f"runs/{scale}")
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    t0 = time.perf_counter()
    predictions = ensure_runs(scale, runs_dir)
    sweep_s = time.perf_counter() - t0
    notebook_s = execute_notebooks(scale, out_dir, runs_dir, notebooks)
    manifest = {
        "scale": scale,
        "scale_spec": {k: v for k, v in spec.__dict__.items()},
        "configs": {name: cfg.to_dict() for name, cfg in experiment_configs(scale, runs_dir).items()},
        "runs": int(predictions.groupby(["experiment", "language", "model", "seed"]).ngroups),
        "seeds": sorted(int(s) for s in predictions["seed"].unique()),
        "versions": versions(),
        "timings_s": {"sweeps": round(sweep_s, 1), "notebooks": notebook_s,
                      "total": round(time.perf_counter() - started, 1)},
    }
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
    return render_report(out_dir, title=f"NLI diagnostics — {scale} scale")
