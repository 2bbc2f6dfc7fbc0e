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
# # 10 · Instability explorer: which examples flip between seeds?
# Notebook 02 shows *which categories* are unstable across seeds (σ of per-seed MCC). This one goes down to the
# examples: per example, every seed's prediction and P(entailment) and its **flip rate**, the share of seed pairs
# whose predictions differ (0 = the seeds agree; 2/3 with three seeds when one disagrees); per category, the share
# of flipping examples and each example's **Δσ**, the change of the category's σ when that example is left out
# (positive: the example raises σ). Definitions in `diagnostics.stats` (`instance_stability`,
# `category_instability`, `sigma_drivers`).
#
# The explorer below is a widget (ipywidgets: JupyterLab, Notebook 7 and the classic Notebook, VS Code, Colab);
# where no widget front end runs (this notebook executed by the pipeline, the HTML report) it shows static tables.
# The report's `explorer.html` holds the same drill-down as one self-contained page.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
import numpy as np
import pandas as pd
from IPython.display import display

from diagnostics import explorer as ex
from diagnostics.core.schema import ENTAILMENT
from diagnostics.pipeline import ScalePlan, ensure_runs, notebook_paths, plan_datasets
from diagnostics.plots import flipping_figure, save

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base", "extra"),
                                      train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
predictions = ensure_runs(scale_plan, only=("base", "extra"), train=train_missing)
datasets = plan_datasets(scale_plan)  # the user's files (diagnostic_fr ...) by dataset name, as values
# the rule annotator's features of every pair, annotated once per dataset and then read from the run store's cache
model = ex.build_explorer(predictions, datasets, cache_dir=runs_dir / ".cache" / "annotations")
payload = model.save_payload(output_dir)  # the report's explorer.html is drawn from this file
print(f"{len(model.settings)} settings, {len(model.category_names)} categories; explorer data: "
      f"{payload.stat().st_size / 1e3:.0f} kB")

# %% [markdown]
# ## The five least stable categories per language
# Largest σ of per-seed MCC in the base experiment; `n_flipping` counts the examples whose seeds disagree and
# `top_driver` is the example with the largest Δσ. The figure shows the least stable category of each language
# with its flipping examples (premise and hypothesis cut around the words where they differ).

# %%
lead = model.least_stable(5)
display(lead.drop(columns=["setting", "experiment", "model", "dataset"]).round(3))
for setting, group in lead.groupby("setting", sort=False):
    top = group.iloc[0]
    fig = flipping_figure(model, setting, top["category"])
    save(fig, output_dir, f"10_flipping_{top['language']}")
    display(fig)

# %% [markdown]
# ## Explore every category, seed, language and experiment
# Choose a cell of the heat map to list that category's examples; filter by language, experiment and flipping
# examples only.

# %%
ex.explore(model)

# %% [markdown]
# ## What the flipping examples share
# Per language (base experiment): flipping examples against the others. `margin` is the mean distance of
# P(entailment) from 0.5 over seeds: flipping examples sit near the decision boundary when it is small.
# `gold_entailment` is the share with gold label entailment, `accuracy` the share of seeds that are right. Then the
# rule annotator's features most over-represented among flipping examples (share among flipping minus share
# among all examples).

# %%
rows, enriched = [], []
for setting, spec in enumerate(model.settings):
    if spec["experiment"] != model.lead_experiment:
        continue
    inst = model.instance_table(setting)
    margin = (np.abs(np.array(list(inst["probabilities"]), dtype=float) - 0.5).mean(axis=1)
              if "probabilities" in inst else np.full(len(inst), np.nan))
    frame = pd.DataFrame({"flips": inst["flips"].to_numpy(), "margin": margin,
                          "gold_entailment": (inst["label"] == ENTAILMENT).to_numpy(),
                          "accuracy": inst["accuracy"].to_numpy(),
                          "auto": inst["auto_features"].to_numpy()})
    for flips, group in frame.groupby("flips"):
        rows.append({"language": spec["language"], "examples": "flipping" if flips else "stable", "n": len(group),
                     "margin": group["margin"].mean(), "gold_entailment": group["gold_entailment"].mean(),
                     "accuracy": group["accuracy"].mean()})
    if frame["auto"].notna().all() and frame["flips"].any():
        exploded = frame.explode("auto").dropna(subset=["auto"])
        share_all = exploded.groupby("auto").size() / len(frame)
        share_flip = exploded[exploded["flips"]].groupby("auto").size() / frame["flips"].sum()
        gap = (share_flip.reindex(share_all.index, fill_value=0) - share_all).sort_values(ascending=False).head(5)
        enriched.append(pd.DataFrame({"language": spec["language"], "feature": gap.index,
                                      "share_flipping": share_flip.reindex(gap.index, fill_value=0).to_numpy(),
                                      "share_all": share_all[gap.index].to_numpy(), "difference": gap.to_numpy()}))
display(pd.DataFrame(rows).round(3))
pd.concat(enriched, ignore_index=True).round(3) if enriched else "no flipping examples"
