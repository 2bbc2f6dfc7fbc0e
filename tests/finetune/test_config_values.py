"""The values of sweep settings in ``_config_values``: seeds as a list or an inclusive range, ``fuse``, dataset
references and their splits, languages and seeds listed once, models with distinct folder names, the executors' own
options; each problem named with its key (and, from a file, its line) and a suggestion where one fits."""

from pathlib import Path

import pytest

from diagnostics.finetune import ConfigError, ModelSpec, load_config
from diagnostics.finetune._config_values import (executor_options_problems, listed_once, models_problems, read_fuse,
                                                 read_seeds, ref_problems)
from diagnostics.settings import Bad

from _sweeps import stub_model_folder
from _sweeps import write_keyed_config as write_config


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return stub_model_folder(tmp_path_factory.mktemp("model") / "tiny")


@pytest.mark.parametrize("key, text, needle", [
    ("extra_data", "{name: sik, size: 10}", r"extra_data.name: expected a registered dataset, found 'sik' "
                                             r"\(did you mean 'sick'\?\)"),
    ("extra_eval", "{en: [axbb]}", r"extra_eval.en\[0\]: expected a registered dataset, found 'axbb' "
                                    r"\(did you mean 'axb'\?\)"),
    ("extra_eval", "{eng: [axb]}", r"extra_eval.eng: expected a language .*did you mean 'en'"),
    ("data", "{en: {train: 'rte:trian'}}", r"data.en.train: expected a split of rte .*did you mean 'train'"),
    ("data", "{en: {train: {name: rte_fromat, path: x.jsonl}}}", r"data.en.train.name: .*'rte_format'"),
    ("presence", "{feature: Negatoin, share: 0.5}", r"presence.feature: .*did you mean 'Negation'"),
    ("presence", "{feature: Negation, share: 1.5}", r"presence.share: expected a number in \[0, 1\], found 1.5"),
    ("presence", "{feature: Negation, share: 0.5, within: extra}", r"presence.within: expected extra_data"),
    ("languages", "[eng]", r"languages: unknown language 'eng' \(did you mean 'en'\?\)"),
    ("languages", "[en, en]", r"languages: expected each language once"),
    ("seeds", "[0, 0]", r"seeds: expected each seed once"),
    ("experiment", "a/b", r"experiment: expected a folder name"),
    ("executor_options", "{threads_per_worker: 0}", r"executor_options.threads_per_worker: expected an integer"),
])
def test_names_and_references_are_checked_when_loaded(tmp_path, model, key, text, needle):
    path, lines = write_config(tmp_path, model, **{key: text})
    with pytest.raises(ConfigError, match=rf"^{path}:{lines[key]}: {needle}"):
        load_config(path)


def test_seeds_syntax(tmp_path, model):
    path, lines = write_config(tmp_path, model, seeds="0-5")
    assert load_config(path).seeds == [0, 1, 2, 3, 4, 5]  # an inclusive range
    assert load_config(path).run_hash() == load_config(path, ["seeds=[0,1,2,3,4,5]"]).run_hash()
    assert load_config(path, ["seeds=2-2"]).seeds == [2]
    path, lines = write_config(tmp_path, model, seeds="3")
    with pytest.raises(ConfigError, match=rf"^{path}:{lines['seeds']}: seeds: expected a list of seeds, found the "
                                          r"single number 3; write \[3\] for seed 3 alone, 0-2 or \[0, 1, 2\]"):
        load_config(path)
    for text, needle in (("5-2", "low <= high"), ("abc", r"a list of seeds \(\[0, 1, 2\]\) or a range \(0-2\)")):
        path, _ = write_config(tmp_path, model, seeds=text)
        with pytest.raises(ConfigError, match=needle):
            load_config(path)


