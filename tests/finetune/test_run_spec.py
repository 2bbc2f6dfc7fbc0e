"""A run's coordinates in ``_run_spec``: the sweep and the model rebuilt from the plain dicts a worker receives,
the run's folder in the store, its printed name, and that a spec survives pickling (how executors send it)."""

import pickle

from diagnostics.finetune import ModelSpec, SweepConfig, run_dir
from diagnostics.finetune._run_spec import RunSpec, spec_dict


def _spec(tmp_path, name="org/bert base", seed=2):
    config = SweepConfig(output_dir=str(tmp_path), experiment="x", lr=3e-5)
    return RunSpec(config.to_dict(), "ru", spec_dict(ModelSpec(name=name, pretrain_seed=4)), seed)


def test_the_sweep_and_the_model_are_rebuilt_from_the_dicts(tmp_path):
    spec = _spec(tmp_path)
    assert spec.sweep == SweepConfig(output_dir=str(tmp_path), experiment="x", lr=3e-5)
    assert spec.model_spec == ModelSpec(name="org/bert base", pretrain_seed=4)
    assert spec.model == {"name": "org/bert base", "path": None, "pretrain_seed": 4}


def test_the_folder_and_the_name_use_the_models_slug(tmp_path):
    spec = _spec(tmp_path)
    assert spec.path == run_dir(tmp_path, "x", "ru", "org__bert__base", 2)
    assert spec.path == tmp_path / "x" / "ru" / "org__bert__base" / "seed=2"
    assert spec.describe() == "ru/org__bert__base/seed=2"


def test_a_spec_survives_pickling(tmp_path):
    spec = _spec(tmp_path)
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and again.path == spec.path
