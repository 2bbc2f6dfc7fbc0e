"""Where a notebook reads its runs and writes its figures, whatever the working directory of its kernel."""

from __future__ import annotations

from pathlib import Path

from diagnostics.core.resources import default_reports_dir, default_runs_dir, work_root

#: The probing results notebook 05 leaves in the figures folder, with a ``run_model`` column (the run store's model
#: name), for the probing rows of notebook 11 (``paper.against_paper(probes=...)``).
PROBE_RESULTS = "05_probes.parquet"


def _under_root(path: str | Path) -> Path:
    """An absolute path: a relative one is taken from :func:`~diagnostics.core.resources.work_root`."""
    path = Path(path).expanduser()
    return (path if path.is_absolute() else work_root() / path).resolve()


#: Folder under ``reports/`` for the figures of notebooks run by hand (by scale), apart from the main job's report.
INTERACTIVE = "interactive"


def notebook_paths(scale: str, runs_dir: str | Path | None = None, output_dir: str | Path | None = None, *,
                   needs: tuple[str, ...] | None = None, train_missing: bool = False) -> tuple[Path, Path]:
    """The run store and the figures folder of a notebook, as absolute paths; prints which run store it reads.

    Every analysis notebook calls it first, so it also sets how the notebook shows tables: in an IPython kernel, wide
    pandas tables break their headers after underscores (:func:`diagnostics.report.use_breakable_headers`), to fit
    beside JupyterLab's file browser and in the report.

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : str or Path, optional
        Run store; default ``<project root>/runs/<scale>``, where ``bash scripts/demo.sh`` and
        ``diagnostics pipeline --scale <scale>`` write. A relative path is taken from the project root
        (:func:`diagnostics.core.resources.work_root`), not from the kernel's working directory.
    output_dir : str or Path, optional
        Figures folder (created); default ``<project root>/reports/interactive/<scale>/figures``: a notebook opened by
        hand never rewrites the figures of the main job's report (``reports/<scale>/figures``, which the pipeline
        passes explicitly).
    needs : tuple of str, optional
        Experiment families the notebook reads (``base``, ``extra``, ``presence``); ``None`` for a notebook that
        reads no runs.
    train_missing : bool
        With ``False`` (a notebook opened by hand) an unfinished run of ``needs`` raises
        :class:`~diagnostics.pipeline._runner.RunsNotFinishedError` naming the command that makes the runs, so the
        notebook never trains; the pipeline and the tests pass ``True``.

    Returns
    -------
    tuple of Path
        ``(runs_dir, output_dir)``.
    """
    runs = _under_root(runs_dir) if runs_dir is not None else default_runs_dir(scale)
    figures = (_under_root(output_dir) if output_dir is not None
               else default_reports_dir(scale).parent / INTERACTIVE / scale / "figures")
    if needs is not None:
        from ._runner import require_finished, unfinished_runs
        from ._scale_plan import ScalePlan

        plan = ScalePlan.resolve(scale, runs)
        if train_missing:
            missing, total = unfinished_runs(plan, needs)
            state = f"{total - len(missing)} of {total} runs finished, the others train now" if missing else \
                f"all {total} runs finished"
        else:
            require_finished(plan, needs)
            state = "all runs finished"
        print(f"{scale} scale: reading the run store {runs} ({', '.join(needs)}: {state})")
    figures.mkdir(parents=True, exist_ok=True)
    print(f"figures go to {figures}")
    from diagnostics.report import use_breakable_headers

    use_breakable_headers()  # a no-op outside a kernel
    return runs, figures


def probe_results_file(output_dir: str | Path, scale: str) -> Path | None:
    """The probing results of notebook 05 (:data:`PROBE_RESULTS`) for notebook 11: this session's, else the main job's.

    Parameters
    ----------
    output_dir : str or Path
        The figures folder of the notebook (:func:`notebook_paths`).
    scale : str
        The scale, whose main job's report (``reports/<scale>/figures``) is the fallback.

    Returns
    -------
    Path or None
        The first of the two files that exists; None when neither does.
    """
    for folder in (Path(output_dir), default_reports_dir(scale) / "figures"):
        if (folder / PROBE_RESULTS).is_file():
            return folder / PROBE_RESULTS
    return None

