"""SweepConfig: paper defaults, YAML/TOML files, CLI-style overrides, validation messages."""

import dataclasses

import pytest

from diagnostics.finetune import ExtraData, ModelSpec, Presence, SweepConfig, load_config

from _paths import ROOT

CONFIGS = ROOT / "configs"


def test_defaults_are_the_studys():
    cfg = SweepConfig()
    assert cfg.seeds == [0, 1, 2, 3, 4, 5]
    assert (cfg.batch_size, cfg.lr, cfg.dropout, cfg.optimizer, cfg.max_grad_norm, cfg.max_epochs) == \
        (4, 1e-5, 0.1, "adamw", 1.0, 10)
    assert cfg.train_top_k_layers is None  # full fine-tuning
    assert cfg.models == [ModelSpec("bert-base-multilingual-cased")]


def test_yaml_and_toml_give_the_same_config(tmp_path):
    (tmp_path / "c.yaml").write_text("experiment: x\nlr: 5e-5\nseeds: [0, 1]\nmodels: [embedded]\n"
                                     "extra_data: {name: sick, size: 300}\npresence: {feature: Negation, share: 0.5}\n")
    (tmp_path / "c.toml").write_text('experiment = "x"\nlr = 5e-5\nseeds = [0, 1]\nmodels = ["embedded"]\n'
                                     '[extra_data]\nname = "sick"\nsize = 300\n'
                                     '[presence]\nfeature = "Negation"\nshare = 0.5\n')
    a, b = load_config(tmp_path / "c.yaml"), load_config(tmp_path / "c.toml")
    assert a == b
    assert a.lr == 5e-5 and isinstance(a.lr, float)  # YAML 1.1 reads 5e-5 as a string: coerced
    assert a.extra_data == ExtraData("sick", 300) and a.presence == Presence("Negation", 0.5)


def test_overrides_reach_nested_keys_and_parse_values():
    cfg = SweepConfig(extra_data={"name": "sick", "size": 100}).with_overrides(
        ["lr=5e-5", "seeds=[3,4]", "extra_data.size=700", "train_top_k_layers=2", "length_bucketing=true"])
    assert cfg.lr == 5e-5 and cfg.seeds == [3, 4] and cfg.extra_data.size == 700
    assert cfg.train_top_k_layers == 2 and cfg.length_bucketing is True
    assert cfg.with_overrides(["extra_data=null"]).extra_data is None


def test_unknown_key_is_refused_with_suggestion():
    with pytest.raises(ValueError, match="did you mean 'batch_size'"):
        SweepConfig.from_dict({"batchsize": 8})
    with pytest.raises(ValueError, match="key=value"):
        SweepConfig().with_overrides(["lr"])
    with pytest.raises(ValueError, match="expected a number"):
        SweepConfig().with_overrides(["lr=fast"])


def test_language_without_bundled_training_data_needs_paths():
    with pytest.raises(ValueError, match="language 'sv'.*data.sv.train"):
        SweepConfig(languages=["sv"])
    cfg = SweepConfig(languages=["sv"], data={"sv": {"train": {"name": "rte_format", "path": "t.jsonl",
                                                                "language": "sv"}, "validation": "rte:validation"}})
    refs = cfg.language_data("sv")
    assert refs["train"].path == "t.jsonl" and [d.name for d in refs["diagnostics"]] == ["swediagnostics"]
    assert [d.name for d in SweepConfig().language_data("ru")["diagnostics"]] == ["lidirus"]


def test_run_hash_ignores_grid_and_executor_but_not_training_settings():
    base = SweepConfig()
    assert base.run_hash() == base.with_overrides(["seeds=[0]", "executor=pool", "experiment=y"]).run_hash()
    assert base.run_hash() != base.with_overrides(["lr=2e-5"]).run_hash()


def test_round_trip_through_dict():
    cfg = SweepConfig(models=[{"name": "m1", "path": "/x", "pretrain_seed": 1}], presence=("Negation", 0.25))
    assert SweepConfig.from_dict(cfg.to_dict()) == cfg


def test_shipped_configs_load():
    paper = load_config(CONFIGS / "paper.yaml")
    assert paper.models[0].name == "bert-base-multilingual-cased"
    assert paper.train_top_k_layers is None and paper.lr == 1e-5 and paper.batch_size == 4
    assert paper.seeds == list(range(6))
    demo = load_config(CONFIGS / "demo.yaml")
    assert demo.models[0].name == "embedded" and demo.train_top_k_layers is not None
    assert set(demo.languages) == {"en", "ru"} and len(demo.seeds) == 3


def test_every_setting_is_described_once_with_its_default_allowed_values_and_help():
    from diagnostics.pipeline import ScaleSpec
    from diagnostics.settings import describe_settings

    for settings_class in (SweepConfig, ScaleSpec):
        rows = describe_settings(settings_class)
        assert [row["key"] for row in rows] == [f.name for f in dataclasses.fields(settings_class) if f.init]
        assert all(row["help"] for row in rows), [row["key"] for row in rows if not row["help"]]
    rows = {row["key"]: row for row in describe_settings(SweepConfig)}
    assert rows["batch_size"]["default"] == "4" and rows["batch_size"]["allowed"] == "an integer >= 1"
    assert rows["recipe"]["allowed"] == "epoch | jiant | trainer"
    assert rows["lr"]["help"].startswith("Peak learning rate")


def test_settings_command_lists_every_key_and_docs_settings_md_is_its_output():
    from typer.testing import CliRunner

    from diagnostics.cli import app
    from diagnostics.cli.settings import settings_markdown

    result = CliRunner().invoke(app, ["settings", "sweep"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if not line.startswith(" ")]
    assert [line.split(" ")[0] for line in lines] == [f.name for f in dataclasses.fields(SweepConfig) if f.init]
    assert "batch_size = 4  [an integer >= 1]" in lines and "languages = [en, ru]" in lines
    result = CliRunner().invoke(app, ["settings", "scale", "--markdown"])
    assert result.exit_code == 0 and "| `score_missing` | `problem` | problem \\| skip \\| train |" in result.output
    result = CliRunner().invoke(app, ["settings", "sweeps"])
    assert result.exit_code == 2 and "error: settings: expected sweep or scale, found 'sweeps'" in result.output
    docs = ROOT / "docs" / "settings.md"
    assert docs.read_text(encoding="utf-8") == settings_markdown() + "\n", \
        "docs/settings.md is stale: python -c 'from diagnostics.cli.settings import settings_markdown; " \
        "print(settings_markdown())' > docs/settings.md"
