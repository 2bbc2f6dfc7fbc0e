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
# # 01 · Language-wise diagnostics (study §5.1, Table 1, Fig. 1)
# One model fine-tuned per language on that language's RTE-style data, evaluated on the language's diagnostic
# set. Per fine-grained category: MCC per language, from one run per language (as the study's Fig. 1) and averaged
# over seeds, and how similar the languages' category profiles are (Pearson correlation of the per-feature MCC
# vectors, both ways).
#
# Swedish is scored on SweDiagnostics (SuperLim), not on the study's Swedish translation of the diagnostic set:
# its column is labelled `sv (SweDiagnostics)` everywhere.
#
# Parameters: `scale` = tiny (mechanics only: a random 2-layer model, numbers are noise), demo (embedded
# multilingual-e5-small, CPU recipe) or paper (mBERT, the study's setup).

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

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base",), train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
predictions = ensure_runs(scale_plan, only=("base",))
datasets = plan_datasets(scale_plan)  # the user's files (diagnostic_fr ...) by dataset name, as values
scores = stats.category_scores(predictions, datasets)
stab = stats.stability(scores)
predictions.groupby(["language", "dataset", "seed"]).size().unstack("seed")

# %% [markdown]
# ## Table 1: the diagnostic sets scored here
# Pairs, label shares and pairs per fine category of each language's diagnostic set, as this run's configuration
# names it (bundled, or the user's fr / de / sv files given with `--data`).

# %%
base = scale_plan.base
diagnostic_sets = [ref.load() for language in base.languages for ref in base.language_data(language)["diagnostics"]]
stats.diagnostic_table(diagnostic_sets)

# %% [markdown]
# ## Overall MCC per language and seed
# The study's "overall MCC" is the mean of the per-feature MCCs; the MCC over all examples is shown beside it.

# %%
overall = scores[scores["level"] == "overall"].pivot_table(index=["language", "category"], columns="seed", values="mcc")
overall.round(3)

# %% [markdown]
# ## Fig. 1: category × language MCC
# The study's Fig. 1 shows a single fine-tuning run per language (seed 0), not an average over seeds. This notebook
# shows both: first the seed mean (steadier, and the basis of every other table here), then the run with the
# smallest seed alone, which is what the figure shows. Where the two differ a lot, the category is unstable across
# seeds (notebook 02).

# %%
fig = plots.category_language_heatmap(stab, level="fine", value="mean")
save(fig, output_dir, "01_category_language_mcc")
fig

# %%
first_seed = scores["seed"].min()
fig = plots.category_language_heatmap(scores, {"seed": first_seed}, level="fine", value="mcc",
                                      title=f"MCC per category and language, one run (seed {first_seed})")
save(fig, output_dir, "01_category_language_mcc_one_seed")
fig

# %%
fig = plots.category_language_heatmap(stab, level="coarse", value="mean")
save(fig, output_dir, "01_coarse_language_mcc")
fig

# %% [markdown]
# ## Cross-language correlation of the per-feature MCC vectors
# Pearson correlation between every two languages' MCC over the fine categories, then its mean over the language
# pairs; the study reports a mean of about 0.3 for mBERT (i.e. the languages find different categories hard),
# computed from Fig. 1's single run per language. Both are shown, labelled in the `basis` column: from one run per
# language (the study's way: the smallest seed) and from the seed means (ours elsewhere).

# %%
labels = stats.language_labels(scores)
for basis in ("one_run", "seed_mean"):
    cross = stats.cross_language_corr(scores, basis=basis, seed=first_seed)
    cross = cross.assign(language_a=cross["language_a"].map(labels), language_b=cross["language_b"].map(labels))
    display(cross.pivot(index=["basis", "experiment", "model", "language_a"], columns="language_b",
                        values="r").round(3))
stats.mean_cross_language_corr(scores, basis="both", seed=first_seed).round(3)

# %% [markdown]
# ## Categories with constant predictions
# A category where a run predicts one class only has MCC 0 by convention (`degenerate`); many degenerate
# categories mean the model has not learned the task yet.

# %%
fine = scores[scores["level"] == "fine"]
fine.groupby(["language", "seed"])["degenerate"].sum().unstack("seed")
