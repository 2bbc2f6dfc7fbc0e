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
# # 05 · Layer-wise probing of the pretrained model and of fine-tuned seeds (Appendix, Figs. 16–18)
# SentEval-style probes: each sentence of a pair is encoded separately and mean-pooled per layer, the pair vector
# is the concatenation; a logistic regression predicts whether the pair shows Logic / Lexical Semantics /
# Predicate-Argument Structure.
#
# The training and selection labels are the study's reading: a pair shows a category when either sentence shows one
# of its features among the study's 15 annotation features (`diagnostics.probe.STUDY_FEATURES`: the twelve its §5.4
# names and three read off morphosyntactic tags, see docs/annotation.md). On RTE-style pairs, most pairs then show some Logic feature (a conjunction,
# a number, a time expression), so the Logic probe may see one class only and predict it (its L2 strength is then
# NaN); the table below prints each task's positive rate. `probe_labels="differs"` gives the rules' pair reading
# (a feature counts where its evidence differs between the two sentences) over all 19 features the rules detect.
#
# **Protocol shown: the study's (Appendix 8.4), unless the scale's `probe_selection` / `probe_class_weight` say
# otherwise (the cell below prints what ran).** Training labels come from the rule-based annotators on the
# language's RTE-style train + validation; the L2 strength (1e-1 … 1e-5) is chosen on the language's RTE-style
# *test* split (RTE for en, TERRa for ru) labelled by the same annotators; classes are not weighted; the probes are
# scored on the diagnostic set's gold coarse tags. The alternatives are `selection="holdout"` (20 % of the
# training pairs held out) and `class_weight="balanced"`. Control task = shuffled labels; selectivity = accuracy −
# control.
#
# Accuracy alone is hard to read here: the annotated training pairs and the gold-tagged test pairs differ a lot in
# how often a category is present, so a probe that mostly learned the training prior can sit below the majority
# baseline. Balanced accuracy (mean recall of the two classes) puts every constant prediction at 0.5, so a probe
# above 0.5 separates the classes whatever their prior.
#
# With the demo's cheap recipe only the top layers are fine-tuned, so the fine-tuned seeds can only differ from
# the pretrained model in those layers.
#
# The last section codes the same training labels with the online code of MDL probing (Voita & Titov 2020):
# codelength and compression by layer, beside the accuracies.

# %% tags=["parameters"]
scale = "demo"
output_dir = None
runs_dir = None
train_missing = False

# %%
# %matplotlib inline
from pathlib import Path

import pandas as pd
from IPython.display import display

from diagnostics.core.tables import write_table
from diagnostics.finetune import list_runs
from diagnostics.pipeline import (PROBE_RESULTS, ScalePlan, ensure_runs, notebook_paths, pretrained_models,
                                  probe_frames)
from diagnostics.plots import accuracy_by_layer, compare_by_layer, save
from diagnostics.probe import layer_summary, probe_gold_cv, probe_models

runs_dir, output_dir = notebook_paths(scale, runs_dir, output_dir, needs=("base",), train_missing=train_missing)
scale_plan = ScalePlan.resolve(scale, runs_dir)  # the scale's settings and sweeps, as the pipeline ran them
spec = scale_plan.spec
predictions = ensure_runs(scale_plan, only=("base",))
model_name, pretrained = next(iter(pretrained_models(scale_plan).items()))
base = scale_plan.base
languages = sorted(predictions["language"].unique())
cache_dir = runs_dir / ".cache" / "probe"

