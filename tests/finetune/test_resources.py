"""MOROCCO resource figures of a run: the stored protocol measurement each run finds, and the training figures a run
records under their own names (the measurement itself is tested in tests/models/test_measure.py)."""

from __future__ import annotations

import json
import math

import pytest

from _measurements import tiny_measurement

from diagnostics.finetune._resources import protocol_figures
from diagnostics.models._measure import Measurement, load_measurement, save_measurement


@pytest.fixture(scope="module")
def measured(tiny_model_dir):
    return tiny_measurement(tiny_model_dir)


def test_stored_measurement_gives_each_run_its_fitness(measured, tiny_model_dir, tmp_path):
    missing = protocol_figures(tiny_model_dir, "en", "cpu", tmp_path, 0.6)
    assert missing["fitness"] is None and missing["morocco"]["measured"] is False
    assert "diagnostics models measure" in missing["morocco"]["reason"]
    # a measurement with the protocol's settings, stored in the run store, is what runs find
    protocol = Measurement.from_dict(measured.to_dict() | {"records": 2000, "batch_size": 32, "repeats": 5})
    path = save_measurement(protocol, tmp_path)
    assert path.is_file() and json.loads(path.read_text())["fitness"] is None  # Q belongs to each run
    assert load_measurement(tmp_path, tiny_model_dir, dataset="axb").throughput == protocol.throughput
    found = protocol_figures(tiny_model_dir, "en", "cpu", tmp_path, 0.6)
    assert found["morocco"]["measured"] and not found["morocco"]["measured_now"]
    assert found["fitness"] == pytest.approx(0.6 * protocol.throughput / math.log(protocol.peak_memory_bytes))
    assert protocol_figures(tiny_model_dir, "xx", "cpu", tmp_path, 0.6)["fitness"] is None


def test_a_run_records_the_training_figures_under_their_own_names(tiny_model_dir, measured, tmp_path):
    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._run_spec import RunSpec, spec_dict
    from diagnostics.finetune._train import train_run

    cfg = SweepConfig(output_dir=str(tmp_path / "runs"), experiment="t", models=[{"name": "tiny",
                                                                                  "path": str(tiny_model_dir)}],
                      languages=["en"], seeds=[0], train_size=48, max_seq_length=32, batch_size=16, lr=1e-3,
                      max_epochs=1, warmup_ratio=0.0, num_threads=1, progress=False)
    save_measurement(Measurement.from_dict(measured.to_dict() | {"records": 2000, "batch_size": 32, "repeats": 5}),
                     cfg.output_dir)
    outcome = train_run(RunSpec(cfg.to_dict(), "en", spec_dict(cfg.models[0]), 0))
    res = outcome["metrics"]["resources"]
    for key in ("train_peak_memory_mib", "train_peak_rss_mib", "fitness_train_mib"):
        assert res[key] > 0, key
    assert "peak_memory_mib" not in res
    quality = outcome["metrics"]["best"]["validation_accuracy"]
    assert res["morocco"]["peak_memory_bytes"] == measured.peak_memory_bytes
    assert res["fitness"] == pytest.approx(quality * measured.throughput / math.log(measured.peak_memory_bytes))
