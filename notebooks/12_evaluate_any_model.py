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
# # 12 · A model you already have: per-category MCC, seed stability, feature slices
# A finished NLI classifier — an MNLI or XNLI checkpoint from the hub, the output folder of your own `Trainer`, the
# seeds of one recipe fine-tuned elsewhere — scored by `diagnostics evaluate` becomes runs of a run store, and this
# notebook reads that store: which checkpoint became which seed and how its head's labels were mapped; the MCC of
# every seed per diagnostic category and its σ over seeds; the slices of an NLI test set (RTE, TERRa, your own) by
# the features the rule annotator finds in its pairs; and which of those conclusions survive another seed.
# [docs/evaluate.md](../docs/evaluate.md) describes the command; a store for this notebook, from three
# checkpoints of one recipe named as three seeds:
#
# ```bash
# diagnostics evaluate ckpt/seed13 ckpt/seed14 ckpt/seed15 --seed-pattern 'seed(\d+)' --name my-mnli \
#     --dataset axb --dataset rte:validation --out runs/my-evaluated
# ```
#
# then set `runs_dir = "runs/my-evaluated"` below. One checkpoint is enough to run the notebook; σ over seeds and
# the conclusions' survival need two or more. The default, `runs/demo-evaluated`, is the demo's own three English and
# three Russian checkpoints (`bash scripts/demo.sh`) scored this way; the commands are in docs/evaluate.md.
#
# The main job (`diagnostics pipeline`, `bash scripts/demo.sh`) does not run this notebook: it trains its models
# itself and notebooks 01–11 already read their runs, so it has no store of models evaluated from outside; scoring
# its own checkpoints again here would repeat those notebooks at the cost of a full forward pass per set and seed.

# %% tags=["parameters"]
runs_dir = "runs/demo-evaluated"  # the run store `diagnostics evaluate --out` wrote (relative: to the project root)
experiments = None  # the experiments of that store to read (a name or a list); None: every one
min_pairs = 10  # categories and features on fewer pairs are left out of the slices and the conclusions
output_dir = None  # the figures folder; None: reports/interactive/evaluated/figures

# %%
# %matplotlib inline
from IPython.display import Markdown, display

from diagnostics import plots, stats
from diagnostics.data import get_spec
from diagnostics.evaluate import feature_categories, read_evaluations, slice_by_feature
from diagnostics.pipeline import notebook_paths
from diagnostics.plots import save

runs_dir, output_dir = notebook_paths("evaluated", runs_dir, output_dir)
evaluation = read_evaluations(runs_dir, experiments)
table = evaluation.predictions
diagnostic_sets = sorted(d for d in table["dataset"].unique() if get_spec(d).kind == "diagnostic")
test_sets = sorted(d for d in table["dataset"].unique() if d not in diagnostic_sets)
print(f"{len(evaluation.runs)} evaluated runs in {runs_dir}: diagnostic sets {diagnostic_sets or 'none'}, "
      f"NLI test sets {test_sets or 'none'}")

# %% [markdown]
# ## What was evaluated
# One row per run: the folder or hub id given, the seed it became, the sets it was scored on and the label rule
# applied to its head (recorded in each run's `config.json`; `--label-map` overrides it).

# %%
evaluation.runs[["experiment", "language", "model", "seed", "model_given", "sets", "label_rule", "precision",
                 "rows"]]

# %% [markdown]
# ## MCC per category and seed
# A diagnostic set is scored per its own categories; an NLI test set without categories per the features the rule
# annotator finds in its pairs (`feature_categories`: each pair annotated once, then cached). Per setting: the mean
# over categories of the seed-mean MCC and of σ over seeds (ddof = 1), and RS corr — the mean pairwise Pearson
# correlation between the seeds' per-category MCC vectors (1: the seeds agree on which categories are easy).

# %%
sets = feature_categories(table, evaluation.datasets)
scores = stats.category_scores(table, sets)
stats.display_table(stats.seed_stability_table(scores)).round(3)

