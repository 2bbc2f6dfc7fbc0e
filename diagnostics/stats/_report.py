"""Write the stats of a predictions table as CSV files and one markdown summary."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core.io_utils import output_folder
from ..core.tables import write_table_to

from ._agreement import agreement
from ._categories import dataset_for
from ._inference import setting_ci
from ._scores import category_scores
from ._stability import rs_corr, stability
from ._table import SETTING_KEYS, example_set_differences

#: Every file :func:`write_report` may write: the set replaces the previous one as a whole (other files are kept).
OUTPUTS = ("scores.csv", "stability.csv", "rs_corr.csv", "agreement.csv", "bootstrap_ci.csv", "summary.md")


def markdown_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """Render ``frame`` as a GitHub-flavoured markdown table (the index is left out).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; its columns become the header.
    digits : int
        Decimals of float cells (NaN is written as an empty cell).

    Returns
    -------
    str
        The table, one line per row, without a trailing newline; ``|`` in cells is escaped.
    """
    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.{digits}f}"
        return str(value).replace("|", "\\|")

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def write_report(predictions: pd.DataFrame, out: str | Path, by: str = "category", n_boot: int = 0,
                 seed: int = 0, level: float = 0.95, *, source: str | Path | None = None, resample: str = "both",
                 stratify: bool = True, datasets: Mapping[str, Any] | None = None,
                 progress: bool = False) -> dict[str, Path]:
    """Compute scores, stability, RS corr, agreement (and Multi-Bootstrap CIs) and write them to ``out``.

    Everything is computed before the first file is written; the files are written as one set
    (:func:`~diagnostics.core.io_utils.output_folder`): they replace the previous set of :data:`OUTPUTS` at once, an
    output this call did not write (e.g. the ``bootstrap_ci.csv`` of an earlier call with ``n_boot > 0``) is gone
    afterwards, and a call killed midway, or two calls writing ``out`` at once, leave the old set or one whole new
    one. The folder never mixes results of two calls. Other files in ``out`` are kept.

    ``predictions`` is a validated predictions table; ``out`` is created. ``by`` (``category`` / ``coarse``) is the
    category level of the stability, agreement and CI tables. ``n_boot`` Multi-Bootstrap samples per setting (0 skips
    the CIs) give CIs at ``level``; ``resample`` (``both`` / ``seeds`` / ``examples``) is what they resample (see
    :func:`~diagnostics.stats.setting_ci`), and ``stratify`` resamples each category within itself (fixed size) rather
    than the whole set. ``source`` is the table's file, named in the summary. ``datasets`` maps dataset name -> its
    source (a ``DataRef`` carrying a user file, or a table) for the names that are not bundled sets (see
    :func:`~diagnostics.stats.dataset_for`). ``progress`` shows a progress bar (on stderr) over the settings
    resampled by the Multi-Bootstrap.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    out : str or Path
        The folder of the report (created).
    by : str
        ``category`` or ``coarse``.
    n_boot : int
        Multi-Bootstrap samples per setting (0 skips the CIs).
    seed : int
        Seed of the resampling.
    level : float
        Confidence level of the CIs.
    source : str or Path, optional
        The table's file, named in the summary.
    resample : str
        ``both``, ``seeds`` or ``examples``.
    stratify : bool
        Resample each category within itself.
    datasets : Mapping, optional
        Dataset name -> its source, for the names that are not bundled sets.
    progress : bool
        Show a progress bar over the settings resampled.

    Returns
    -------
    dict of str to Path
        Name -> written path: ``scores, stability, rs_corr, agreement[, bootstrap_ci], summary`` (markdown).
    """
    if by not in ("category", "coarse"):
        raise ValueError(f"by must be 'category' or 'coarse', found {by!r}")
    out = Path(out)
    level_name = "fine" if by == "category" else "coarse"
    scores = category_scores(predictions, datasets, validate=False)
    stab = stability(scores)
    tables = {"scores": scores, "stability": stab, "rs_corr": rs_corr(scores, level_name),
              "agreement": agreement(predictions, datasets, by=by)}
    if n_boot > 0:
        from tqdm.auto import tqdm

        settings = predictions[list(SETTING_KEYS)].drop_duplicates().to_dict("records")
        # a few settings, each seconds long: every step is drawn (tqdm's default skips steps within 0.1 s, so a fast
        # host showed only 0/N before the bar was cleared)
        shown = tqdm(settings, desc=f"Multi-Bootstrap ({n_boot} samples)", unit="setting", leave=False,
                     disable=not progress, mininterval=0)
        tables["bootstrap_ci"] = pd.concat([setting_ci(predictions, s, "mcc", by, n_boot, seed, level,
                                                       dataset=dataset_for(datasets, s["dataset"]),
                                                       resample=resample, stratify=stratify)
                                            for s in shown], ignore_index=True)
    summary = ["# Stability statistics", ""]
    if source is not None:
        summary += [f"Predictions: `{source}`", ""]
    differences = example_set_differences(predictions)
    if not differences.empty:
        summary += ["## Warning: runs cover different examples", "",
                    "Each run is scored on its own examples; the spread over these seeds mixes example sets.", "",
                    markdown_table(differences), ""]
    head = stab[stab["level"].isin([level_name, "overall", "all"])]
    summary += [f"## MCC over seeds per {by} (mean, std with ddof=1)", "",
                markdown_table(head[[*SETTING_KEYS, "category", "n", "n_seeds", "mean", "std",
                                     "degenerate_share"]]), ""]
    summary += ["## RS corr (mean pairwise Pearson between seeds' per-category MCC vectors)", "",
                markdown_table(tables["rs_corr"]), ""]
    if "bootstrap_ci" in tables:
        ci = tables["bootstrap_ci"]
        summary += [f"## Multi-Bootstrap {level:.0%} CI of seed-mean MCC ({n_boot} samples, seed {seed})", "",
                    markdown_table(ci[[*SETTING_KEYS, "category", "estimate", "ci_low", "ci_high"]]), ""]
    paths = {}
    with output_folder(out, OUTPUTS) as files:
        for name, table in tables.items():
            with files.file(f"{name}.csv") as tmp:
                write_table_to(table, tmp, "csv")
            paths[name] = files.path(f"{name}.csv")
        with files.file("summary.md") as tmp:
            tmp.write_text("\n".join(summary), encoding="utf-8")
        paths["summary"] = files.path("summary.md")
    return paths


#: Every file :func:`write_feature_report` writes, as one set (the category report's files are kept).
FEATURE_OUTPUTS = ("feature_slices.csv", "feature_seeds.csv", "feature_flips.csv", "feature_summary.md")


def write_feature_report(slices, out: str | Path, *, source: str | Path | None = None) -> dict[str, Path]:
    """Write feature slices (:func:`~diagnostics.stats.feature_slices`) as CSV files and a markdown summary.

    The files (:data:`FEATURE_OUTPUTS`) replace an earlier set as a whole; other files in ``out`` are kept.

    Parameters
    ----------
    slices : FeatureSlices
        The slices (its ``table`` may carry a ``source`` column: annotator or gold categories).
    out : str or Path
        The folder (created).
    source : str or Path, optional
        The predictions file, named in the summary.

    Returns
    -------
    dict of str to Path
        ``slices``, ``seeds``, ``flips`` and ``summary`` -> the written file.
    """
    table = slices.table
    summary = ["# Slices by feature", ""]
    if source is not None:
        summary += [f"Predictions: `{source}`", ""]
    summary += ["Per feature: MCC over seeds (mean, σ with ddof=1) of the pairs with the feature and of those "
                "without it, and how many pairs of each side flip between seeds.", ""]
    if table.empty:
        summary += ["No feature was found in the examples.", ""]
    else:
        keys = [k for k in (*SETTING_KEYS, "source") if k in table.columns]
        shown = table[[*keys, "feature", "n_with", "n_seeds", "mcc_with", "mcc_with_sd", "mcc_without",
                       "mcc_without_sd", "mcc_delta", "accuracy_with", "accuracy_without", "flipping_with"]]
        summary += [markdown_table(shown), ""]
    tables = {"slices": table, "seeds": slices.per_seed, "flips": slices.flips}
    paths = {}
    with output_folder(out, FEATURE_OUTPUTS) as files:
        for name, frame in tables.items():
            with files.file(f"feature_{name}.csv") as tmp:
                write_table_to(frame, tmp, "csv")
            paths[name] = files.path(f"feature_{name}.csv")
        with files.file("feature_summary.md") as tmp:
            tmp.write_text("\n".join(summary), encoding="utf-8")
        paths["summary"] = files.path("feature_summary.md")
    return paths
