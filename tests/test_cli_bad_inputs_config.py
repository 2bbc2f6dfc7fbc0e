"""Bad configs and data through the real command line: each is refused with one line naming the file (and line)
or the key, exit code 2, no traceback, and nothing written. ``sweep run --dry-run`` and the real run agree.
The commands run the app in this process; a missing config file goes through the real ``python -m diagnostics``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import assert_user_error, invoke_cli, run_cli
from _sweeps import stub_model_folder, write_line_config

PAIR = {"premise": "A man sleeps.", "hypothesis": "A man rests."}

# (id, config changes as YAML texts, extra arguments, names the error must contain). In names, {file} is the
# config file and {line:KEY} the line of KEY in it; {dir} is the test folder.
SWEEP_CASES = [
    ("malformed-yaml", {"__text__": "experiment: x\nlr: [1\n"}, [], ["{file}:2", "invalid YAML"]),
    ("set-nested-unknown-key", {}, ["--set", "extra_data.sizee=5"],
     ["{file} (--set extra_data.sizee=5)", "extra_data.sizee", "'size'"]),
    ("extra-data-unknown-dataset", {"extra_data": "{name: sik, size: 10}"}, [],
     ["{file}:{line:extra_data}", "extra_data.name", "'sick'"]),
    ("extra-eval-unknown-dataset", {"extra_eval": "{en: [axbb]}"}, [],
     ["{file}:{line:extra_eval}", "extra_eval.en[0]", "'axb'"]),
    ("missing-model-path", {"models": "[{name: tiny, path: {dir}/no-such-model}]"}, [],
     ["{file}:{line:models}", "models[0].path", "not available locally"]),
    ("train-size-zero", {"train_size": "0"}, [], ["{file}:{line:train_size}", "train_size", "found 0"]),
    ("train-size-negative-real-run", {"train_size": "-5"}, ["--real-run"], ["{file}:{line:train_size}", "found -5"]),
    ("device-enumeration", {"device": "gpu"}, [], ["{file}:{line:device}", "device", "'cuda'"]),
    ("precision-fp8", {"precision": "fp8"}, [], ["{file}:{line:precision}", "precision", "'fp8'"]),
    ("warmup-ratio", {"warmup_ratio": "7"}, [], ["{file}:{line:warmup_ratio}", "warmup_ratio", "[0, 1)"]),
    ("top-k-layers-above-model", {"train_top_k_layers": "50"}, [],
     ["{file}:{line:train_top_k_layers}", "train_top_k_layers", "at most 2"]),
    ("train-size-above-data", {"train_size": "5000"}, [], ["{file}:{line:train_size}", "at most 2490"]),
    ("extra-size-above-data-real-run", {"extra_data": "{name: sick, size: 100000}"}, ["--real-run"],
     ["{file}:{line:extra_data}", "extra_data.size", "at most 4439"]),
    ("negative-lr", {"lr": "-1"}, [], ["{file}:{line:lr}", "lr: expected a number > 0, found -1"]),
    ("dropout-above-one", {"dropout": "1.5"}, [], ["{file}:{line:dropout}", "dropout", "1.5"]),
    ("seeds-single-integer", {"seeds": "3"}, [], ["{file}:{line:seeds}", "seeds", "[3]"]),
    ("unknown-top-level-key", {"batchsize": "8"}, [], ["{file}:{line:batchsize}", "batchsize", "'batch_size'"]),
    ("data-unknown-nested-key", {"data": "{en: {trian: 'rte:train'}}"}, [],
     ["{file}:{line:data}", "data.en.trian", "'train'"]),
    ("presence-unknown-feature", {"presence": "{feature: Negatoin, share: 0.5}"}, [],
     ["{file}:{line:presence}", "presence.feature", "'Negation'"]),
    ("unknown-language", {"languages": "[eng]"}, [], ["{file}:{line:languages}", "'eng'", "'en'"]),
    ("unlabelled-training-file", {"data": "{en: {train: {name: rte_format, path: {dir}/unlabelled.jsonl}}}",
                                  "train_size": None}, [], ["{file}:{line:data}", "data.en.train", "without labels"]),
    ("misspelt-label-key-in-training-file",
     {"data": "{en: {train: {name: rte_format, path: {dir}/misspelt.jsonl}}}", "train_size": None}, [],
     ["{file}:{line:data}", "misspelt.jsonl:1", "'lable'", "'label'"]),
    ("override-invalid-yaml", {}, ["--set", "seeds=[0,1"], ["--set seeds=[0,1", "seeds"]),
    ("executor-option", {}, ["--executor", "gpu"], ["executor", "'gpu'"]),
]


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return stub_model_folder(tmp_path_factory.mktemp("model") / "tiny")


def write_config(folder: Path, model: Path, changes: dict) -> tuple[Path, dict[str, int]]:
    """A one-key-per-line YAML config with ``changes`` (``{dir}``: the test folder; ``__text__``: the whole file
    instead) and its key lines."""
    path = folder / "sweep.yaml"
    if "__text__" in changes:
        path.write_text(changes["__text__"])
        return path, {}
    changes = {k: None if v is None else v.replace("{dir}", str(folder)) for k, v in changes.items()}
    return path, write_line_config(path, model, changes)


def write_training_files(folder: Path) -> None:
    lines = [json.dumps({**PAIR, "idx": i}) for i in range(3)]
    (folder / "unlabelled.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "misspelt.jsonl").write_text(json.dumps({**PAIR, "idx": 0, "lable": "entailment"}) + "\n")


def names_in(names: list[str], path: Path, lines: dict[str, int], folder: Path) -> list[str]:
    out = []
    for name in names:
        for key, line in lines.items():
            name = name.replace(f"{{line:{key}}}", str(line))
        out.append(name.replace("{file}", str(path)).replace("{dir}", str(folder)))
    return out


def _run_case(folder: Path, model: Path, changes: dict, args: list[str]):
    write_training_files(folder)
    path, lines = write_config(folder, model, changes)
    mode = [] if "--real-run" in args else ["--dry-run"]
    result = invoke_cli("sweep", "run", path, *mode, *(a for a in args if a != "--real-run"), cwd=folder)
    return result, path, lines


@pytest.fixture(scope="module")
def sweep_results(request, tmp_path_factory, model) -> dict:
    """The selected cases of :func:`test_sweep_run_refuses_bad_config`, run once for the module."""
    selected = {item.callspec.params["case"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_sweep_run_refuses_bad_config"}
    cases = {case[0]: case for case in SWEEP_CASES if case[0] in selected}
    folders = {name: tmp_path_factory.mktemp(name) for name in cases}
    return {name: (*_run_case(folders[name], model, case[1], case[2]), folders[name]) for name, case in cases.items()}


@pytest.mark.parametrize("case", [case[0] for case in SWEEP_CASES])
def test_sweep_run_refuses_bad_config(sweep_results, case):
    result, path, lines, folder = sweep_results[case]
    names = next(c[3] for c in SWEEP_CASES if c[0] == case)
    assert_user_error(result, *names_in(names, path, lines, folder))
    assert not (folder / "runs").exists()


def test_toml_config_names_file_and_line(tmp_path, model):
    path = tmp_path / "sweep.toml"
    path.write_text(f'experiment = "s"\nlr = -1\nmodels = [{{name = "tiny", path = "{model}"}}]\n'
                    f'output_dir = "{tmp_path / "runs"}"\n')
    assert_user_error(invoke_cli("sweep", "run", path, "--dry-run", cwd=tmp_path), f"{path}:2", "lr")
    assert not (tmp_path / "runs").exists()


def test_missing_config_file_is_named(tmp_path):
    assert_user_error(run_cli("sweep", "run", tmp_path / "nope.yaml", "--dry-run", cwd=tmp_path), "nope.yaml")


def test_finished_run_with_other_settings_is_one_line(tmp_path, model):
    path, _ = write_config(tmp_path, model, {})
    run = tmp_path / "runs" / "s" / "en" / "tiny" / "seed=0"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"run": {"run_hash": "0" * 16}, "sweep": {"lr": 0.5}}))
    (run / "DONE").write_text("{}")
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "runs").rglob("*"))
    result = invoke_cli("sweep", "run", path, "--dry-run", cwd=tmp_path)  # the real run: test_pipeline_plan
    assert_user_error(result, str(path), "other settings", "lr: 0.5 -> 1e-05")
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "runs").rglob("*")) == before


def test_data_validate_names_a_misspelt_label_key(tmp_path):
    write_training_files(tmp_path)
    result = invoke_cli("data", "validate", tmp_path / "misspelt.jsonl", "--kind", "rte", cwd=tmp_path)
    assert_user_error(result, f"{tmp_path / 'misspelt.jsonl'}:1", "'lable'", "did you mean 'label'")


@pytest.mark.parametrize("content, output, names", [
    ('{"premise": "a", "hypothesis": "b", "idx": 0, "label": "entailment"}\n{not json\n', "out.jsonl",
     [":2:", "invalid JSON"]),
    ('{"premise": "a", "hypothesis": "b", "idx": 0, "label": "entailment"}\n', "out.txt", ["out.txt", ".jsonl"]),
], ids=["auto-kind-reports-invalid-json-line", "unknown-output-extension"])
def test_annotate_run_refuses_and_writes_nothing(tmp_path, content, output, names):
    source = tmp_path / "pairs.jsonl"
    source.write_text(content)
    result = invoke_cli("annotate", "run", source, tmp_path / output, "--lang", "en", "--no-progress", cwd=tmp_path)
    assert_user_error(result, *names)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.jsonl"]


def test_pipeline_refuses_a_bad_sweep_override_before_anything_runs(tmp_path):
    result = invoke_cli("pipeline", "--scale", "demo", "--runs", tmp_path / "runs", "--out", tmp_path / "report",
                     "--set", "lr=-1", cwd=tmp_path)
    assert_user_error(result, "demo.yaml (--set lr=-1)", "lr: expected a number > 0, found -1")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "report").exists()


# (id, --set overrides of `pipeline --scale paper --dry-run`, names the one error line must contain)
PIPELINE_CASES = [
    ("extra-sizes-not-integers", ["extra_sizes=[1k]"], ["--set extra_sizes=[1k]", "extra_sizes[0]", "'1k'"]),
    ("extra-languages-unknown-code", ["extra_languages=[en, rus]"],
     ["--set extra_languages=[en, rus]", "extra_languages[1]", "'rus'", "did you mean 'ru'"]),
    ("inference-precision-unsupported", ["inference_precision=fp8"],
     ["--set inference_precision=fp8", "inference_precision", "fp32, bf16", "'fp8'"]),
    ("sweep-precision-unsupported", ["precision=fp8"], ["paper.yaml (--set precision=fp8)", "precision", "'fp8'"]),
    ("unknown-setting", ["extra_sizez=[1000]"], ["--set extra_sizez=[1000]", "did you mean 'extra_sizes'"]),
    ("wrong-type-and-choice-together", ["n_boot=many", "score_missing=maybe"],
     ["--set n_boot=many", "n_boot: expected an integer", "--set score_missing=maybe", "skip"]),
]


@pytest.fixture(scope="module")
def pipeline_results(request, tmp_path_factory) -> dict:
    """The selected cases of :func:`test_pipeline_refuses_bad_settings`, run once for the module."""
    selected = {item.callspec.params["case"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_pipeline_refuses_bad_settings"}
    cases = {case[0]: case for case in PIPELINE_CASES if case[0] in selected}
    folders = {name: tmp_path_factory.mktemp(name) for name in cases}

    def run(name):
        sets = [item for value in cases[name][1] for item in ("--set", value)]
        return invoke_cli("pipeline", "--scale", "paper", "--runs", folders[name] / "runs", "--dry-run", *sets,
                       cwd=folders[name])

    return {name: (run(name), folders[name]) for name in cases}


@pytest.mark.parametrize("case", [case[0] for case in PIPELINE_CASES])
def test_pipeline_refuses_bad_settings(pipeline_results, case):
    result, folder = pipeline_results[case]
    assert_user_error(result, *next(c[2] for c in PIPELINE_CASES if c[0] == case))
    assert not (folder / "runs").exists() and not result.stdout


def test_pipeline_setting_in_a_config_file_is_named_with_its_line(tmp_path, monkeypatch):
    from diagnostics.core.resources import configs_dir
    from diagnostics.finetune import ConfigError
    from diagnostics.pipeline import ScalePlan

    config = tmp_path / "demo.yaml"
    config.write_text((configs_dir() / "demo.yaml").read_text() + "\npipeline:\n  set:\n    seeds: [0]\n"
                      "    extra_sizes: [1k]\n")
    line = len(config.read_text().splitlines())
    monkeypatch.setattr("diagnostics.pipeline._scale_plan.configs_dir", lambda: tmp_path)
    with pytest.raises(ConfigError) as err:
        ScalePlan.resolve("demo", tmp_path / "runs")
    assert str(err.value) == f"{config}:{line}: extra_sizes[0]: expected an integer, found '1k'"
