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
# # 06 · Multi-Bootstrap: which differences survive?
# Multi-Bootstrap (Sellam et al., 2022) resamples seeds and diagnostic examples jointly, so a confidence interval
# covers both sources of variation. Per category: the MCC of each language with its 95 % CI; the difference
# between languages (unpaired: different models) and between training settings (paired: same seeds); a
# difference "survives" when its CI excludes 0.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
import pandas as pd
from IPython.display import display

from diagnostics import stats
from diagnostics.data.consistency import compare_diagnostics
from diagnostics.pipeline import ensure_runs, experiment_configs, extra_size, notebook_paths, scale_spec
from diagnostics.plots import save
from diagnostics.plots import stats as stats_plots

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base", "extra"), train_missing=train_missing)
spec = scale_spec(scale, runs_dir)
predictions = ensure_runs(scale, runs_dir, only=("base", "extra"))
base = predictions[predictions["experiment"] == "base"]
languages = sorted(base["language"].unique())

# %% [markdown]
# ## Per-category MCC with 95 % Multi-Bootstrap CIs, per language

# %%
ci = pd.concat([stats.setting_ci(base, {"language": lang}, n_boot=spec.n_boot, seed=0) for lang in languages],
               ignore_index=True)
fig = stats_plots.ci_forest_plot(ci, hue="language")
save(fig, output_dir, "06_ci_per_language")
fig

# %% [markdown]
# ## English vs Russian, per category (unpaired seeds)
# The diagnostics are translations sharing ids; ids whose gold label differs between the two files (LiDiRus
# id 233) are left out, since a comparison needs one gold label per example.

# %%
if {"en", "ru"} <= set(languages):
    differ = compare_diagnostics("axb", ("lidirus",))
    excluded = set(differ.loc[differ["field"] == "label", "id"])
    kept = base[~base["example_id"].isin(excluded)]
    en_ru = stats.compare_settings(kept, {"language": "en"}, {"language": "ru"}, paired=False, n_boot=spec.n_boot, seed=0)
    fig = stats_plots.ci_forest_plot(en_ru, estimate="delta", low="delta_ci_low", high="delta_ci_high")
    save(fig, output_dir, "06_delta_en_ru")
    display(fig)
    display(en_ru[(en_ru["delta_ci_low"] > 0) | (en_ru["delta_ci_high"] < 0)])

# %% [markdown]
# ## Most vs least extra English data, per category (paired seeds)

# %%
sizes = {name: extra_size(cfg) for name, cfg in experiment_configs(scale, runs_dir, ("base", "extra")).items()}
smallest, largest = min(sizes, key=sizes.get), max(sizes, key=sizes.get)
in_both = set(predictions.loc[predictions["experiment"] == smallest, "language"]) & \
    set(predictions.loc[predictions["experiment"] == largest, "language"])
for lang in sorted(in_both):
    if smallest == largest or lang not in languages:
        continue
    diff = stats.compare_settings(predictions, {"experiment": smallest, "language": lang},
                                  {"experiment": largest, "language": lang}, paired=True,
                                  n_boot=spec.n_boot, seed=0)
    fig = stats_plots.ci_forest_plot(diff, estimate="delta", low="delta_ci_low", high="delta_ci_high")
    save(fig, output_dir, f"06_delta_extra_{lang}")
    display(fig)
    survivors = diff[(diff["delta_ci_low"] > 0) | (diff["delta_ci_high"] < 0)]
    print(f"{lang}: {len(survivors)} of {len(diff)} rows with a CI excluding 0")
    display(survivors)
