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

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %% [markdown]
# # 07 · Annotating a new language: a rules file plus a backend choice
#
# The annotators are data (`annotators/<lang>.yaml`, format in `annotators/README.md`). We score the bundled
# English, Russian and Swedish rules against their diagnostic sets, then add Italian — a language the toolkit
# has no rules for — by writing a small rules file that uses the `simplemma` backend.

# %%
# %matplotlib inline
import tempfile
from pathlib import Path

import pandas as pd
from IPython.display import display

from diagnostics import annotate as ann
from diagnostics import plots
from diagnostics.pipeline import notebook_paths
from diagnostics.plots import save

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir)
langs = ["en"] if scale == "tiny" else ["en", "ru", "sv"]
scores = {lang: ann.evaluate(lang) for lang in langs}
scores[langs[0]].round(3)

# %%
fig = plots.evaluation_scores(scores)
save(fig, output_dir, "07_annotator_scores")
fig

# %% [markdown]
# ## Feature distributions of training data (the study's Table 7)

# %%
limit = {"tiny": 100, "demo": 1000}.get(scale)
dist = ann.feature_distribution(("rte", "terra", "sick"), limit=limit)
fig = plots.feature_distribution(dist)
save(fig, output_dir, "07_feature_distribution")
display(fig)
dist

# %% [markdown]
# ## A new language: Italian with simplemma lemmas

# %%
rules = """
language: it
backend: simplemma
lists:
  negators: [non, mai, nessuno, niente, nulla, "né", senza]
features:
  Negation:
    pair: differ
    words: [$negators]
  Disjunction:
    pair: differ
    words: [o, oppure]
  Intervals/Numbers:
    pair: swap
    key: lower
    words: [uno, due, tre, quattro, cinque, sei, sette, otto, nove, dieci, "più di", "meno di", almeno]
    patterns:
      number: [{LIKE_NUM: true}]
  Morphological negation:
    pair: differ
    derivation:
      prefixes: [in, im, dis, s]
"""
path = Path(tempfile.mkdtemp()) / "it.yaml"
path.write_text(rules, encoding="utf-8")
pairs = pd.DataFrame({
    "premise": ["Il gatto non è sul tappeto.", "Maria beve tè o caffè.", "Ha tre figli.", "Il gioco è ingiusto."],
    "hypothesis": ["Il gatto è sul tappeto.", "Maria beve tè.", "Ha due figli.", "Il gioco è giusto."],
})
ann.annotate(pairs, path)[["premise", "hypothesis", "auto_features", "feature_sides"]]