def test_the_executors_own_options_are_checked_with_the_config():
    from diagnostics.finetune import SweepConfig

    with pytest.raises(ConfigError) as caught:
        SweepConfig(executor_options={"poll_s": 0, "lost_job_grace_s": -1, "requeue": "yes"})
    assert str(caught.value) == ("executor_options.poll_s: expected a number of seconds > 0, found 0; "
                                 "executor_options.lost_job_grace_s: expected a number of seconds >= 0, found -1; "
                                 "executor_options.requeue: expected true or false, found 'yes'")
    SweepConfig(executor_options={"poll_s": 0.5, "lost_job_grace_s": 0, "requeue": True})
    for name in ("poll_s", "lost_job_grace_s"):  # YAML's .nan / .inf: a wait that never ends or never polls
        for value in (float("nan"), float("inf")):
            with pytest.raises(ConfigError, match=f"executor_options.{name}: expected a number of seconds"):
                SweepConfig(executor_options={name: value})


def test_seeds_read_as_a_list_or_an_inclusive_range():
    assert read_seeds([3, 1], "seeds") == [3, 1] and read_seeds("2-4", "seeds") == [2, 3, 4]
    assert read_seeds(range(2), "seeds") == [0, 1]
    with pytest.raises(Bad, match=r"found the single number 3; write \[3\] for seed 3 alone, 0-2 or \[0, 1, 2\]"):
        read_seeds(3, "seeds")
    for bad in ([0, True], [0, -1], [0, 1.5]):
        with pytest.raises(Bad) as info:
            read_seeds(bad, "seeds")
        assert info.value.key == "seeds[1]" and "an integer >= 0" in info.value.message


def test_fuse_is_an_integer_of_at_least_one_or_auto():
    assert read_fuse("AUTO", "fuse") == "auto" and read_fuse("3", "fuse") == 3 and read_fuse(1, "fuse") == 1
    for bad in (0, True, "two", 1.5):
        with pytest.raises(Bad, match="expected an integer >= 1 or auto"):
            read_fuse(bad, "fuse")


def test_a_list_of_the_grid_is_not_empty_and_names_what_repeats():
    check = listed_once("seed")
    assert check([0, 1], "seeds") == []
    assert check([], "seeds") == [("seeds", "expected at least one seed, found none")]
    assert check([2, 0, 2, 1, 0], "seeds") == [("seeds", "expected each seed once, found 0, 2 repeated")]


def test_two_models_whose_names_make_one_folder_are_refused():
    assert ModelSpec(name="org/bert").slug == "org__bert" and ModelSpec(name="/").slug == "model"
    assert models_problems([ModelSpec(name="a"), ModelSpec(name="b")], "models") == []
    assert models_problems([], "models") == [("models", "expected at least one model, found none")]
    problems = models_problems([ModelSpec(name="org/bert"), ModelSpec(name="org__bert")], "models")
    assert len(problems) == 1 and "distinct names" in problems[0][1]


def test_a_reference_is_checked_for_its_shape_name_and_split():
    assert ref_problems("rte:train", "r") == [] and ref_problems({"name": "rte", "split": "train"}, "r") == []
    assert ref_problems({"name": "mnli", "path": "x.jsonl", "split": "nope"}, "r") == []  # a user copy: any split
    [(key, message)] = ref_problems("rte:trian", "r")
    assert key == "r" and "expected a split of rte" in message and "did you mean 'train'" in message
    [(key, message)] = ref_problems({"name": "rte", "splt": "train"}, "r")
    assert key == "r.splt" and "did you mean 'split'" in message
    [(key, message)] = ref_problems(5, "r")
    assert key == "r" and "expected a dataset 'name[:split]' or a mapping" in message


def test_executor_options_are_checked_one_by_one():
    assert executor_options_problems({"threads_per_worker": 2, "cluster": "local", "poll_s": 0.1,
                                      "lost_job_grace_s": 0, "requeue": False}, "o") == []
    problems = executor_options_problems({"threads_per_worker": True, "cluster": "slurmm", "poll_s": -1}, "o")
    assert [key for key, _ in problems] == ["o.threads_per_worker", "o.cluster", "o.poll_s"]
    assert "did you mean 'slurm'" in problems[1][1]
