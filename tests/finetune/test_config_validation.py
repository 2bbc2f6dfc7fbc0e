"""The sweep config's one validation layer: every bad value names its key, the file and line (or the override),
what was expected and what was found. (The checks of names, references and seeds are in test_config_values.py,
those of what the machine lacks in test_preflight.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnostics import data
from diagnostics.core.errors import UserInputError
from diagnostics.core.yaml_lines import YAMLLineError
from diagnostics.finetune import ConfigError, SweepConfig, load_config

from _sweeps import stub_model_folder
from _sweeps import write_keyed_config as write_config


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return stub_model_folder(tmp_path_factory.mktemp("model") / "tiny")


@pytest.mark.parametrize("key, text, expected, found", [
    ("lr", "-1", "a number > 0", "-1"),
    ("dropout", "1.5", "a number in [0, 1)", "1.5"),
    ("warmup_ratio", "7", "a number in [0, 1)", "7"),
    ("train_size", "0", "an integer >= 1", "0"),
    ("train_size", "-5", "an integer >= 1", "-5"),
    ("batch_size", "16.5", "an integer", "16.5"),
    ("max_epochs", "ten", "an integer", "'ten'"),
    ("lr", "fast", "a number", "'fast'"),
    ("freeze_embeddings", "maybe", "true or false", "'maybe'"),
    ("precision", "fp8", "one of auto, fp32, tf32, bf16, fp16", "'fp8'"),
    ("device", "gpu", "one of auto, cpu, cuda", "'gpu' (did you mean 'cuda'?)"),
    ("optimizer", "AdamW", "one of adamw, bert_adam", "'AdamW' (did you mean 'adamw'?)"),
    ("executor", "ray", "one of inprocess, pool, submitit", "'ray'"),
    ("selection_metric", "f1", "one of accuracy, mcc", "'f1'"),
    ("patience", "0", "an integer >= 1", "0"),
    ("max_grad_norm", "-1", "a number >= 0", "-1"),
    ("head_lr", "0", "a number > 0 (or null to use lr)", "0"),
    ("seeds", "[0, -1]", "an integer >= 0", "-1"),
    ("recipe", "allennlp", "one of epoch, jiant, trainer", "'allennlp'"),
    ("val_interval", "0", "an integer >= 1 (or null for one epoch)", "0"),
    ("max_vals", "0", "an integer >= 1", "0"),
    ("lr_patience", "1.5", "an integer", "1.5"),
    ("lr_decay_factor", "1", "a number in (0, 1)", "1"),
    ("min_lr", "-1e-7", "a number >= 0", "-1e-07"),
    ("scheduler_threshold", "-0.1", "a number >= 0", "-0.1"),
    ("val_data_limit", "0", "an integer >= 1 (or null for the whole validation set)", "0"),
    ("bert_adam_max_grad_norm", "-1", "a number >= 0 (0: no per-tensor clipping)", "-1"),
])
def test_bad_value_names_file_line_key_expected_and_found(tmp_path, model, key, text, expected, found):
    path, lines = write_config(tmp_path, model, **{key: text})
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{lines[key]}: {key}"), message
    assert f"expected {expected}" in message and f"found {found}" in message, message
    assert "\n" not in message and isinstance(info.value, UserInputError)


def test_nested_unknown_keys_are_named_with_a_suggestion(tmp_path, model):
    path, lines = write_config(tmp_path, model, extra_data="{name: sick, sizee: 5}")
    with pytest.raises(ConfigError, match=rf"^{path}:{lines['extra_data']}: extra_data.sizee: unknown key "
                                          r"\(did you mean 'size'\?\)"):
        load_config(path)
    path, _ = write_config(tmp_path, model, data="{en: {trian: rte:train}}")
    with pytest.raises(ConfigError, match=r"data.en.trian: unknown key \(did you mean 'train'\?\)"):
        load_config(path)
    path, _ = write_config(tmp_path, model, models="[{name: tiny, paht: MODEL}]")
    with pytest.raises(ConfigError, match=r"models\[0\].paht: unknown key \(did you mean 'path'\?\)"):
        load_config(path)
    path, lines = write_config(tmp_path, model, batchsize="8")
    with pytest.raises(ConfigError, match=rf"{path}:{lines['batchsize']}: batchsize: unknown config key "
                                          r"\(did you mean 'batch_size'\?\)"):
        load_config(path)


def test_override_is_named_and_applied_before_validation(tmp_path, model):
    path, _ = write_config(tmp_path, model, lr="-1")
    assert load_config(path, ["lr=2e-5"]).lr == 2e-5  # the override fixes the file's value
    with pytest.raises(ConfigError, match=rf"^{path} \(--set extra_data.sizee=5\): extra_data.sizee: unknown key "
                                          r"\(did you mean 'size'\?\)"):
        load_config(path, ["lr=1e-5", "extra_data.sizee=5"])
    with pytest.raises(ConfigError, match=r"--set lr: expected key=value"):
        load_config(path, ["lr"])
    with pytest.raises(ConfigError, match=r"\(--set seeds=\[0,1\): seeds: expected a YAML value"):
        load_config(path, ["seeds=[0,1"])
    with pytest.raises(ConfigError, match=r"--set device=gpu: device: .*did you mean 'cuda'"):
        SweepConfig(models=["m"]).with_overrides(["device=gpu"])


def test_every_problem_of_a_file_on_one_line(tmp_path, model):
    path, lines = write_config(tmp_path, model, lr="-1", seeds="3", device="gpu")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert [p[0] for p in info.value.problems] == ["seeds", "lr", "device"]
    assert "\n" not in str(info.value) and f"{path}:{lines['device']}: device" in str(info.value)


def test_malformed_files_name_file_and_line(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("experiment: x\nlr: [1\n")
    with pytest.raises(YAMLLineError, match=rf"^{broken}:2: invalid YAML") as info:
        load_config(broken)
    assert "<unicode string>" not in str(info.value)
    listed = tmp_path / "list.yaml"
    listed.write_text("- lr: 1\n")
    with pytest.raises(ConfigError, match=rf"^{listed}:1: expected a mapping of config keys"):
        load_config(listed)
    toml = tmp_path / "c.toml"
    toml.write_text('experiment = "x"\nlr = -1\n')
    with pytest.raises(ConfigError, match=rf"^{toml}:2: lr: expected a number > 0"):
        load_config(toml)
    toml.write_text('experiment = "x"\nlr = \n')
    with pytest.raises(ConfigError, match=rf"^{toml}:2: invalid TOML"):
        load_config(toml)


def test_mixture_refuses_sizes_as_one_line_user_errors(model):
    from diagnostics.finetune import training_mixture

    config = SweepConfig(models=[{"name": "tiny", "path": str(model)}], languages=["en"], train_size=10**5)
    with pytest.raises(ConfigError, match=r"^train_size: expected at most \d+ \(the labelled pairs of rte:train"):
        training_mixture(config, "en")


def test_annotate_auto_detection_reports_the_real_problem(tmp_path):
    from diagnostics.annotate._io import read_input

    path = tmp_path / "pairs.jsonl"
    good = {"premise": "A man sleeps.", "hypothesis": "A man rests.", "idx": 0, "label": "entailment"}
    path.write_text(json.dumps(good) + "\n{not json\n")
    with pytest.raises(data.DataFormatError, match=rf"^{path}:2: expected one JSON object per line, found invalid"):
        read_input(path, "en")
    path.write_text(json.dumps({**good, "label": "yes"}) + "\n")
    with pytest.raises(data.DataFormatError, match=rf"^{path}:1: expected label in \{{entailment, not_entailment\}}"):
        read_input(path, "en")
