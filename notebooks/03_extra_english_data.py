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
# # 03 · Extra English NLI data (study §5.3, Table 4, Figs. 4 and 10–15)
# Each language's RTE-style training set plus N pairs of extra English NLI data, 3-way labels collapsed to
# entailment / not_entailment. The study adds MNLI at 1k … 374k pairs (paper scale: `--data mnli=PATH`); the
# bundled SICK is the explicit stand-in of the tiny and demo scales (never drawn past its 4439 training pairs).
# Reference = the mixture with the least extra data (the language's data alone where the scale runs it).
# Swedish is scored on SweDiagnostics, not the study's Swedish set: its column reads `sv (SweDiagnostics)`.
#
# * Table 4: per language, mean MCC, σ (ddof=1) and RS corr without and with the extra data, RS corr with collapsed
#   seeds dropped and counted as 0 and the number of collapsed runs; the categories whose MCC rises by more than 0.2
#   in every language; the average σ decrease.
# * Fig. 10: seed-mean MCC per category and language with the most extra data (the study's RTE + 374k MNLI).
# * Figs. 11–15: seed-wise MCC per category with the extra data.
# * Fig. 4: overall MCC and RS corr against the number of extra pairs.
# * Threshold shares (MCC delta > 0.1, σ delta < −0.05) per language and pooled over languages.

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
from diagnostics.pipeline import ScalePlan, ensure_runs, experiment_configs, extra_size, notebook_paths, plan_datasets
from diagnostics.plots import metric_curve, save

ddof = 1  # σ over seeds: the sample standard deviation

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base", "extra"), train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
predictions = ensure_runs(scale_plan, only=("base", "extra"))
datasets = plan_datasets(scale_plan)  # the user's files (diagnostic_fr ...) by dataset name, as values
configs = experiment_configs(scale_plan, ("base", "extra"))
# experiment -> pairs of extra English data in its training mixture; deltas are taken against the smallest
experiment_size = {name: extra_size(cfg) for name, cfg in configs.items()}
source = {name: cfg.extra_data.name for name, cfg in configs.items() if cfg.extra_data is not None}
extra_languages = sorted({lang for name, cfg in configs.items() if name != "base" for lang in cfg.languages})
predictions = predictions[predictions["language"].isin(extra_languages)]
scores = stats.category_scores(predictions, datasets)
reference = min(experiment_size, key=experiment_size.get)
others = sorted((e for e in experiment_size if e != reference), key=experiment_size.get)
largest = others[-1] if others else reference
print("reference:", reference, "| extra pairs:", experiment_size, "| source:", sorted(set(source.values())))

# %% [markdown]
# ## Table 4: without vs with the most extra data, per language

# %%
without, with_ = {"experiment": reference}, {"experiment": largest}
display(stats.display_table(stats.extra_data_table(scores, without, with_, ddof=ddof)).round(3))
gains = stats.consistent_gains(scores, without, with_, threshold=0.2)
print(f"categories whose MCC rises by more than 0.2 in every language ({', '.join(extra_languages)}): {len(gains)}")
display(gains.round(3))
stats.display_table(stats.average_sigma_decrease(scores, without, with_, ddof=ddof)).round(3)

# %% [markdown]
# ## Fig. 10: seed-mean MCC per category and language with the most extra data

# %%
fig = plots.category_language_heatmap(stats.stability(scores, ddof=ddof), {"experiment": largest},
                                      title=f"Seed-mean MCC per category and language ({largest})")
save(fig, output_dir, "03_fig10_category_language_mcc")
fig

# %% [markdown]
# ## Seed-wise MCC per category with the extra data (Figs. 11–15)

# %%
for language in extra_languages:
    fig = plots.category_seed_heatmap(scores, {"language": language, "experiment": largest})
    save(fig, output_dir, f"03_category_seed_mcc_{language}")
    display(fig)

# %% [markdown]
# ## Deltas against the reference, per category

# %%
delta = pd.concat([stats.deltas(scores, {"experiment": reference}, {"experiment": e}, ddof=ddof).assign(
    extra_pairs=experiment_size[e]) for e in others], ignore_index=True)
labels = stats.language_labels(scores)
for value in ("mcc_delta", "sigma_delta"):
    setting = delta["language"].map(labels) + " +" + delta["extra_pairs"].astype(str)
    fig = plots.delta_heatmap(delta.assign(setting=setting), value=value, columns="setting")
    save(fig, output_dir, f"03_{value}")
    display(fig)

# %% [markdown]
# ## Share of categories past the thresholds, per language and pooled over languages
# The pooled row (`language` = `all`) counts (language, category) pairs over every language together.

# %%
summary = pd.concat([stats.delta_summary(delta[delta["extra_pairs"] == experiment_size[e]], pooled=True).assign(
    extra_pairs=experiment_size[e]) for e in others], ignore_index=True)
stats.display_table(summary, ddof=ddof)

# %% [markdown]
# ## Data-size curve (Fig. 4): overall MCC (mean of per-feature MCCs) and RS corr
# The curve's RS corr drops collapsed seeds; the table below it gives both readings and the collapsed runs.

# %%
overall = scores[(scores["level"] == "overall")].assign(extra_pairs=lambda f: f["experiment"].map(experiment_size))
overall = overall.assign(language=overall["language"].map(labels))
fig = metric_curve(overall, "extra_pairs", "mcc", hue="language", title="Overall MCC vs extra English pairs",
                   ylabel="mean per-feature MCC", reference=0.0)
save(fig, output_dir, "03_size_curve_mcc")
display(fig)
rs = stats.rs_corr(scores).assign(extra_pairs=lambda f: f["experiment"].map(experiment_size))
rs = rs.assign(language=rs["language"].map(labels))
fig = metric_curve(rs, "extra_pairs", "rs_corr", hue="language", title="RS corr vs extra English pairs",
                   ylabel="mean pairwise Pearson between seeds (collapsed seeds dropped)")
save(fig, output_dir, "03_size_curve_rs_corr")
display(fig)
variants = stats.rs_corr_variants(scores)
stats.display_table(variants.assign(extra_pairs=variants["experiment"].map(experiment_size))).round(3)
