# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: nli-diagnostics (.venv)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 09 · Bring your own predictions
# Predictions made elsewhere — lm-evaluation-harness `--log_samples` files, the output of a `transformers`
# `Trainer`, a colleague's spreadsheet — become the one predictions table with
# `diagnostics.predictions.import_predictions` (command line: `diagnostics predictions import`). Every row is matched
# to an example of the diagnostic by its id, by its premise and hypothesis (after Unicode, quote and white-space
# normalisation) or by its position; the gold label comes from the dataset; rows that do not match are listed with
# the reason, and a partial match is refused unless asked for. Here the run store's own predictions are written in
# two foreign formats, imported back, and analysed like any run of the study: per-category MCC and σ over seeds,
# then a per-category comparison of two runs (`diagnostics compare`: Multi-Bootstrap deltas with adjusted p-values,
# and McNemar's exact test for single runs).

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
import re

import pandas as pd
from IPython.display import Markdown, display

from diagnostics import plots, predictions, stats
from diagnostics.pipeline import ScalePlan, ensure_runs, notebook_paths
from diagnostics.plots import save

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base",), train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
spec = scale_plan.spec
table = ensure_runs(scale_plan, only=("base",), train=train_missing)
english = table[(table["experiment"] == "base") & (table["language"] == "en")]
dataset = "axb" if "axb" in set(english["dataset"]) else english["dataset"].iat[0]
english = english[english["dataset"] == dataset].reset_index(drop=True)
model = english["model"].iat[0]
work = output_dir.parent / "09_bring_your_own"  # the foreign files and the comparison, next to the figures
print(f"{dataset}: {english['seed'].nunique()} seeds of {model}, {len(english)} predictions")

# %% [markdown]
# ## Foreign files
# One lm-evaluation-harness samples file per seed (a multiple-choice task: the log-probability of each answer,
# `True` = entailment), and a colleague's table with only the texts, the run and 0/1 codes (0 = entailment),
# separated by semicolons, whose texts went through a word processor: curly quotes, non-breaking and doubled spaces.

# %%
lm_files = predictions.to_lm_eval(english, work / "lm_eval", task=dataset)
print(lm_files[0].name, lm_files[0].read_text(encoding="utf-8").splitlines()[0][:400], "...")


def typeset(text: str) -> str:
    """What a word processor does to a text: curly quotes, a non-breaking space after commas, a trailing space."""
    out, opening = [], True
    for char in text:
        if char == '"':
            out.append("\u201c" if opening else "\u201d")
            opening = not opening
        else:
            out.append("\u2019" if char == "'" else char)
    return "".join(out).replace(", ", ",\u00a0 ") + " "


codes = "0=entailment,1=not_entailment"
csv_path = predictions.to_columns(english, work / "colleague.csv", text=True, label_map=codes, run_column="run",
                                 probability=False)
colleague = pd.read_csv(csv_path)
colleague[["premise", "hypothesis"]] = colleague[["premise", "hypothesis"]].map(typeset)
colleague.to_csv(csv_path, index=False, sep=";")
colleague.head(3)

# %% [markdown]
# ## Import them back
# The samples files match by `doc.idx` (their texts are checked too), the seed comes from the file name; the
# colleague's rows match by their texts, the separator is sniffed and the codes go through the label map.

# %%
from_lm_eval = predictions.import_with_report(lm_files, dataset, seed_pattern=r"seed(\d+)", experiment="lm-eval",
                                              model=model)
print(from_lm_eval.summary())
from_csv = predictions.import_with_report(csv_path, dataset, label_map=codes, experiment="colleague", model=model)
print(from_csv.summary())

# %%
check = english.merge(from_csv.table, on=["seed", "example_id"], suffixes=("", "_imported"))
pd.Series({"rows of the run store": len(english), "rows imported from the colleague's table": len(from_csv.table),
           "same prediction": int((check["prediction"] == check["prediction_imported"]).sum()),
           "same gold label": int((check["label"] == check["label_imported"]).sum())})

# %% [markdown]
# A row whose texts are not those of any example (here, one hypothesis rewritten) is reported with the reason and
# the nearest example, and the import is refused (`allow_partial=True` imports the rest).

# %%
broken = colleague.copy()
broken.loc[3, "hypothesis"] = "This sentence is not in the diagnostic."
broken.to_csv(work / "colleague_broken.csv", index=False, sep=";")
try:
    predictions.import_predictions(work / "colleague_broken.csv", dataset, label_map=codes)
except predictions.ImportRefusedError as err:
    print(err)
    display(err.result.unmatched[["file", "line", "seed", "reason", "detail", "closest_id"]])

# %% [markdown]
# ## Seed stability of the imported runs
# The imported table is the one predictions table: every analysis of the study applies.

# %%
scores = stats.category_scores(from_csv.table)
stab = stats.stability(scores)
fig = plots.category_seed_heatmap(scores, {"experiment": "colleague"})
save(fig, output_dir, "09_imported_seed_mcc")
display(fig)
stab[stab["level"] == "fine"].sort_values("std", ascending=False)[["category", "n", "mean", "std"]].head(8).round(3)

# %% [markdown]
# ## Compare two runs per category
# `compare_tables` (command line: `diagnostics compare TABLE_A TABLE_B`) gives, per category, the Multi-Bootstrap
# delta B − A with its 95 % interval and a two-sided p-value adjusted over the categories (Holm); each side here is
# a single run, so McNemar's exact test on the examples one run gets right and the other wrong is reported too.

# %%
seeds = sorted(from_csv.table["seed"].unique())
comparison = predictions.compare_tables(from_lm_eval.table, from_csv.table, select_a={"seed": seeds[0]},
                                        select_b={"seed": seeds[-1]}, n_boot=spec.n_boot,
                                        names=(f"seed {seeds[0]}", f"seed {seeds[-1]}"))
plots.write_comparison(comparison, work / "compare")
fig = plots.comparison_figure(comparison)
save(fig, output_dir, "09_compare_seeds")
display(fig)
# the summary's headings two levels down, under this section's
display(Markdown(re.sub(r"^(#+) ", r"##\1 ", comparison.summary().split("## Table")[0], flags=re.MULTILINE)))
