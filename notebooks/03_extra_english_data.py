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
# # 03 · Extra English NLI data (study §5.3, Table 4, Figs. 3–4)
# The language's RTE-style training set plus N pairs of extra English NLI data (SICK bundled; MNLI when you
# supply it: set `extra_data: {name: mnli, path: ...}` in the sweep config), 3-way labels collapsed to
# entailment / not_entailment. Per category: change of the seed-mean MCC and of σ against the RTE-only base;
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
from diagnostics.pipeline import ensure_runs, scale_spec
from diagnostics.plots import save
from diagnostics.plots import stats as stats_plots
from diagnostics.plots.curves import metric_curve

runs_dir = runs_dir or f"runs/{scale}"
spec = scale_spec(scale)
predictions = ensure_runs(scale, runs_dir, only=("base", "extra"))
predictions = predictions[predictions["language"].isin(spec.extra_languages)]
scores = stats.category_scores(predictions)
sizes = [s for s in spec.extra_sizes if s]
experiment_size = {"base": 0} | {f"extra-{s}": s for s in sizes}

# %% [markdown]
# ## Deltas against the base, per category

# %%
delta = pd.concat([stats.deltas(scores, {"experiment": "base"}, {"experiment": f"extra-{s}"}).assign(extra_pairs=s)
                   for s in sizes], ignore_index=True)
for value in ("mcc_delta", "sigma_delta"):
    fig = stats_plots.delta_heatmap(delta.assign(setting=delta["language"] + " +" + delta["extra_pairs"].astype(str)),
                                    value=value, columns="setting")
    save(fig, output_dir, f"03_{value}")
    display(fig)

# %% [markdown]
# ## Share of categories past the thresholds (Table 4)

# %%
summary = pd.concat([stats.delta_summary(delta[delta["extra_pairs"] == s]).assign(extra_pairs=s) for s in sizes],
                    ignore_index=True)
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
