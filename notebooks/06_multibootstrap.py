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
# # 06 · Multi-Bootstrap: which differences survive?
# Multi-Bootstrap (Sellam et al., 2022) resamples seeds and diagnostic examples jointly, so a confidence interval
# covers both sources of variation. Each category is resampled within itself, so it keeps its size in every
# sample (a 14-example category is always scored on 14 examples); the all-examples and overall rows resample the
# whole set. Per category: the MCC of each language with its 95 % CI; the difference between languages
# (unpaired: different models) and between training settings (paired: same seeds).
#
# A comparison runs one test per category. Calling every difference whose 95 % CI excludes 0 "real" would, with
# 33 categories and no real difference anywhere, still find about 33 × 0.05 ≈ 1.6 of them per comparison. So each
# comparison counts its survivors four ways: the raw CI excludes 0; Holm-adjusted p ≤ 0.05 (the chance of *any*
# false survivor stays ≤ 5 %); Benjamini-Hochberg-adjusted p ≤ 0.05 (false survivors are ≤ 5 % of the survivors
# on average); and the simultaneous 95 % band, which covers all categories at once, excludes 0. The p-values are
# two-sided (no direction is assumed). A bootstrap p-value cannot go below 2 / n_boot (two-sided), and Holm's
# smallest threshold is 0.05 / 33 ≈ 0.0015, so the comparisons use at least 2000 samples. These are bootstrap
# approximations far in the tail, optimistic with few examples per category: in simulations with 33 null
# categories of 40 examples, one seed per setting and only examples resampled, Holm's family-wise error came out
# near 8 % instead of 5 % (with several seeds and both sources resampled, it stayed below 5 %).

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
import pandas as pd
from IPython.display import Markdown, display

from diagnostics import plots, stats
from diagnostics.data import compare_diagnostics
from diagnostics.pipeline import ScalePlan, ensure_runs, experiment_configs, extra_size, notebook_paths, plan_datasets
from diagnostics.plots import save

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base", "extra"), train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
spec = scale_plan.spec
predictions = ensure_runs(scale_plan, only=("base", "extra"), train=train_missing)
datasets = plan_datasets(scale_plan)  # the user's files (diagnostic_fr ...) by dataset name, as values
base = predictions[predictions["experiment"] == "base"]
languages = sorted(base["language"].unique())
ALPHA = 0.05
n_boot_tests = max(spec.n_boot, 2000)  # two-sided p >= 2 / n_boot must reach ALPHA / 33 for Holm to reject at all
counts = []


def survivors(frame, name):
    """Count the per-category differences that survive, raw and after each correction; keep the row for the end.

    Returns the categories that survive Holm's correction, or a sentence saying that none does."""
    cats = frame[frame["in_family"]]

    def outside(low, high):
        return int(((cats[low] > 0) | (cats[high] < 0)).sum())

    row = {"comparison": name, "categories": len(cats),
           "expected false raw survivors": round(ALPHA * len(cats), 2),
           "raw CI excludes 0": outside("delta_ci_low", "delta_ci_high"),
           "Holm p ≤ 0.05": int((cats["p_holm"] <= ALPHA).sum()),
           "BH p ≤ 0.05": int((cats["p_bh"] <= ALPHA).sum()),
           "simultaneous band excludes 0": outside("delta_simul_low", "delta_simul_high")}
    counts.append(row)
    print(", ".join(f"{k}: {v}" for k, v in row.items()))
    kept = cats[cats["p_holm"] <= ALPHA]
    if kept.empty:
        return Markdown(f"*{name}: no per-category difference survives Holm's correction (p ≤ {ALPHA}).*")
    return kept

# %% [markdown]
# ## Per-category MCC with 95 % Multi-Bootstrap CIs, per language

# %%
ci = pd.concat([stats.setting_ci(base, {"language": lang}, n_boot=spec.n_boot, seed=0, dataset=datasets)
                for lang in languages], ignore_index=True)
fig = plots.ci_forest_plot(ci, hue="language")
save(fig, output_dir, "06_ci_per_language")
fig

# %% [markdown]
# ## English vs Russian, per category (unpaired seeds)
# The diagnostics are translations sharing ids; ids whose gold label differs between the two files (LiDiRus
# id 233) are left out, since a comparison needs one gold label per example. The plot shows the simultaneous
# 95 % band of each difference; the table lists the differences that survive Holm's correction.

# %%
if {"en", "ru"} <= set(languages):
    differ = compare_diagnostics("axb", ("lidirus",))
    excluded = set(differ.loc[differ["field"] == "label", "id"])
    kept = base[~base["example_id"].isin(excluded)]
    en_ru = stats.compare_settings(kept, {"language": "en"}, {"language": "ru"}, paired=False, n_boot=n_boot_tests,
                                   seed=0, dataset=datasets, alternative="two-sided")
    fig = plots.ci_forest_plot(en_ru, estimate="delta", low="delta_simul_low", high="delta_simul_high")
    save(fig, output_dir, "06_delta_en_ru")
    display(fig)
    display(survivors(en_ru, "en vs ru"))

# %% [markdown]
# ## Most vs least extra English data, per category (paired seeds)
# Extra data is expected to help, but a two-sided test also counts categories that get worse.

# %%
sizes = {name: extra_size(cfg) for name, cfg in experiment_configs(scale_plan, ("base", "extra")).items()}
smallest, largest = min(sizes, key=sizes.get), max(sizes, key=sizes.get)
in_both = set(predictions.loc[predictions["experiment"] == smallest, "language"]) & \
    set(predictions.loc[predictions["experiment"] == largest, "language"])
for lang in sorted(in_both):
    if smallest == largest or lang not in languages:
        continue
    diff = stats.compare_settings(predictions, {"experiment": smallest, "language": lang},
                                  {"experiment": largest, "language": lang}, paired=True,
                                  n_boot=n_boot_tests, seed=0, dataset=datasets, alternative="two-sided")
    fig = plots.ci_forest_plot(diff, estimate="delta", low="delta_simul_low", high="delta_simul_high")
    save(fig, output_dir, f"06_delta_extra_{lang}")
    display(fig)
    display(survivors(diff, f"{lang}: {largest} vs {smallest}"))

# %% [markdown]
# ## How many per-category differences survive, per comparison
# Raw counts above the expected number of false survivors hint at real differences; the Holm, BH and band
# counts are the ones to report as differences.

# %%
pd.DataFrame(counts, columns=["comparison", "categories", "expected false raw survivors", "raw CI excludes 0",
                              "Holm p ≤ 0.05", "BH p ≤ 0.05", "simultaneous band excludes 0"])
