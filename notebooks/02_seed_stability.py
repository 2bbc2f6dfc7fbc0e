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
# # 02 · Seed stability (study §5.2, Tables 3 and 6)
# Same data, same hyperparameters, only the random seed changes. Per category: the MCC of every seed and the
# standard deviation σ over seeds (sample std, ddof=1; the study does not say which it uses, so every header names
# the ddof; the study's Table 6). Per language: RS corr — the mean pairwise Pearson correlation between seeds'
# per-feature MCC vectors (1 = the seeds agree on which categories are easy; the study's Table 3).
#
# A collapsed run (one class predicted everywhere: MCC 0 in every category) has a constant vector, and Pearson's r
# with it is undefined. RS corr is shown both ways: with such seeds dropped, and with each of their pairs counted
# as correlation 0; `collapsed runs` says how many there are. Swedish is scored on SweDiagnostics, not the study's
# Swedish set: its column reads `sv (SweDiagnostics)`.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
from IPython.display import display

from diagnostics import plots, stats
from diagnostics.pipeline import ScalePlan, ensure_runs, notebook_paths, plan_datasets
from diagnostics.plots import save

ddof = 1  # σ over seeds: the sample standard deviation
runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base",), train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
predictions = ensure_runs(scale_plan, only=("base",))
datasets = plan_datasets(scale_plan)  # the user's files (diagnostic_fr ...) by dataset name, as values
scores = stats.category_scores(predictions, datasets)
stab = stats.stability(scores, ddof=ddof)
languages = sorted(predictions["language"].unique())

# %% [markdown]
# ## Table 3: per language, mean MCC, mean σ and RS corr (collapsed seeds dropped / counted as 0)
# Means over the fine categories of the seed-mean MCC and of σ over seeds; RS corr in its two readings.

# %%
stats.display_table(stats.seed_stability_table(scores, ddof=ddof)).round(3)

# %% [markdown]
# ## Seed-wise MCC per category

# %%
for language in languages:
    fig = plots.category_seed_heatmap(scores, {"language": language})
    save(fig, output_dir, f"02_category_seed_mcc_{language}")
    display(fig)

# %% [markdown]
# ## Table 6: seed-mean MCC and σ over seeds per category and language
# Each category's MCC averaged over the seeds and its standard deviation over the seeds, per language, and both
# averaged over the languages (the `Average` column; languages without the category skipped).

# %%
stats.mcc_sigma_table(scores, ddof=ddof).round(3)

# %%
fig = plots.category_language_heatmap(stab, level="fine", value="std")
save(fig, output_dir, "02_category_language_sigma")
fig

# %% [markdown]
# ## Least and most stable categories

# %%
fine_stab = stab[stab["level"] == "fine"].sort_values("std", ascending=False)
display(stats.display_table(fine_stab.groupby("language").head(5)[
    ["language", "dataset", "category", "n", "mean", "std", "degenerate_share"]], ddof=ddof).round(3))
stats.display_table(fine_stab.groupby("language").tail(3)[["language", "dataset", "category", "n", "mean",
                                                           "std"]], ddof=ddof).round(3)

# %% [markdown]
# ## RS corr per language, both readings, and the seed × seed correlation matrix
# Collapsed seeds dropped: pairs with a collapsed seed left out of the mean; as 0: every undefined pair counted as
# correlation 0. In the matrix, a collapsed seed's correlations are NaN.

# %%
display(stats.display_table(stats.rs_corr_variants(scores)).round(3))
pairs = stats.seed_correlations(scores)
pairs

# %% [markdown]
# ## Instance-level agreement between seeds (pairwise agreement, Fleiss' κ) per category

# %%
agreement = stats.agreement(predictions, datasets)
agreement.sort_values("kappa").head(10)

# %% [markdown]
# ## How many seeds do I need?
# The seeds above are a pilot. `stats.plan_seeds` fits, per language and category, the pilot's seed variance and,
# by a bootstrap of the examples, the example and seed × example variances; it then simulates studies of 2–30 seeds
# and reports the expected half-width of the 95% confidence interval of each category's mean MCC over seeds, and
# the smallest number of seeds that brings it to ±0.05 (`n_seeds`). A pilot of a few seeds estimates σ poorly:
# `n_seeds_conservative` is the answer at the upper 80% confidence limit of the pilot's seed variance, and the band
# in the figure spans the lower to the upper limit. The diagnostic set is taken as fixed (the question is how seeds
# vary on it); `examples="resampled"` adds the example sampling variance, which no number of seeds removes. The
# command line does the same: `diagnostics stats plan PREDICTIONS --half-width 0.05`. An empty `n_seeds` (`<NA>`)
# means the target is not reached within the 30 seeds simulated: that category's seed variance (or its example
# variance) is too large for ±0.05 at any affordable number of seeds; such categories are listed first.

# %%
from matplotlib.figure import Figure

target = 0.05
plan = stats.plan_seeds(predictions, half_width=target, max_seeds=30, n_sims=1000, dataset=datasets)
overall = stats.plan_seeds(predictions, half_width=target, by="overall", max_seeds=30, n_sims=1000,
                           dataset=datasets)
display(plan.summary())
display(overall.needed[["language", "category", "pilot_seeds", "n_seeds", "n_seeds_optimistic",
                        "n_seeds_conservative"]])
plan.needed.sort_values("n_seeds", ascending=False, na_position="first").groupby("language").head(5)[
    ["language", "category", "n_examples", "pilot_seeds", "n_seeds", "n_seeds_conservative"]]

# %%
fig = Figure(figsize=(6.5 * len(languages), 4))
axes = fig.subplots(1, len(languages), squeeze=False)[0]
for ax, language in zip(axes, languages):
    curve = plan.curve[plan.curve["language"] == language]
    by_n = curve.groupby("n_seeds")["value"]
    ax.fill_between(by_n.quantile(0.1).index, by_n.quantile(0.1), by_n.quantile(0.9), alpha=0.2,
                    label="categories, 10th–90th percentile")
    ax.plot(by_n.median().index, by_n.median(), label="median category")
    line = overall.curve[overall.curve["language"] == language]
    ax.plot(line["n_seeds"], line["value"], color="black", label="overall MCC")
    ax.fill_between(line["n_seeds"], line["value_sigma_low"], line["value_sigma_high"], color="black", alpha=0.1,
                    label="overall MCC, pilot's 80% limits")
    ax.axhline(target, color="red", linestyle="--", label=f"target ±{target}")
    positive = (by_n.quantile(0.1) > 0).all() and (line["value_sigma_low"] > 0).all()
    ax.set(title=f"{language}: 95% CI half-width of the mean MCC", xlabel="seeds", ylabel="expected half-width",
           yscale="log" if positive else "linear")
    ax.legend(fontsize=8)
fig.tight_layout()
save(fig, output_dir, "02_seeds_needed")
fig