# %%
for setting, _ in scores.groupby(list(stats.SETTING_KEYS), sort=True):
    fig = plots.category_seed_heatmap(scores, dict(zip(stats.SETTING_KEYS, setting)))
    save(fig, output_dir, "12_category_seed_mcc_" + "_".join(str(v) for v in setting))
    display(fig)

# %% [markdown]
# ## The least stable categories
# σ over seeds per category (at least `min_pairs` examples), largest first: where the seeds disagree most.

# %%
stab = stats.stability(scores)
fine = stab[(stab["level"] == "fine") & (stab["n"] >= min_pairs)].sort_values("std", ascending=False)
stats.display_table(fine.groupby(list(stats.SETTING_KEYS)).head(8)[
    [*stats.SETTING_KEYS, "category", "n", "n_seeds", "mean", "std", "min", "max"]], ddof=1).round(3)

# %% [markdown]
# ## Feature slices of the NLI test sets
# Per feature the annotator finds (on at least `min_pairs` pairs): MCC on the pairs that show it (blue) against the
# pairs that do not (grey), mean ± σ over seeds, and how many of its pairs flip between seeds. A slice is only as
# good as the rule that finds it ([docs/annotation.md](../docs/annotation.md) gives each rule's precision). The
# diagnostic sets are sliced by their own categories above.

# %%
slices = slice_by_feature(table[table["dataset"].isin(test_sets)], evaluation.datasets) if test_sets else None
if slices is None or slices.table.empty:
    display(Markdown("*No NLI test set in this store: evaluate one too (`--dataset rte:validation`).*"))
else:
    fig = plots.feature_slices_figure(slices.table, min_examples=min_pairs)
    save(fig, output_dir, "12_feature_slices")
    display(fig)
    display(slices.table[slices.table["n_with"] >= min_pairs].sort_values("n_with", ascending=False)[
        ["language", "dataset", "feature", "n_with", "mcc_with", "mcc_with_sd", "mcc_without", "mcc_delta",
         "flipping_with"]].round(3))

# %% [markdown]
# ## Which conclusions survive another seed?
# Read alone, each seed draws its own conclusions: a diagnostic category is *lower* or *higher* than the set's MCC
# over all its examples, a feature's pairs score *lower* or *higher* than the pairs without it (differences within
# ±0.05 read as *no clear difference*). `stats.seed_conclusions` reads the seeds' mean difference and counts the seeds
# that, each alone, conclude the same: blue in the figures where every seed does — a finding about the recipe —,
# orange where it depends on the seed — a finding about one run. `pair_agreement` is the chance that two studies of
# one seed each agree. This is survival across seeds on these test pairs; whether a difference survives another
# sample of pairs is what the Multi-Bootstrap comparisons answer (notebook 06, `diagnostics compare`).

# %%
shown = ["language", "dataset", "n", "n_seeds", "effect", "effect_min", "effect_max", "conclusion", "seeds_agreeing",
         "holds", "pair_agreement"]
if evaluation.runs.groupby(["experiment", "language", "model"])["seed"].nunique().max() < 2:
    display(Markdown("*One seed per model: every conclusion below is that run's alone. Evaluate more seeds of the "
                     "recipe to see which survive.*"))
conclusions = stats.seed_conclusions(scores[scores["dataset"].isin(diagnostic_sets)], min_n=min_pairs)
if len(conclusions):
    fig = plots.seed_conclusions_figure(conclusions)
    save(fig, output_dir, "12_category_conclusions")
    display(fig)
    display(conclusions[["category", *shown]].round(3))

# %%
if slices is not None and not slices.table.empty:
    feature_conclusions = stats.seed_conclusions(slices, min_n=min_pairs)
    fig = plots.seed_conclusions_figure(feature_conclusions)
    save(fig, output_dir, "12_feature_conclusions")
    display(fig)
    display(feature_conclusions[["feature", *shown]].round(3))
