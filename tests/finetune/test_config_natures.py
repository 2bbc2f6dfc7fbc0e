"""What each sweep setting is, as its field declares it: in the run hash or not, hashed only when set, derived from
others, kept per run of a fused group, belonging to one recipe. The name lists computed from the fields equal the
lists once written by hand, the run hash of stored runs is unchanged, and every setting is read by some code."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from diagnostics.finetune import ConfigError, SweepConfig, load_config
from diagnostics.finetune import _config as config_module
from diagnostics.finetune import _grouping

from _paths import ROOT

# The four lists as they were written by hand before each setting declared its nature on its field.
NOT_IN_RUN_HASH = frozenset({"experiment", "output_dir", "models", "languages", "seeds", "executor", "workers",
                             "executor_options", "progress", "num_threads", "fuse"})
HASHED_WHEN_SET = {"recipe": "epoch", "val_interval": None, "max_vals": 10, "lr_patience": 4, "lr_decay_factor": 0.5,
                   "min_lr": 1e-7, "scheduler_threshold": 1e-4, "val_data_limit": 5000,
                   "bert_adam_max_grad_norm": 1.0, "val_schedule": None, "classifier_head": "transformers",
                   "truncation": "pair"}
DERIVED_SETTINGS = {"val_schedule": frozenset({"val_interval", "max_vals", "recipe"}),
                    "classifier_head": frozenset({"recipe"}), "truncation": frozenset({"recipe"})}
#: Settings added since, each hashed only when set and kept per run: the hash of every run stored before is unchanged.
ADDED_SINCE = {"mixture_order": "train_first"}
PER_RUN_SETTINGS = frozenset({
    "experiment", "models", "languages", "seeds", "data", "extra_eval", "train_size", "data_seed", "extra_data",
    "presence", "max_epochs", "max_steps", "patience", "selection_metric", "val_interval", "max_vals", "lr_patience",
    "lr_decay_factor", "min_lr", "scheduler_threshold", "val_data_limit", "val_schedule", "save_checkpoint",
    "progress"})


def test_the_name_lists_are_the_ones_written_by_hand_before():
    assert config_module.NOT_IN_RUN_HASH == NOT_IN_RUN_HASH
    assert config_module.HASHED_WHEN_SET == HASHED_WHEN_SET | ADDED_SINCE
    order = [name for name in config_module.HASHED_WHEN_SET if name not in ADDED_SINCE]
    assert order == list(HASHED_WHEN_SET)  # the order of the recipe's problems
    assert config_module.DERIVED_SETTINGS == DERIVED_SETTINGS
    assert _grouping.PER_RUN_SETTINGS == PER_RUN_SETTINGS | set(ADDED_SINCE)


# Run hashes of the code before the settings declared their nature: runs stored then are found again.
RUN_HASHES = [
    ("default", [], "0be04a566cccc436"),
    ("default", ["lr=2e-5"], "12e5d61eb95b4aaf"),
    ("default", ["recipe=jiant", "optimizer=bert_adam"], "9c081fb0ff0ad664"),
    ("default", ["recipe=trainer"], "1558ef64c021a390"),
    ("default", ["classifier_head=transformers", "truncation=pair"], "0be04a566cccc436"),
    ("default", ["extra_data={name: sick, size: 300}", "presence={feature: Negation, share: 0.5}", "train_size=100"],
     "a78c1b928965c4ae"),
    ("default", ["fuse=4", "seeds=[0]", "executor=pool", "workers=2"], "0be04a566cccc436"),
    # paper.yaml has trained shuffled mixtures since mixture_order came: its RTE-first runs keep their hash
    ("paper.yaml", ["mixture_order=train_first"], "5f8813cf1cfcce95"),
    ("paper.yaml", ["mixture_order=train_first", "val_schedule=jiant_superglue"], "88354b522c17a196"),
    ("paper.yaml", ["mixture_order=train_first", "classifier_head=transformers", "truncation=pair"],
     "065f07fbf517474b"),
    ("paper.yaml", ["mixture_order=train_first", "max_vals=3", "val_schedule=custom"], "07ae74245188a25a"),
    ("demo.yaml", [], "4b5bc0273b857422"),
]


@pytest.mark.parametrize("base, overrides, expected", RUN_HASHES)
def test_the_run_hash_of_stored_runs_is_unchanged(base, overrides, expected):
    config = SweepConfig() if base == "default" else load_config(ROOT / "configs" / base)
    assert config.with_overrides(overrides).run_hash() == expected


# The problems of recipe and optimizer, word for word as before.
JIANT_ONLY = "expected it unset with recipe: {} (it sets the jiant recipe; add recipe: jiant), found {}"
PROBLEMS = [
    (dict(recipe="jiant"),
     [("optimizer", "expected bert_adam with recipe: jiant (the optimizer jiant's recipe ran), found 'adamw'")]),
    (dict(optimizer="bert_adam"),
     [("optimizer", "expected adamw with recipe: epoch (bert_adam's warm-up is tied to the jiant recipe's step "
                    "budget; set recipe: jiant), found 'bert_adam'")]),
    (dict(recipe="trainer", optimizer="bert_adam"),
     [("optimizer", "expected adamw with recipe: trainer (bert_adam's warm-up is tied to the jiant recipe's step "
                    "budget; set recipe: jiant), found 'bert_adam'")]),
    (dict(max_vals=3, lr_patience=2, val_data_limit=None, classifier_head="jiant", truncation="per_sentence",
          val_schedule="custom"),
     [("max_vals", JIANT_ONLY.format("epoch", "3")), ("lr_patience", JIANT_ONLY.format("epoch", "2")),
      ("val_data_limit", JIANT_ONLY.format("epoch", "null")), ("val_schedule", JIANT_ONLY.format("epoch", "'custom'")),
      ("classifier_head", JIANT_ONLY.format("epoch", "'jiant'")),
      ("truncation", JIANT_ONLY.format("epoch", "'per_sentence'"))]),
    (dict(recipe="trainer", bert_adam_max_grad_norm=0.5, min_lr=0.0, lr_decay_factor=0.1, scheduler_threshold=0.0,
          val_interval=5),
     [("val_interval", JIANT_ONLY.format("trainer", "5")), ("lr_decay_factor", JIANT_ONLY.format("trainer", "0.1")),
      ("min_lr", JIANT_ONLY.format("trainer", "0")), ("scheduler_threshold", JIANT_ONLY.format("trainer", "0")),
      ("bert_adam_max_grad_norm", JIANT_ONLY.format("trainer", "0.5"))]),
    (dict(recipe="allennlp", max_vals=3),
     [("recipe", "expected one of epoch, jiant, trainer, found 'allennlp'"),
      ("max_vals", JIANT_ONLY.format("allennlp", "3"))]),
]


@pytest.mark.parametrize("values, problems", PROBLEMS)
def test_recipe_and_optimizer_problems_are_worded_as_before(values, problems):
    with pytest.raises(ConfigError) as info:
        SweepConfig(**values)
    assert info.value.problems == problems


def test_good_recipe_and_optimizer_pairs_pass():
    SweepConfig(recipe="jiant", optimizer="bert_adam", max_vals=3, classifier_head="transformers")
    SweepConfig(recipe="trainer", optimizer="adamw")
    SweepConfig(classifier_head="transformers", truncation="pair", val_schedule=None)


# Settings no module but the one declaring them reads (none today): name -> why it still belongs in a config.
READ_BY_THEIR_DECLARATION_ONLY: dict[str, str] = {}


def _names_read(package: Path, skip: Path) -> set[str]:
    """Every attribute read (``.name``) and every string constant (a key: ``"name"``) of the package's modules
    but ``skip``, the module that declares the settings (its own checks of a setting are not a use of it)."""
    names = set()
    for path in package.rglob("*.py"):
        if path == skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)
    return names


def test_every_setting_is_read_by_some_code():
    package = ROOT / "diagnostics"
    read = _names_read(package, package / "finetune" / "_config.py")
    assert "no_such_setting" not in read  # the check can fail
    unread = [f.name for f in dataclasses.fields(SweepConfig)
              if f.init and f.name not in read and f.name not in READ_BY_THEIR_DECLARATION_ONLY]
    assert not unread, f"settings no code reads (use them, remove them, or say why in the allow-list): {unread}"


def test_the_options_of_the_jiant_recipe_are_the_settings_added_with_it():
    added = {name: "jiant" for name in HASHED_WHEN_SET | ADDED_SINCE if name != "recipe"}
    assert config_module.RECIPE_OPTIONS == added


def test_an_option_is_refused_under_the_recipes_it_does_not_belong_to(monkeypatch):
    monkeypatch.setattr(config_module, "RECIPE_OPTIONS", {**config_module.RECIPE_OPTIONS, "length_bucketing": "epoch"})
    assert SweepConfig(length_bucketing=True).length_bucketing  # its own recipe
    with pytest.raises(ConfigError) as info:
        SweepConfig(recipe="jiant", optimizer="bert_adam", length_bucketing=True)
    assert info.value.problems == [("length_bucketing", "expected it unset with recipe: jiant (it sets the epoch "
                                                        "recipe; add recipe: epoch), found true")]


def test_the_optimizer_a_recipe_needs_is_the_one_its_recipe_object_runs(monkeypatch):
    real = config_module.get_recipe
    monkeypatch.setattr(config_module, "get_recipe", lambda name: dataclasses.replace(real(name), optimizer="bert_adam")
                        if name == "trainer" else real(name))
    assert SweepConfig(recipe="trainer", optimizer="bert_adam").optimizer == "bert_adam"
    with pytest.raises(ConfigError) as info:
        SweepConfig(recipe="trainer")
    assert info.value.problems == [("optimizer", "expected bert_adam with recipe: trainer (the optimizer trainer's "
                                                 "recipe ran), found 'adamw'")]
