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
# # 03 · Extra English NLI data (study §5.3, Table 4, Figs. 3–4)
# The language's RTE-style training set plus N pairs of extra English NLI data (SICK bundled; MNLI when you
# supply it: set `extra_data: {name: mnli, path: ...}` in the sweep config), 3-way labels collapsed to
# entailment / not_entailment. Per category: change of the seed-mean MCC and of σ against the mixture with the
# least extra data (the language's data alone where the scale runs it);
# share of categories past the study's thresholds (MCC delta > 0.1, σ delta < −0.05); and the data-size curve.

# %% tags=["parameters"]
scale = "tiny"
output_dir = "reports/notebooks"
runs_dir = None

# %%
# %matplotlib inline
import pandas as pd
from IPython.display import display

from diagnostics import stats
from diagnostics.pipeline import ensure_runs, experiment_configs, extra_size, scale_spec
from diagnostics.plots import save
from diagnostics.plots import stats as stats_plots
from diagnostics.plots.curves import metric_curve

runs_dir = runs_dir or f"runs/{scale}"
spec = scale_spec(scale)
predictions = ensure_runs(scale, runs_dir, only=("base", "extra"))
predictions = predictions[predictions["language"].isin(spec.extra_languages)]
scores = stats.category_scores(predictions)
# experiment -> pairs of extra English data in its training mixture; deltas are taken against the smallest
experiment_size = {name: extra_size(cfg) for name, cfg in experiment_configs(scale, runs_dir, ("base", "extra")).items()}
reference = min(experiment_size, key=experiment_size.get)
others = sorted((e for e in experiment_size if e != reference), key=experiment_size.get)
print("reference:", reference, "| pairs of extra English data:", experiment_size)

# %% [markdown]
# ## Deltas against the base, per category

# %%
delta = pd.concat([stats.deltas(scores, {"experiment": reference}, {"experiment": e}).assign(extra_pairs=experiment_size[e])
                   for e in others], ignore_index=True)
for value in ("mcc_delta", "sigma_delta"):
    fig = stats_plots.delta_heatmap(delta.assign(setting=delta["language"] + " +" + delta["extra_pairs"].astype(str)),
                                    value=value, columns="setting")
    save(fig, output_dir, f"03_{value}")
    display(fig)

# %% [markdown]
# ## Share of categories past the thresholds (Table 4)

# %%
summary = pd.concat([stats.delta_summary(delta[delta["extra_pairs"] == experiment_size[e]]).assign(
    extra_pairs=experiment_size[e]) for e in others], ignore_index=True)
summary

# %% [markdown]
# ## Data-size curve: overall MCC (mean of per-feature MCCs) and RS corr

# %%
overall = scores[(scores["level"] == "overall")].assign(extra_pairs=lambda f: f["experiment"].map(experiment_size))
fig = metric_curve(overall, "extra_pairs", "mcc", hue="language", title="Overall MCC vs extra English pairs",
                   ylabel="mean per-feature MCC", reference=0.0)
save(fig, output_dir, "03_size_curve_mcc")
display(fig)
rs = stats.rs_corr(scores).assign(extra_pairs=lambda f: f["experiment"].map(experiment_size))
fig = metric_curve(rs, "extra_pairs", "rs_corr", hue="language", title="RS corr vs extra English pairs",
                   ylabel="mean pairwise Pearson between seeds")
save(fig, output_dir, "03_size_curve_rs_corr")
display(fig)
rs
