"""A registered dataset exported to Hugging Face datasets."""

from diagnostics import data


def test_to_hf_gives_dataset_dict():
    dd = data.to_hf("rte")
    assert set(dd) == {"train", "validation", "test"}
    assert dd["validation"].num_rows == 277
    assert dd["train"][0]["label"] in ("entailment", "not_entailment")
