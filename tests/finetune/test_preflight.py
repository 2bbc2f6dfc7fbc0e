"""What the machine lacks, found by ``_preflight`` before anything runs: a model that is not available, more layers
or tokens than the model has, more training or extra pairs than the data holds, a user dataset without its file, a
training file without labels; each named with the file and line of its key."""

import json
from pathlib import Path

import pytest

from diagnostics import data
from diagnostics.finetune import ConfigError, load_config

from _sweeps import stub_model_folder
from _sweeps import write_keyed_config as write_config


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return stub_model_folder(tmp_path_factory.mktemp("model") / "tiny")


def test_inputs_are_checked_before_anything_runs(tmp_path, model):
    missing = tmp_path / "no-such-model"
    path, lines = write_config(tmp_path, model, models=f"[{{name: tiny, path: {missing}}}]")
    config = load_config(path)  # the file is valid; the machine lacks the model
    with pytest.raises(ConfigError, match=rf"^{path}:{lines['models']}: models\[0\].path: model 'tiny' is not "
                                          "available locally"):
        config.check_inputs()
    path, lines = write_config(tmp_path, model, train_top_k_layers="50", max_seq_length="1024")
    with pytest.raises(ConfigError) as info:
        load_config(path).check_inputs()
    assert f"{path}:{lines['train_top_k_layers']}: train_top_k_layers: expected at most 2 (the layers of model " \
           "'tiny'), found 50" in str(info.value)
    assert f"{path}:{lines['max_seq_length']}: max_seq_length: expected at most 512" in str(info.value)
    rte = len(data.load("rte", "train"))
    path, lines = write_config(tmp_path, model, train_size="5000", extra_data="{name: sick, size: 100000}")
    with pytest.raises(ConfigError) as info:
        load_config(path).check_inputs()
    assert f"{path}:{lines['train_size']}: train_size: expected at most {rte} (the labelled pairs of rte:train " \
           "(en)), found 5000" in str(info.value)
    assert "extra_data.size: expected at most 4439" in str(info.value)
    path, lines = write_config(tmp_path, model, extra_data="{name: mnli, size: 10, split: null}")
    with pytest.raises(ConfigError, match="extra_data.path: expected a file for the user-supplied dataset 'mnli'"):
        load_config(path).check_inputs()
    path, _ = write_config(tmp_path, model)
    load_config(path).check_inputs()  # a good config passes


def test_unlabelled_or_misspelt_training_file_is_refused(tmp_path, model):
    pair = {"premise": "A man sleeps.", "hypothesis": "A man rests."}
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text("".join(json.dumps({**pair, "idx": i}) + "\n" for i in range(3)))
    ref = f"{{name: rte_format, path: {unlabelled}, language: en}}"
    path, lines = write_config(tmp_path, model, data=f"{{en: {{train: {ref}}}}}", train_size=None)
    with pytest.raises(ConfigError, match=rf"^{path}:{lines['data']}: data.en.train: expected a labelled train set, "
                                          r"found 3 pairs without labels"):
        load_config(path).check_inputs()
    misspelt = tmp_path / "misspelt.jsonl"
    misspelt.write_text(json.dumps({**pair, "idx": 0, "lable": "entailment"}) + "\n")
    with pytest.raises(data.DataFormatError, match=rf"^{misspelt}:1: expected field 'label', found no 'label' but "
                                                   r"an unknown key 'lable'; did you mean 'label'\?"):
        data.load("rte_format", path=misspelt)
