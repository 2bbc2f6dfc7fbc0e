"""Write the stats of a predictions table as CSV files and one markdown summary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .agreement import agreement
from .inference import setting_ci
from .scores import category_scores
from .stability import rs_corr, stability
from .table import SETTING_KEYS


def markdown_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """A GitHub-flavoured markdown table of ``frame`` (floats rounded to ``digits``)."""
    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.{digits}f}"
        return str(value).replace("|", "\\|")

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def write_report(predictions: pd.DataFrame, out: str | Path, by: str = "category", n_boot: int = 0,
                 seed: int = 0, level: float = 0.95) -> dict[str, Path]:
    """Compute scores, stability, RS corr, agreement (and Multi-Bootstrap CIs) and write them to ``out``.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    out : str or Path
        Output folder (created).
    by : {"category", "coarse"}
        Category level of the stability, agreement and CI tables.
    n_boot : int
        Multi-Bootstrap samples per setting; 0 skips the CIs.
    seed : int
        Bootstrap seed.
    level : float
        Confidence level.

    Returns
    -------
    dict
        Name -> written path: ``scores, stability, rs_corr, agreement[, bootstrap_ci], summary`` (markdown).
    """
    if by not in ("category", "coarse"):
        raise ValueError(f"by must be 'category' or 'coarse', found {by!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    level_name = "fine" if by == "category" else "coarse"
    scores = category_scores(predictions, validate=False)
    stab = stability(scores)
    tables = {"scores": scores, "stability": stab, "rs_corr": rs_corr(scores, level_name),
              "agreement": agreement(predictions, by=by)}
    if n_boot > 0:
        settings = predictions[list(SETTING_KEYS)].drop_duplicates().to_dict("records")
        tables["bootstrap_ci"] = pd.concat([setting_ci(predictions, s, "mcc", by, n_boot, seed, level)
                                            for s in settings], ignore_index=True)
    paths = {}
    for name, table in tables.items():
        paths[name] = out / f"{name}.csv"
        table.to_csv(paths[name], index=False)
    summary = ["# Stability statistics", ""]
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
    paths["summary"] = out / "summary.md"
    paths["summary"].write_text("\n".join(summary), encoding="utf-8")
    return paths
