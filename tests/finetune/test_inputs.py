"""A run's data in ``_inputs``: the training mixture and every evaluation set of its language, tokenised by the
model's own tokenizer (checked against a direct call of that tokenizer); with ``train_top_k_layers``, the hidden
states of the frozen layers instead, computed once and then read from the feature cache."""

import pandas as pd

from diagnostics.finetune import SweepConfig
from diagnostics.finetune._batching import encode_pairs
from diagnostics.finetune._inputs import _frozen_features, prepare_inputs
from diagnostics.models import load_tokenizer


def _config(tiny_model_dir, **changes):
    values = dict(models=[{"name": "tiny", "path": str(tiny_model_dir)}], languages=["en"], train_size=16,
                  max_seq_length=24, eval_batch_size=256)
    return SweepConfig(**(values | changes))


def test_every_set_is_tokenised_by_the_models_tokenizer(tiny_model_dir, tmp_path):
    run = prepare_inputs(_config(tiny_model_dir), "en", tiny_model_dir, tmp_path, device="cpu", amp=None, show=False)
    assert len(run.train_frame) == 16 and "validation" in run.eval_frames
    assert set(run.inputs) == {"train", *run.eval_frames}
    for name, frame in [("train", run.train_frame), *run.eval_frames.items()]:
        assert len(run.inputs[name].input_ids) == len(frame), name
    row = run.train_frame.iloc[3]
    expected = run.tokenizer(str(row["premise"]), str(row["hypothesis"]), truncation=True, max_length=24)
    assert run.inputs["train"].input_ids[3] == expected["input_ids"]
    assert run.features_computed_s == 0.0


def test_top_k_training_reads_frozen_features_computed_once(tiny_model_dir, tmp_path):
    config = _config(tiny_model_dir, train_top_k_layers=1)
    tokenizer = load_tokenizer(tiny_model_dir)
    frame = pd.DataFrame({"premise": ["A man sleeps.", "Two dogs run in a park."] * 3,
                          "hypothesis": ["A man rests.", "Animals are outside.", "Nobody sleeps."] * 2})
    encoded = {"train": encode_pairs(tokenizer, frame.head(4), 24), "validation": encode_pairs(tokenizer, frame, 24)}
    first, seconds = _frozen_features(config, encoded, tiny_model_dir, tmp_path, "cpu", None, False)
    assert seconds > 0 and {name: len(f) for name, f in first.items()} == {"train": 4, "validation": 6}
    assert not hasattr(first["train"], "input_ids")  # hidden states, not token ids
    again, seconds = _frozen_features(config, encoded, tiny_model_dir, tmp_path, "cpu", None, False)
    assert seconds == 0.0
    for name in first:
        a, b = first[name].batch([0, 1]), again[name].batch([0, 1])
        assert a.keys() == b.keys() and all(bool((a[k] == b[k]).all()) for k in a), name
