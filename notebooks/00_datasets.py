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
# # 00 · The bundled datasets
# RTE-style training data and the broad-coverage diagnostics in three languages, with the 33 fine-grained
# categories named the same way everywhere. Everything here is computed by `diagnostics.data`.

# %% tags=["parameters"]
scale = "tiny"
output_dir = "reports/notebooks"
runs_dir = None

# %%
# %matplotlib inline
from pathlib import Path

from diagnostics import data
from diagnostics.data.consistency import compare_diagnostics
from diagnostics.plots.data import category_counts_by_language

Path(output_dir).mkdir(parents=True, exist_ok=True)
data.available()

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
