"""Which runs train together in ``_grouping``: the training key (equal across the per-run settings, different for a
setting that shapes a step or another model), how pending runs are cut into jobs per executor, and the memory
estimate behind ``fuse: auto`` (its parameter count against a real BERT's)."""

import pytest

from diagnostics.finetune import ModelSpec, SweepConfig
from diagnostics.finetune._grouping import (JOB_ROUNDS, PER_RUN_SETTINGS, auto_group_size, group_jobs,
                                            run_memory_bytes, training_key)
from diagnostics.finetune._run_spec import RunSpec, spec_dict


def test_runs_differing_only_in_per_run_settings_share_a_key():
    assert {"experiment", "train_size", "seeds"} <= PER_RUN_SETTINGS
    a = SweepConfig(experiment="a", train_size=100, seeds=[0])
    b = SweepConfig(experiment="b", train_size=500, seeds=[1, 2])
    assert training_key(a) == training_key(b)


def test_a_step_setting_or_another_model_gives_another_key():
    config = SweepConfig()
    assert training_key(config) != training_key(config.with_overrides(["batch_size=8"]))
    assert training_key(config) != training_key(config.with_overrides(["lr=1e-3"]))
    model = ModelSpec(name="m")
    assert training_key(config, model) != training_key(config, ModelSpec(name="m", pretrain_seed=1))
    assert training_key(config, model) == training_key(config, ModelSpec(name="m"))


def _todo(seeds, batch_size=16, model="m"):
    config = SweepConfig(batch_size=batch_size)
    return [(config, RunSpec(config.to_dict(), "en", spec_dict(ModelSpec(name=model)), seed)) for seed in seeds]


def _seeds(jobs):
    return [[(spec.model["name"], spec.seed) for spec in job] for job in jobs]


def test_one_slot_makes_every_run_a_job_of_its_own():
    assert _seeds(group_jobs(_todo(range(3)), lambda config, specs: 1)) == [[("m", 0)], [("m", 1)], [("m", 2)]]


def test_in_process_a_group_is_one_job_and_other_keys_are_other_jobs():
    todo = _todo([0, 1]) + _todo([2], model="n") + _todo([3, 4])
    assert _seeds(group_jobs(todo, lambda config, specs: 2)) == [[("m", 0), ("m", 1), ("m", 3), ("m", 4)],
                                                               [("n", 2)]]
    todo = _todo([0, 1]) + _todo([2, 3], batch_size=8)
    assert _seeds(group_jobs(todo, lambda config, specs: 2)) == [[("m", 0), ("m", 1)], [("m", 2), ("m", 3)]]


def test_other_executors_cut_a_group_into_jobs_of_four_rounds_of_slots():
    assert JOB_ROUNDS == 4
    jobs = group_jobs(_todo(range(19)), lambda config, specs: 2, executor="pool")
    assert [len(job) for job in jobs] == [8, 8, 3]
    assert [spec.seed for job in jobs for spec in job] == list(range(19))


@pytest.fixture(scope="module")
def bert_config_dir(tmp_path_factory):
    from transformers import BertConfig

    folder = tmp_path_factory.mktemp("bert")
    BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
               max_position_embeddings=128).save_pretrained(folder)
    return folder


def test_the_memory_estimate_counts_the_parameters_of_the_model(bert_config_dir):
    from transformers import BertConfig, BertModel

    real = sum(p.numel() for p in BertModel(BertConfig.from_pretrained(bert_config_dir)).parameters())
    config = SweepConfig(batch_size=4, max_seq_length=32)
    # 4 bytes of weights, plus 12 of gradient and two moments per trainable parameter; activations do not change
    counted = (run_memory_bytes(bert_config_dir, config) - run_memory_bytes(bert_config_dir, config, 0.0)) / 12
    assert counted == pytest.approx(real, rel=0.01)
    more = run_memory_bytes(bert_config_dir, config.with_overrides(["batch_size=8"]))
    assert more > run_memory_bytes(bert_config_dir, config)


def test_auto_on_a_cpu_is_one_run_a_group(bert_config_dir):
    assert auto_group_size(bert_config_dir, SweepConfig(), "cpu", runs=10) == 1
