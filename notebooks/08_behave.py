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
# # 08 · Behavioural tests (CheckList-style) in five languages, across seeds
# Minimum functionality (MFT), invariance (INV) and directional (DIR) tests generated from the templates in
# `annotators/behave/<lang>.yaml`. Each capability is named as in the diagnostic taxonomy. A transparent
# reference (lexical overlap) shows what the suite measures; fine-tuned runs under `runs_root` (those saved with
# a checkpoint) are evaluated per seed, with the spread and RS corr of their failure rates.

# %% tags=["parameters"]
scale = "tiny"
output_dir = "reports/notebooks"
runs_root = "runs"
seed = 0

# %%
from pathlib import Path

from diagnostics import behave
from diagnostics.behave.baselines import LexicalOverlapPredictor
from diagnostics.plots.behave import failure_by_seed, failure_heatmap

Path(output_dir).mkdir(parents=True, exist_ok=True)
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
# ## Fine-tuned runs, per seed (runs saved with `save_checkpoint`)

# %%
run_dirs = sorted(p.parent.parent for p in Path(runs_root).glob("*/*/*/seed=*/checkpoint/config.json"))
print(f"{len(run_dirs)} runs with a checkpoint under {runs_root!r}")
if run_dirs:
    results = behave.run_sweep(suite, run_dirs)
    fig = failure_heatmap(results, title="Fine-tuned runs: failure rate")
    fig.savefig(Path(output_dir) / "08_behave_runs_heatmap.png", dpi=110)
    fig = failure_by_seed(results)
    fig.savefig(Path(output_dir) / "08_behave_failure_by_seed.png", dpi=110)
    summary = behave.summarise_across_seeds(results, by="test")
    display(summary.stability)  # noqa: F821 - IPython
    display(summary.rates.round(3))  # noqa: F821