# %%
tables, probed, frames = [], {}, {}
for language in languages:
    runs = [r for r in list_runs(runs_dir, experiment="base", language=language, state="done") if r.has_checkpoint]
    seeds = {f"seed={r.seed}" if len({r.model for r in runs}) == 1 else f"{r.model}/seed={r.seed}": r.model_folder()
             for r in sorted(runs, key=lambda r: (r.seed, r.model))}
    probed[language] = {"pretrained": pretrained} | dict(list(seeds.items())[: spec.probe_finetuned_seeds])
    print(f"{language}: probing the pretrained model and {len(probed[language]) - 1} of the {len(seeds)} fine-tuned "
          f"seeds with a checkpoint (the scale's probe_finetuned_seeds; --set probe_finetuned_seeds=N for more)")
    frames[language] = probe_frames(base, language, max_train=spec.probe_max_train, cache_dir=cache_dir)
    tables.append(probe_models(probed[language], language, cache_dir=cache_dir, selection=spec.probe_selection,
                               class_weight=spec.probe_class_weight, max_train=spec.probe_max_train,
                               max_test=spec.probe_max_train, precision=spec.inference_precision,
                               n_jobs=spec.probe_jobs, **frames[language]))
probes = pd.concat(tables, ignore_index=True)
write_table(probes.assign(run_model=model_name), output_dir / PROBE_RESULTS)  # for notebook 11's probing rows
where = {"test": "the annotated RTE-style test split (the study's protocol)",
         "holdout": "20 % held out of the annotated training pairs"}
for language, chosen in probes.groupby("language")["selection"].first().items():
    print(f"{language}: L2 strength chosen on {where[chosen]}; class weighting: {spec.probe_class_weight}; "
          f"{spec.probe_max_train} pairs per set at most")
display(probes.groupby(["language", "task"])[["train_positive_rate", "test_positive_rate"]].first().round(3))
metrics = ["accuracy", "majority", "balanced_accuracy", "macro_f1", "selectivity"]
probes.groupby(["language", "model", "task"])[metrics].max().round(3)

# %% [markdown]
# ## Accuracy and balanced accuracy by layer: seeds, pretrained reference, seed band and chance levels
# Top row: accuracy against the majority baseline of the gold test pairs. Bottom row: balanced accuracy against
# its chance level 0.5.

# %%
for language in languages:
    fig = accuracy_by_layer(probes, metric=["accuracy", "balanced_accuracy"], language=language)
    save(fig, output_dir, f"05_probe_accuracy_{language}")
    display(fig)
    fig = accuracy_by_layer(probes, metric="selectivity", language=language)
    save(fig, output_dir, f"05_probe_selectivity_{language}")
    display(fig)

# %% [markdown]
# ## Per-layer mean and σ across fine-tuned seeds
# One row per language, task and layer, every layer shown; per metric the mean over the probed seeds, their σ
# (sample std, ddof=1), the pretrained model's score and `chance` (what always predicting the majority class
# scores on the metric).

# %%
summary = pd.concat([layer_summary(probes, metric).assign(metric=metric)
                     for metric in ("accuracy", "balanced_accuracy")], ignore_index=True)
wide = summary.pivot_table(index=["language", "task", "layer"], columns="metric",
                           values=["mean", "std", "pretrained", "chance"]).swaplevel(axis=1).sort_index(axis=1)
with pd.option_context("display.max_rows", len(wide) + 1):
    display(wide.round(3).astype(object).where(wide.notna(), "empty"))  # "empty", not NaN, as the text says

# %% [markdown]
# ## Probes cross-validated on the gold tags (no annotator)
# The same logistic-regression probe, trained and tested on the diagnostic set's gold tags: 5 stratified, seeded
# folds over the same diagnostic pairs (their cached vectors are reused); the L2 strength is chosen on 20 % of
# each fold's training part. Its score shows what a layer encodes about a category without the annotators'
# disagreement with the gold tags; the gap to the annotator-trained probe is what the annotators' labels cost.
# Lines: pretrained model (solid, with ± σ across folds for the gold-tag probe) and the fine-tuned seeds' mean
# (dashed).

# %%
gold = pd.concat([probe_gold_cv(probed[language], language, cache_dir=cache_dir, folds=5,
                                class_weight=spec.probe_class_weight, max_test=spec.probe_max_train,
                                precision=spec.inference_precision, test=frames[language].get("test"),
                                n_jobs=spec.probe_jobs)
                  for language in languages], ignore_index=True)
