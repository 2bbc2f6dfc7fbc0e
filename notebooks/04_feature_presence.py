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
# # 04 · Feature presence in training (study §5.4, Table 5, Fig. 5, Table 7)
# Training mixtures in which a controlled share (25 / 50 / 75 %) of pairs carries one diagnostic feature, found
# by the rule-based annotators (`diagnostics.annotate`, presence reading: a pair carries the feature when either
# sentence shows it). Does more exposure raise the feature's MCC, and does it make it more stable across seeds?
#
# The study's design (paper scale): the language's whole RTE / TERRa train set plus a 10k MNLI subset in which the
# share is set, for Conjunction, Anaphora/Coreference, Negation and Disjunction, in English and Russian. The demo
# sets the share within 560 RTE pairs instead (its mixtures keep 3000 SICK pairs) for Negation only. The table
# below lists what this run's mixtures hold.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
import pandas as pd
from IPython.display import display

from diagnostics import plots, stats
from diagnostics.annotate import feature_distribution
from diagnostics.finetune import extra_ref, labelled, subset
from diagnostics.pipeline import ScalePlan, ensure_runs, experiment_configs, extra_size, notebook_paths, plan_datasets
from diagnostics.plots import metric_curve, save
from diagnostics.probe import STUDY_FEATURES, feature_groups

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base", "extra", "presence"),
                                       train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
spec = scale_plan.spec
predictions = ensure_runs(scale_plan, only=("presence",))
datasets = plan_datasets(scale_plan)  # the user's files (diagnostic_fr ...) by dataset name, as values
configs = experiment_configs(scale_plan, only=("presence",))
design = pd.DataFrame([{"experiment": name, "feature": cfg.presence.feature, "share": cfg.presence.share,
                        "share set within": cfg.presence.within, "languages": ", ".join(cfg.languages),
                        "language pairs": cfg.train_size or "all",
                        "extra pairs": cfg.extra_data.size if cfg.extra_data else 0,
                        "extra source": cfg.extra_data.name if cfg.extra_data else "-", "seeds": len(cfg.seeds)}
                       for name, cfg in configs.items()])
scores = stats.category_scores(predictions, datasets)
scores = scores.merge(design[["experiment", "feature", "share"]], on="experiment")
design

# %% [markdown]
# ## Table 5: the controlled feature's MCC, σ and RS corr per share
# The feature's own category: seed-mean MCC and σ over seeds (sample std, ddof=1); RS corr of the whole
# per-category profile (collapsed seeds dropped); per feature, language and share.

# %%
table5 = pd.concat([stats.presence_table(scores, feature, ddof=1).assign(feature=feature)
                    for feature in design["feature"].unique()], ignore_index=True)
stats.display_table(table5, ddof=1).round(3)

# %%
rows = scores[scores["category"] == scores["feature"]]
fig = metric_curve(rows.assign(setting=rows["feature"] + " / " + rows["language"]), "share", "mcc", hue="setting",
                   title="Feature MCC vs share of controlled training pairs with it",
                   ylabel="MCC (seeds: mean, 95 % CI)", reference=0.0)
save(fig, output_dir, "04_presence_mcc")
fig

# %% [markdown]
# ## The same for every category (does exposure to one feature move others?)

# %%
stab = stats.stability(scores).merge(design[["experiment", "feature", "share"]], on="experiment")
wide = stab[stab["level"] == "fine"].pivot_table(index="category", columns=["feature", "language", "share"],
                                                 values="mean")
wide.round(3)

# %% [markdown]
# ## Fig. 5: per-category MCC from the language's data alone to the language's data + extra English data
# Seed-mean MCC per category without extra data (`base`, or the smallest extra mixture) and with the extra-data
# mixture of the presence experiments' size (else the largest); lines join a category's two values. The study
# reports a correlation of 0.94 between the English and Russian improvements.

# %%
extra_configs = experiment_configs(scale_plan, ("base", "extra"))
sizes = {name: extra_size(cfg) for name, cfg in extra_configs.items()}
before = min(sizes, key=sizes.get)
target = spec.presence_extra_size or max(sizes.values())
after = next((n for n, size in sizes.items() if size == target), max(sizes, key=sizes.get))
both = ensure_runs(scale_plan, only=("base", "extra"))
both = both[both["experiment"].isin([before, after])]
common = sorted(set(both.loc[both["experiment"] == before, "language"]) & set(both.loc[both["experiment"] == after, "language"]))
trajectory = stats.category_scores(both[both["language"].isin(common)], datasets)
if before != after and len(common) >= 1:
    fig = plots.category_trajectories(trajectory, {"experiment": before}, {"experiment": after})
    save(fig, output_dir, "04_fig5_trajectories")
    display(fig)
if before != after and {"en", "ru"} <= set(common):
    r = stats.improvement_correlation(trajectory, {"experiment": before}, {"experiment": after}, ("en", "ru"))
    print(f"correlation of the English and Russian per-category improvements ({before} -> {after}): {r:.3f}")

# %% [markdown]
# ## Table 7: share of pairs showing each feature (rule annotator, presence reading)
# RTE and TERRa train, and a random subset of the extra English data of the presence mixtures' size drawn with
# the sweeps' data seed (before any share is set). The study's annotation has 15 features
# (`diagnostics.probe.STUDY_FEATURES`: the twelve its §5.4 names and three read off morphosyntactic tags, see
# docs/annotation.md); the other features our rules detect are shown apart, under `extra`.

# %%
presence_cfg = next(iter(configs.values()))
frames = {}
if presence_cfg.extra_data is not None:
    pool = labelled(extra_ref(presence_cfg))
    frames[f"{presence_cfg.extra_data.name} subset"] = (subset(pool, presence_cfg.extra_data.size,
                                                               presence_cfg.data_seed + 1), "en")
table7 = feature_distribution(("rte", "terra"), split="train", frames=frames, limit=spec.annotate_limit)
print(f"pairs annotated: {table7.attrs['pairs']}; study features: {len(STUDY_FEATURES)}")
feature_groups(table7).round(3)
