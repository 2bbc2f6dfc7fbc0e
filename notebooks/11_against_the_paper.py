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
# # 11 · Against the paper: every number the study prints, beside ours
# The reference study (Tikhonova et al., 2022) prints 176 numbers and checkable claims in its text: per-category
# MCCs of single runs (§5.1, §5.2), σ ranges over seeds (Table 6), the effect of extra MNLI data (§5.3, Table 4),
# feature presence (§5.4, Table 5), probing and data facts. They ship with the package
# (`diagnostics/stats/paper_numbers.csv`); `stats.against_paper` computes our value of each from this run
# store, with the same statistics the other notebooks use, and puts it beside the paper's:
#
# * `paper`, `ours`, `difference` (ours − paper) and `sigma`, our σ over seeds of that category;
# * `flag`: for a measured value, the paper's number lies further from ours than that σ; for a claim ("positive
#   for every seed", value 1), a design or a setting, ours differs;
# * `comparable`: only runs of mBERT (`bert-base-multilingual-cased`) trained with the study's recipe (jiant v1's
#   trainer, batch 4, lr 1e-5, every layer) on the study's data, scored on AX-b / LiDiRus (or a set you name as
#   the study's translation), can be compared; anything else says why not;
# * `status`: `not run` where the store lacks the experiment, language or seed; `not computed` for numbers that
#   are not about predictions (annotation, hardware), and for the probing rows (§5.4) until notebook 05 has left
#   its probing results beside the figures.
#
# The tiny and demo scales train other models with a cheap recipe: their table shows that the machinery runs, and
# the verdict says plainly that the comparison means nothing there.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
import pandas as pd
from IPython.display import Markdown, display

from diagnostics.finetune import list_runs
from diagnostics.pipeline import PROBE_RESULTS, ensure_runs, notebook_paths, plan_datasets
from diagnostics.plots import paper_comparison, save
from diagnostics.stats import against_paper, paper_verdict
from diagnostics.tables import read_table

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base", "extra", "presence"),
                                      train_missing=train_missing)
predictions = ensure_runs(scale, runs_dir)
datasets = plan_datasets(scale, runs_dir)  # the user's files (diagnostic_fr ...) by dataset name, as values
configs = [run.config() for run in list_runs(runs_dir, state="done")]
probe_results = output_dir / PROBE_RESULTS  # written by notebook 05
probes = read_table(probe_results) if probe_results.is_file() else None
table = against_paper(predictions, configs, dataset=datasets, probes=probes)
verdict = paper_verdict(table)
display(Markdown(f"**Verdict: {verdict}.**"))
if not verdict.startswith("comparable"):
    display(Markdown("The differences below are differences between *this* setting and the study's: they say "
                     "nothing about whether the study replicates. Run the paper scale (mBERT, `configs/paper.yaml`) "
                     "for a comparison that means something."))
pd.crosstab(table["section"], table["status"]).reindex(table["section"].unique())  # in the paper's order

# %% [markdown]
# ## Side by side: the numbers we could compute
# Sorted as the paper prints them. `σ` is our σ over seeds of the row's category (the mean over languages for
# `all`); for claims, `1` means the sentence holds.

# %%
columns = ["section", "source", "experiment", "language", "category", "seed", "statistic", "paper", "ours",
           "difference", "sigma", "flag", "comparable"]
compared = table[table["status"] == "compared"]
display(compared[columns].round(3).style.hide(axis="index").format(precision=3, na_rep="–"))

# %%
fig = paper_comparison(table, title=f"{scale} scale: {verdict}")
save(fig, output_dir, "11_against_the_paper")
display(fig)

# %% [markdown]
# ## Where ours and the paper's differ beyond our seed noise
# A measured value is flagged when |ours − paper| exceeds our σ of that category over seeds: a difference seeds
# alone would rarely make. With few seeds σ itself is uncertain, so read the flags as leads, not verdicts.

# %%
flagged = compared[compared["flag"].fillna(False).astype(bool)]
print(f"{len(flagged)} of {len(compared)} compared numbers differ beyond our seed σ or the printed precision")
flagged[columns].round(3)

# %% [markdown]
# ## What this store cannot say
# Numbers whose experiment, language or seed this store lacks, and numbers about something other than predictions.

# %%
missing = table[table["status"] != "compared"]
missing.groupby(["status", "reason"]).size().rename("numbers").reset_index().sort_values("numbers",
                                                                                          ascending=False)
