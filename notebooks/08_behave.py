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
# # 08 · Behavioural tests (CheckList-style) in five languages, across seeds
# Minimum functionality (MFT), invariance (INV) and directional (DIR) tests generated from the templates in
# `annotators/behave/<lang>.yaml`. Each capability is named as in the diagnostic taxonomy. A transparent
# reference (lexical overlap) shows what the suite measures; the fine-tuned seeds of the scale's base sweep are
# evaluated on the suite of their training language, with the spread and RS corr of their failure rates.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False
seed = 0

# %%
# %matplotlib inline
from pathlib import Path

import pandas as pd
from IPython.display import display

from diagnostics import behave
from diagnostics.behave import LexicalOverlapPredictor
from diagnostics.finetune import list_runs
from diagnostics.pipeline import ScalePlan, ensure_runs, notebook_paths
from diagnostics.plots import failure_by_seed, failure_heatmap

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base",), train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
max_per_test = {"tiny": 10, "demo": 50, "paper": 200}[scale]
suite = behave.generate_suites(seed=seed, max_per_test=max_per_test)
behave.suite_frame(suite).groupby(["language", "type"]).size().unstack()

# %% [markdown]
# ## A reference predictor: "entailed when every hypothesis word is in the premise"

# %%
reference = behave.run_suite(suite, LexicalOverlapPredictor())
fig = failure_heatmap(reference, title="Lexical-overlap reference: failure rate")
fig.savefig(Path(output_dir) / "08_behave_reference_heatmap.png", dpi=110)
fig

# %% [markdown]
# ## Fine-tuned seeds of the base sweep, each on the suite of its training language

# %%
runs_dir = Path(runs_dir or f"runs/{scale}")
predictions = ensure_runs(scale_plan, only=("base",), train=train_missing)
frames = []
for language in sorted(predictions["language"].unique()):
    run_dirs = [run.path for run in list_runs(runs_dir, experiment="base", language=language, state="done")]
    frames.append(behave.run_sweep([c for c in suite if c.language == language], run_dirs,
                                   precision=scale_plan.spec.inference_precision))
results = pd.concat(frames, ignore_index=True)
fig = failure_heatmap(results, title="Fine-tuned seeds: mean failure rate")
fig.savefig(Path(output_dir) / "08_behave_runs_heatmap.png", dpi=110)
display(fig)
fig = failure_by_seed(results)
fig.savefig(Path(output_dir) / "08_behave_failure_by_seed.png", dpi=110)
display(fig)
summary = behave.summarise_across_seeds(results, by="test")
display(summary.stability)
summary.rates.round(3)
