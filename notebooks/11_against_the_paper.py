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
# # 11 · Against the paper: every number the study prints, placed in our distribution
# The reference study (Tikhonova et al., 2022) prints 174 numbers and checkable claims in its text: per-category
# MCCs of single runs (§5.1, §5.2), σ ranges over seeds (Table 6), the effect of extra MNLI data (§5.3, Table 4),
# feature presence (§5.4, Table 5), probing and data facts. They ship with the package
# (`diagnostics/paper/paper_numbers.csv`); `paper.against_paper` computes our value of each from this run
# store, with the same statistics the other notebooks use, and places the paper's number in our distribution.
# The answer comes first in every table:
#
# * `paper`, `ours`, `interval low` / `interval high` and `verdict`. The paper's numbers and ours are computed on
#   the same AX-b / LiDiRus examples, so every interval is over **our seeds only**, examples held fixed. A number the
#   paper printed for **one run** (one seed, e.g. "Conditionals, en, seed 0: 0.6") is set against all our seeds,
#   never against our seed with the same index (the random streams differ, so the indices pair nothing): `ours` is
#   our seed mean and the interval is the 95 % prediction interval for one new run of ours, mean ± t·s·√(1 + 1/n)
#   over our n seeds; Fig. 1's cross-language correlation (one run per language) is computed for every combination
#   of one run per language. A **mean** over seeds gets its t-interval (Welch over languages), a **σ** its
#   chi-square interval (exact for normal runs, not biased low as a bootstrap σ of six seeds is), anything else
#   about all seeds (RS corr, shares, relative changes) its jackknife t-interval; the `interval` column names it.
#   `share below` / `share above` (in the table of differences) say how many of our seeds lie below and above a
#   single-run number.
# * `verdict`: **inside** means the interval holds the paper's number; **outside** means it does not;
#   **degenerate (all seeds equal)** means every seed of ours gives the same value, so there is no spread to place a
#   number in. Claims ("positive for every seed", 1 = true), designs, settings and counts have no interval: they
#   are compared as printed, i.e. ours must equal the paper's value to its last printed digit (the paper's 0.42
#   stands for anything from 0.415 to 0.425, its learning rate 1e-05 for 0.5e-05 to 1.5e-05). A number the paper
#   prints twice (Fig. 1's seed 0 shown again in §5.2) is one row, counted once.
# * `comparable`, `why not comparable`: only runs of mBERT (`bert-base-multilingual-cased`) trained with the study's
#   recipe (jiant v1's trainer, batch 4, lr 1e-5, every layer), its reading of the validation schedule
#   (`russiansuperglue`, shown per row as `val schedule`) and jiant's classifier head, on the study's data, scored
#   on AX-b / LiDiRus (or a set you name as the study's translation), and probes with the study's feature list,
#   can be compared; anything else says why not, in its own column.
# * Rows the store cannot give say why in `verdict`: `not run` where the store lacks the experiment or language;
#   `not computed` for numbers that are not about predictions (annotation, hardware), and for the probing rows
#   (§5.4) until notebook 05 has left its probing results beside the figures.
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

from diagnostics.core.tables import read_table
from diagnostics.finetune import list_runs
from diagnostics.paper import against_paper, number_label, paper_chance, paper_table, paper_verdict
from diagnostics.pipeline import ScalePlan, ensure_runs, notebook_paths, plan_datasets, probe_results_file
from diagnostics.plots import paper_comparison, save

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base", "extra", "presence"),
                                      train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
predictions = ensure_runs(scale_plan)
datasets = plan_datasets(scale_plan)  # the user's files (diagnostic_fr ...) by dataset name, as values
configs = [run.config() for run in list_runs(runs_dir, state="done")]
probe_results = probe_results_file(output_dir, scale)  # written by notebook 05 (this session's, else the main job's)
probes = read_table(probe_results) if probe_results is not None else None
table = against_paper(predictions, configs, dataset=datasets, probes=probes, level=0.95, n_sim=1000, seed=0)
verdict = paper_verdict(table)
display(Markdown(f"**Verdict: {verdict}.**"))
if not verdict.startswith("comparable"):
    display(Markdown("The differences below are differences between *this* setting and the study's: they say "
                     "nothing about whether the study replicates. Run the paper scale (mBERT, `configs/paper.yaml`) "
                     "for a comparison that means something."))
