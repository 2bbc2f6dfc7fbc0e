"""Figures for behavioural tests: capability x language failure heat map, failure rates per seed."""

from __future__ import annotations

from matplotlib.figure import Figure
import pandas as pd
import seaborn as sns

from diagnostics.behave import failure_rates


def failure_heatmap(results: pd.DataFrame, by: str = "capability", title: str = "Behavioural failure rate"):
    """Heat map of failure rates, capability (or test) x language, averaged over runs (seeds).

    Parameters
    ----------
    results : DataFrame
        Per-case results from :func:`diagnostics.behave.run_suite` or :func:`~diagnostics.behave.run_sweep`.
    by : {"capability", "test"}
        Rows of the map.
    title : str

    Returns
    -------
    matplotlib.figure.Figure
    """
    if by not in ("capability", "test"):
        raise ValueError(f"by must be 'capability' or 'test', got {by!r}")
    rates = failure_rates(results, by=by)
    table = rates.pivot_table(index=by, columns="language", values="failure_rate", aggfunc="mean")
    fig = Figure(figsize=(2.5 + 1.1 * table.shape[1], 1.0 + 0.45 * table.shape[0]))
    ax = fig.subplots()
    sns.heatmap(table, annot=True, fmt=".2f", vmin=0, vmax=1, cmap="Reds", cbar_kws={"label": "failure rate"}, ax=ax)
    ax.set_xlabel("language")
    ax.set_ylabel(by)
    n_runs = results["run"].nunique() if "run" in results.columns else 1
    ax.set_title(title + (f" (mean of {n_runs} runs)" if n_runs > 1 else ""))
    fig.tight_layout()
    return fig


def failure_by_seed(results: pd.DataFrame, by: str = "capability", language: str | None = None):
    """Plot the failure rate per capability (or test) as bars, one bar per seed, one panel per language.

    Parameters
    ----------
    results : DataFrame
        From :func:`diagnostics.behave.run_sweep` (needs a ``seed`` column).
    by : {"capability", "test"}
        Group the failure rates by capability or by test.
    language : str, optional
        Only this language.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if "seed" not in results.columns:
        raise ValueError("results have no 'seed' column; use run_sweep")
    rates = failure_rates(results, by=by)
    if language is not None:
        rates = rates[rates["language"] == language]
    languages = sorted(rates["language"].unique())
    rows = max(1, len(languages))
    fig = Figure(figsize=(10, 2.8 * rows))
    axes = fig.subplots(rows, 1, squeeze=False, sharex=True)
    for ax, lang in zip(axes[:, 0], languages):
        block = rates[rates["language"] == lang].copy()
        block["seed"] = block["seed"].astype(str)
        sns.barplot(block, x=by, y="failure_rate", hue="seed", ax=ax, errorbar=None)
        ax.set_ylim(0, 1)
        ax.set_ylabel(f"{lang}: failure rate")
        ax.set_xlabel("")
    axes[-1, 0].tick_params(axis="x", rotation=35)
    for label in axes[-1, 0].get_xticklabels():
        label.set_horizontalalignment("right")
    fig.suptitle("Failure rate per seed")
    fig.tight_layout()
    return fig
