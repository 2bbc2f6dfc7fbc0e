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
# # 00 · The bundled datasets
# RTE-style training data and the broad-coverage diagnostics in three languages, with the 33 fine-grained
# categories named the same way everywhere. Everything here is computed by `diagnostics.data`.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
from pathlib import Path

from diagnostics import data
from diagnostics.data import compare_diagnostics
from diagnostics.pipeline import notebook_paths
from diagnostics.plots import category_counts_by_language

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir)
data.available()

# %% [markdown]
# ## Table 1: dataset statistics
# Per dataset: size (pairs), vocabulary size (distinct lower-cased words over premise and hypothesis) and mean
# words per pair (premise + hypothesis). A word is a maximal run of Unicode letters, digits or underscores (the
# regular expression `\w+`), so punctuation separates words: "don't" counts as two. Other tokenisers give somewhat
# different counts.

# %%
table1_sets = {"RTE train": data.load("rte", "train"), "RTE validation": data.load("rte", "validation"),
               "TERRa train": data.load("terra", "train"), "TERRa validation": data.load("terra", "validation"),
               "AX-b (en diagnostics)": data.load("axb"), "LiDiRus (ru diagnostics)": data.load("lidirus"),
               "SweDiagnostics (sv diagnostics)": data.load("swediagnostics"),
               "SICK train": data.load("sick", "train")}
data.dataset_statistics(table1_sets).round(1)

# %% [markdown]
# ## Categories per language, side by side

# %%
diagnostic_sets = {"en (axb)": data.load("axb"), "ru (lidirus)": data.load("lidirus"), "sv (swediagnostics)": data.load("swediagnostics")}
fig = category_counts_by_language(diagnostic_sets)
fig.savefig(Path(output_dir) / "00_categories_by_language.png", dpi=110)
fig

# %% [markdown]
# ## Cross-language consistency check
# The four diagnostic files share ids 0–1103. The check lists every id where a label or a category differs
# from the English `diagnostic-full.tsv`. Expected (see `datasets/lidirus/PROVENANCE.md`): LiDiRus differs at
# id 233 (label) and id 832 (Redundancy missing); nothing else.

# %%
differences = compare_diagnostics()
differences

# %%
assert set(zip(differences["dataset"], differences["id"], differences["field"])) == {
    ("lidirus", "233", "label"), ("lidirus", "832", "missing categories")}

# %% [markdown]
# ## Training data at a glance

# %%
import pandas as pd

pd.concat({name: data.load(name).groupby("split")["label"].value_counts(dropna=False).unstack(fill_value=0)
           for name in ("rte", "terra")})
