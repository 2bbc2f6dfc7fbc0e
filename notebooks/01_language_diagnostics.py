# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · Language-wise diagnostics (study §5.1, Fig. 1)
# One model fine-tuned per language on that language's RTE-style data, evaluated on the language's diagnostic
# set. Per fine-grained category: MCC averaged over seeds, side by side per language, and how similar the
# languages' category profiles are (Pearson correlation of mean per-feature MCC vectors).
#
# Parameters: `scale` = tiny (mechanics only: a random 2-layer model, numbers are noise), demo (embedded
# multilingual-e5-small, CPU recipe) or paper (mBERT, the study's setup).

# %% tags=["parameters"]
scale = "tiny"
output_dir = "reports/notebooks"
runs_dir = None

# %%
# %matplotlib inline
from IPython.display import display

from diagnostics import stats
from diagnostics.pipeline import ensure_runs
from diagnostics.plots import save
from diagnostics.plots import stats as stats_plots

runs_dir = runs_dir or f"runs/{scale}"
predictions = ensure_runs(scale, runs_dir, only=("base",))
scores = stats.category_scores(predictions)
stab = stats.stability(scores)
predictions.groupby(["language", "dataset", "seed"]).size().unstack("seed")

# %% [markdown]
# ## Overall MCC per language and seed
# The study's "overall MCC" is the mean of the per-feature MCCs; the MCC over all examples is shown beside it.

# %%
overall = scores[scores["level"] == "overall"].pivot_table(index=["language", "category"], columns="seed", values="mcc")
overall.round(3)

# %% [markdown]
# ## Category × language heat map of seed-mean MCC

# %%
fig = stats_plots.category_language_heatmap(stab, level="fine", value="mean")
save(fig, output_dir, "01_category_language_mcc")
fig

# %%
fig = stats_plots.category_language_heatmap(stab, level="coarse", value="mean")
save(fig, output_dir, "01_coarse_language_mcc")
fig

# %% [markdown]
# ## Cross-language correlation of the mean per-feature MCC vectors

# %%
cross = stats.cross_language_corr(scores)
cross

# %% [markdown]
# ## Categories with constant predictions
# A category where a run predicts one class only has MCC 0 by convention (`degenerate`); many degenerate
# categories mean the model has not learned the task yet.

# %%
fine = scores[scores["level"] == "fine"]
fine.groupby(["language", "seed"])["degenerate"].sum().unstack("seed")
