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
# # 04 · Feature presence in training (study §5.4, Table 5)
# Training mixtures in which a controlled share (25 / 50 / 75 %) of pairs carries one diagnostic feature, found
# by the rule-based annotators (`diagnostics.annotate`). Does more exposure raise the feature's MCC, and does it
# make the feature more stable across seeds?
#
# Every mixture has the same number of language pairs (only the share with the feature changes) and the same
# extra English pairs, if any; the table below lists them. The annotator's presence reading is used: a pair
# carries the feature when either sentence shows it.

# %% tags=["parameters"]
scale = "tiny"
output_dir = "reports/notebooks"
runs_dir = None

# %%
# %matplotlib inline
import pandas as pd
from IPython.display import display

from diagnostics import stats
from diagnostics.pipeline import ensure_runs, experiment_configs, scale_spec
from diagnostics.plots import save
from diagnostics.plots.curves import metric_curve

runs_dir = runs_dir or f"runs/{scale}"
spec = scale_spec(scale)
feature, language = spec.presence_feature, spec.presence_language
predictions = ensure_runs(scale, runs_dir, only=("presence",))
scores = stats.category_scores(predictions)
scores["share"] = scores["experiment"].str.removeprefix("presence-").astype(float)
configs = experiment_configs(scale, runs_dir, only=("presence",))
pd.DataFrame([{"experiment": name, "language pairs": cfg.train_size, "share with feature": cfg.presence.share,
               "extra English pairs": cfg.extra_data.size if cfg.extra_data else 0, "seeds": len(cfg.seeds)}
              for name, cfg in configs.items()])

# %% [markdown]
# ## MCC and σ of the controlled feature per share (Table 5)

# %%
stab = stats.stability(scores)
stab["share"] = stab["experiment"].str.removeprefix("presence-").astype(float)
table = stab[stab["category"].isin([feature, "Overall (mean of categories)"]) | (stab["level"] == "overall")]
table = table.pivot_table(index="share", columns="category", values=["mean", "std"])
table.round(3)

# %%
rows = scores[scores["category"] == feature]
fig = metric_curve(rows, "share", "mcc", title=f"{feature}: MCC vs share of training pairs with it ({language})",
                   ylabel="MCC (seeds: mean, 95 % CI)", reference=0.0)
save(fig, output_dir, "04_presence_mcc")
fig

# %% [markdown]
# ## The same for every category (does exposure to one feature move others?)

# %%
wide = stab[stab["level"] == "fine"].pivot_table(index="category", columns="share", values="mean")
wide.round(3)