for language in languages:
    fig = compare_by_layer({"annotator-trained": probes, "gold-tag 5-fold CV": gold}, metric="balanced_accuracy",
                           language=language)
    save(fig, output_dir, f"05_probe_gold_cv_{language}")
    display(fig)

# %%
best = {name: table.groupby(["language", "task", "model"])["balanced_accuracy"].max()
        for name, table in {"annotator-trained": probes, "gold-tag CV": gold}.items()}
pd.DataFrame(best).round(3)

# %% [markdown]
# ## MDL probing: what the labels cost in bits, layer by layer
# A probe's accuracy says whether a linear classifier can fit the labels, not how much data it needed: layers,
# and a pretrained and a fine-tuned model, often differ little in accuracy. The online code (Voita & Titov 2020)
# sends the annotated training labels in blocks (0.1, 0.2, 0.4 … 50, 100 % of the pairs, in a seeded order): the
# first block with the uniform code (1 bit per pair), each next one with a probe trained on all earlier blocks
# (its cross-entropy in bits). Vectors that make the labels easy to learn give a short code.
#
# * **compression** = uniform codelength / online codelength: 1 (dash-dotted line) means the probe learned
#   nothing; the dotted line is what learning the class balance alone gives (1 / H of the labels), so a nearly
#   one-class task compresses well for no merit of the vectors;
# * **MDL selectivity** = control codelength − task codelength, in bits: the control task codes the accuracy
#   probes' control labels (the same labels shuffled across pairs: same class balance, no link to the vectors), so
#   it is above 0 when the vectors carry the labels beyond their class balance.
#
# Same probe family as the accuracy probes (logistic regression on standardised pair vectors), with one fixed L2
# strength (0.1, `diagnostics.probe.MDL_ALPHA`) for every block, layer and model, so codelengths differ only by the
# vectors; `alpha="probe"` takes each accuracy probe's choice instead. The cached vectors are read: no model runs.

# %%
from diagnostics.plots import mdl_by_layer
from diagnostics.probe import probe_mdl, seed_separation

codes = pd.concat([probe_mdl(probed[language], language, cache_dir=cache_dir, selection=spec.probe_selection,
                             class_weight=spec.probe_class_weight, max_train=spec.probe_max_train,
                             max_test=spec.probe_max_train, precision=spec.inference_precision, **frames[language])
                   for language in languages], ignore_index=True)
for language in languages:
    fig = mdl_by_layer(codes, metric=["compression", "mdl_selectivity"], language=language)
    save(fig, output_dir, f"05_probe_mdl_{language}")
    display(fig)
codes.groupby(["language", "model", "task"])[["online_codelength", "compression", "mdl_selectivity"]].max().round(3)

# %% [markdown]
# ### Which metric tells the fine-tuned seeds from the pretrained model?
# Per layer, how far the seeds' mean lies from the pretrained model in units of the seeds' own σ
# (`diagnostics.probe.seed_separation`: (mean − pretrained) / σ; `empty` where the seeds do not differ, e.g. in the
# frozen lower layers): a metric with a large |separation| tells fine-tuning apart beyond seed noise. Only layers
# where some seed differs from the pretrained model are shown.

# %%
separation = pd.concat([seed_separation(probes, ["balanced_accuracy", "selectivity"]),
                        seed_separation(codes, ["compression", "mdl_selectivity"])], ignore_index=True)
changed = separation.groupby(["language", "task", "layer"])["difference"].transform(lambda d: d.abs().max() > 0)
wide = separation[changed].pivot_table(index=["language", "task", "layer"], columns="metric",
                                       values=["difference", "separation"])
with pd.option_context("display.max_rows", len(wide) + 1):
    display(wide.round(3).astype(object).where(wide.notna(), "empty"))  # "empty", not NaN, as the text says
