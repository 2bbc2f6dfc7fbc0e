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
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 02 · Seed stability (study §5.2, Tables 3 and 6)
# Same data, same hyperparameters, only the random seed changes. Per category: the MCC of every seed and the
# standard deviation σ over seeds (sample std, ddof=1; the study's Table 6). Per language: RS corr — the mean
# pairwise Pearson correlation between seeds' per-feature MCC vectors (1 = the seeds agree on which categories are
# easy; the study's Table 3).

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
from IPython.display import display

from diagnostics import stats
from diagnostics.pipeline import ensure_runs, notebook_paths
from diagnostics.plots import save
from diagnostics.plots import stats as stats_plots

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base",), train_missing=train_missing)
predictions = ensure_runs(scale, runs_dir, only=("base",))
scores = stats.category_scores(predictions)
stab = stats.stability(scores)
languages = sorted(predictions["language"].unique())

# %% [markdown]
# ## Seed-wise MCC per category

# %%
for language in languages:
    fig = stats_plots.category_seed_heatmap(scores, {"language": language})
    save(fig, output_dir, f"02_category_seed_mcc_{language}")
    display(fig)

# %% [markdown]
# ## σ over seeds per category and language (Table 6)
# The sample standard deviation of each category's MCC over the seeds, per language, and its average over the
# languages (the `Average` column).

# %%
sigma = stats.sigma_table(stab)
sigma.round(3)

# %%
fig = stats_plots.category_language_heatmap(stab, level="fine", value="std")
save(fig, output_dir, "02_category_language_sigma")
fig

# %% [markdown]
# ## Least and most stable categories

# %%
fine_stab = stab[stab["level"] == "fine"].sort_values("std", ascending=False)
display(fine_stab.groupby("language").head(5)[["language", "category", "n", "mean", "std", "degenerate_share"]].round(3))
fine_stab.groupby("language").tail(3)[["language", "category", "n", "mean", "std"]].round(3)

# %% [markdown]
# ## RS corr per language (Table 3) and the seed × seed correlation matrix

# %%
rs = stats.rs_corr(scores)
display(rs)
pairs = stats.seed_correlations(scores)
pairs

# %% [markdown]
# ## Instance-level agreement between seeds (pairwise agreement, Fleiss' κ) per category

# %%
agreement = stats.agreement(predictions)
agreement.sort_values("kappa").head(10)
