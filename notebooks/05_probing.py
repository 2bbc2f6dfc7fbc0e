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
# # 05 · Layer-wise probing of the pretrained model and of fine-tuned seeds (Appendix, Figs. 16–18)
# SentEval-style probes: each sentence of a pair is encoded separately and mean-pooled per layer, the pair vector
# is the concatenation; a logistic regression (L2 strength chosen on held-out data from 1e-1…1e-5) predicts
# whether the pair shows Logic / Lexical Semantics / Predicate-Argument Structure. Training labels come from the
# rule-based annotators on the language's RTE-style data, test labels are the diagnostic set's gold coarse tags
# (the study's protocol). Control task = shuffled labels; selectivity = accuracy − control.
#
# With the demo's cheap recipe only the top layers are fine-tuned, so the fine-tuned seeds can only differ from
# the pretrained model in those layers.

# %% tags=["parameters"]
scale = "tiny"
output_dir = "reports/notebooks"
runs_dir = None

# %%
# %matplotlib inline
from pathlib import Path

import pandas as pd
from IPython.display import display

from diagnostics.pipeline import ensure_runs, pretrained_models, scale_spec
from diagnostics.plots import save
from diagnostics.plots.probe import accuracy_by_layer
from diagnostics.probe import discover_runs, layer_summary, probe_models

runs_dir = Path(runs_dir or f"runs/{scale}")
spec = scale_spec(scale)
predictions = ensure_runs(scale, runs_dir, only=("base",))
model_name, pretrained = next(iter(pretrained_models(scale, runs_dir).items()))
languages = sorted(predictions["language"].unique())

# %%
tables = []
for language in languages:
    seeds = discover_runs(runs_dir / "base" / language)
    chosen = dict(list(seeds.items())[: spec.probe_finetuned_seeds])
    models = {"pretrained": pretrained} | chosen
    tables.append(probe_models(models, language, cache_dir=runs_dir / ".cache" / "probe",
                               max_train=spec.probe_max_train, max_test=spec.probe_max_train,
                               precision=spec.precision))
probes = pd.concat(tables, ignore_index=True)
probes.groupby(["language", "model", "task"])[["accuracy", "selectivity"]].max().round(3)

# %% [markdown]
# ## Accuracy by layer: seeds, pretrained reference and seed band

# %%
for language in languages:
    for metric in ("accuracy", "selectivity"):
        fig = accuracy_by_layer(probes, metric=metric, language=language)
        save(fig, output_dir, f"05_probe_{metric}_{language}")
        display(fig)

# %% [markdown]
# ## Per-layer mean and σ across fine-tuned seeds

# %%
summary = layer_summary(probes)
summary.round(3)