counts = pd.crosstab(table["section"], table["status"]).reindex(table["section"].unique())  # the paper's order
paper_table(counts.reset_index())

# %% [markdown]
# ## How many numbers would be outside by chance
# Suppose the paper's numbers came from the same distribution as ours, differing only by their seeds. The rows are
# not independent (four §5.2 Conditionals runs sit in one interval of ours; the σ ranges read the same languages),
# so the count of rows outside is not a sum of independent coin flips. It is simulated: 1,000 replications of the
# study (six runs per setting) and of this store, drawn from a normal model of our runs (their mean and their
# covariance across categories), each number placed in its interval as above, the rows outside counted. Below: the
# mean count, the range holding 90 % (and 95 %) of the replications, and the share of replications with at least
# as many rows outside as this store has. For a number about all seeds "outside" fires more often than 5 %: the
# interval is about *our* statistic, and the paper's number carries the noise of its own seeds as well.

# %%
chance = paper_chance(table)
lines = []
for row in chance.itertuples():
    lines.append(f"* {row.interval}: {row.outside} of {row.numbers} outside; by chance about "
                 f"{row.expected_outside:.1f} (90 % of replications: {row.range_90_low}–{row.range_90_high}; "
                 f"95 %: {row.range_95_low}–{row.range_95_high}); at least {row.outside} in "
                 f"{row.share_at_least:.0%} of replications")
display(Markdown("\n".join(lines)))
paper_table(chance)

# %% [markdown]
# ## Side by side: the numbers we could compute
# In the paper's order; `number` names each: section, experiment (against its reference), language, category and
# the paper's seed. For claims, `1` means the sentence holds. Every number keeps its significant digits
# (floating-point noise below 1e-12 reads as 0), and a dash marks a value that does not exist (no interval, a
# schedule not recorded). A reason that holds for every row (`why not comparable`) is said once, above the table.
# `val_schedule` and `mixture_order` are how the runs read what the paper leaves open (it prints no validation
# schedule and does not say how a mixture's file was ordered): assumptions named per row, never a reason against
# comparing (docs/finetune.md says which readings fit the paper's own statements).

# %%
columns = ["statistic", "paper", "ours", "interval_low", "interval_high", "verdict", "comparable",
           "why_not_comparable", "number", "val_schedule", "mixture_order"]
table["number"] = number_label(table)
compared = table[table["status"] == "compared"]
paper_table(compared, columns)

# %%
fig = paper_comparison(table, title=f"{scale} scale: {verdict}")
save(fig, output_dir, "11_against_the_paper")
display(fig)

# %% [markdown]
# ## Where ours and the paper's differ
# Numbers outside our interval, and claims, designs, settings and counts that differ from the printed value. Set
# the count of outside numbers against the chance figure above, with its range: that many is what seeds alone
# produce. `share below` / `share above` place a single-run number among our seeds; `chance outside` is how often
# that row is outside in the simulated replications.

# %%
outside = compared["verdict"] == "outside"
printed_differs = ~compared["as_printed"].fillna(True).astype(bool)
placed = int(compared["verdict"].isin(["inside", "outside"]).sum())
print(f"{int(outside.sum())} of {placed} numbers lie outside our interval; {int(printed_differs.sum())} of "
      f"{int(compared['as_printed'].notna().sum())} claims, designs, settings and counts differ as printed")
differs = compared[outside | printed_differs]
paper_table(differs, ["statistic", "paper", "ours", "interval_low", "interval_high", "verdict", "comparable",
                      "number", "share_below", "share_above", "chance_outside"])

# %% [markdown]
# ## What this store cannot say
# Numbers whose experiment or language this store lacks, and numbers about something other than predictions.

# %%
missing = table[table["status"] != "compared"]
cannot = missing.groupby(["status", "verdict"]).size().rename("numbers").reset_index()
paper_table(cannot.sort_values("numbers", ascending=False), ["numbers", "status", "verdict"])
