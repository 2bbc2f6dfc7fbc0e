"""The instability explorer's figure: one category's flipping examples with every seed's prediction."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..core.schema import ENTAILMENT
from ..explorer import run_label

def _short(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def focus(premise: str, hypothesis: str, width: int = 60, context: int = 3) -> tuple[str, str]:
    """Shorten a premise and hypothesis to the words where they differ, with a little context around.

    Diagnostic pairs are often one edit apart ("is" / "isn't"); cutting both at the same place shows the edit.

    Parameters
    ----------
    premise, hypothesis : str
        The pair.
    width : int
        Characters at most per side.
    context : int
        Words kept before the first differing word.

    Returns
    -------
    tuple of str
        The shortened premise and hypothesis (``…`` where cut).
    """
    a, b = str(premise).split(), str(hypothesis).split()
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    begin = max(0, start - context)

    def cut(words: list[str]) -> str:
        text = ("… " if begin > 0 else "") + " ".join(words[begin:])
        return _short(text, width)

    return cut(a), cut(b)


def flipping_figure(model, setting: int, category: str, max_examples: int = 12,
                    width: int = 64) -> Figure:
    """Draw one category's flipping examples: every seed's prediction and P(entailment), gold label, Δσ.

    Parameters
    ----------
    model : diagnostics.explorer.ExplorerModel
        The explorer's state.
    setting : int
        Index into ``model.settings``.
    category : str
    max_examples : int
        Examples shown (largest flip rate, then Δσ, first).
    width : int
        Characters of premise / hypothesis shown per example (cut around the words where they differ).

    Returns
    -------
    matplotlib.figure.Figure
    """
    frame = model.examples(setting, category, flipping_only=True).head(max_examples)
    labels = [run_label(r) for r in model.runs[setting]]
    stats = model.category_table(setting).loc[category]
    wide = model.seed_mcc(setting)
    per_seed = ", ".join(f"{wide.at[category, lab]:+.2f}" for lab in labels if lab in wide.columns)
    text_units, cell, stat_units = 6.2, 1.0, 1.5
    columns = labels + ["gold"]
    rows = max(len(frame), 1)
    units = text_units + cell * len(columns) + 0.3 + stat_units
    fig = Figure(figsize=(0.95 * units, 1.35 + 0.5 * rows))
    ax = fig.subplots()
    ax.set_xlim(-text_units, units - text_units)
    ax.set_ylim(rows - 0.5, -0.9)
    ax.axis("off")
    for x, name in enumerate(columns):
        ax.text(x + (0.3 if name == "gold" else 0), -0.65, name if name == "gold" else f"seed {name}",
                ha="center", va="center", fontsize=8.5, color="#333")
    for y, r in enumerate(frame.itertuples(index=False)):
        r = r._asdict()
        premise, hypothesis = focus(r["premise"], r["hypothesis"], width)
        ax.text(-text_units + 0.05, y - 0.17, f"#{r['example_id']}  P: {premise}", ha="left", va="center",
                fontsize=7.5)
        ax.text(-text_units + 0.05, y + 0.19, f"{' ' * (len(str(r['example_id'])) + 1)}  H: {hypothesis}",
                ha="left", va="center", fontsize=7.5, color="#1a1a1a")
        for x, name in enumerate(columns):
            gold = name == "gold"
            pred = r["label"] if gold else r.get(f"prediction_{name}")
            prob = None if gold else r.get(f"probability_{name}")
            colour = "#eeeeee" if pred is None else ("#9ecae1" if pred == ENTAILMENT else "#fdae6b")
            left = x + (0.3 if gold else 0) - 0.46
            ax.add_patch(Rectangle((left, y - 0.42), 0.92, 0.84, color=colour, lw=0))
            text = "–" if pred is None else ("E" if pred == ENTAILMENT else "N")
            if prob is not None and np.isfinite(prob):
                text += f" {prob:.2f}"
            ax.text(left + 0.46, y, text, ha="center", va="center", fontsize=8, fontweight="bold" if gold else None)
        ax.text(len(columns) + 0.05, y, f"flip rate {r['flip_rate']:.2f}\nΔσ {r['delta_sigma']:+.3f}", va="center",
                fontsize=7.5, color="#444")
    if frame.empty:
        ax.text(-text_units + 0.05, 0, "no flipping examples", fontsize=9)
    name = model.setting_name(setting)
    ax.set_title(f"{category} ({name}): σ of MCC over seeds = {stats['sigma']:.3f}; per-seed MCC {per_seed}\n"
                 f"{int(stats['n_flipping'])} of {int(stats['n'])} examples flip between seeds "
                 "(E = entailment, N = not; numbers: P(entailment); Δσ: change of σ without the example)",
                 fontsize=9, loc="left")
    fig.tight_layout()
    return fig

