"""MOROCCO resource figures: fitness from bytes, the measurement protocol, and what a run records."""

from __future__ import annotations

import json
import math
import statistics
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics.finetune._resources import fitness_mib, protocol_figures
from diagnostics.models import _measure as measure
from diagnostics.models._measure import (Measurement, fitness, load_measurement, measure_model, protocol_pairs,
                                        save_measurement)


def test_fitness_uses_bytes():
    assert fitness(0.8, 100.0, 2**30) == pytest.approx(0.8 * 100.0 / (30 * math.log(2)))
    assert fitness(0.5, 10.0, 1e6) == pytest.approx(5.0 / math.log(1e6))
    assert fitness(None, 10.0, 1e6) is None and fitness(0.5, None, 1e6) is None and fitness(0.5, 10.0, 1) is None


def test_mib_and_bytes_can_order_two_models_differently():
    # a small slow model and a large fast one, equal quality
    small = {"quality": 0.6, "throughput": 100.0, "bytes": 2 * 2**20}
    large = {"quality": 0.6, "throughput": 300.0, "bytes": 1000 * 2**20}
    by_mib = {name: fitness_mib(m["quality"], m["throughput"], m["bytes"] / 2**20)
              for name, m in (("small", small), ("large", large))}
    by_bytes = {name: fitness(m["quality"], m["throughput"], m["bytes"]) for name, m in (("small", small),
                                                                                         ("large", large))}
    assert by_mib["small"] > by_mib["large"]  # 60/ln 2 = 86.6 > 180/ln 1000 = 26.1
    assert by_bytes["small"] < by_bytes["large"]  # 60/ln(2^21) = 4.1 < 180/ln(1000 * 2^20) = 8.7
    # the log base, by contrast, never reorders: it rescales every fitness by the same factor
    by_log10 = {name: m["quality"] * m["throughput"] / math.log10(m["bytes"]) for name, m in (("small", small),
                                                                                              ("large", large))}
    assert by_log10["small"] < by_log10["large"]
    assert by_log10["small"] / by_bytes["small"] == pytest.approx(by_log10["large"] / by_bytes["large"])


def test_records_are_cycled_to_n():
    frame = pd.DataFrame({"premise": ["a", "b", "c"], "hypothesis": ["x", "y", "z"]})
    assert protocol_pairs(frame, 7) == [("a", "x"), ("b", "y"), ("c", "z"), ("a", "x"), ("b", "y"), ("c", "z"),
                                        ("a", "x")]
    with pytest.raises(ValueError, match="premise"):
        protocol_pairs(frame.drop(columns="premise"), 2)


@pytest.fixture(scope="module")
def measured(tiny_model_dir):
    return measure_model(tiny_model_dir, language="en", records=40, batch_size=16, repeats=3, quality=0.7)


def test_measurement_reports_medians_of_the_repeats_with_n_records_at_the_batch_size(measured):
    reps = measured.repetitions
    assert measured.repeats == 3 and len(reps) == 3
    assert all(r["records"] == 40 and r["batches"] == 3 and r["largest_batch"] == 16 for r in reps)
    assert measured.records == 40 and measured.batch_size == 16 and measured.dataset == "axb"
    assert measured.throughput == statistics.median(r["throughput"] for r in reps)
    assert measured.init_s == statistics.median(r["init_s"] for r in reps)
    assert measured.peak_memory_bytes == round(statistics.median(r["peak_memory_bytes"] for r in reps))
    assert measured.memory_kind == "rss_increase" and measured.peak_memory_bytes > 0
    for r in reps:
        assert r["throughput"] == pytest.approx(r["records"] / r["inference_s"])
        assert r["total_s"] == pytest.approx(r["init_s"] + r["inference_s"])
    assert measured.fitness == pytest.approx(0.7 * measured.throughput / math.log(measured.peak_memory_bytes))


def test_throughput_leaves_the_initialisation_time_out(tiny_model_dir, monkeypatch):
    load = measure._load_model

    def slow_load(folder, device):
        time.sleep(0.3)
        return load(folder, device)

    monkeypatch.setattr(measure, "_load_model", slow_load)
    result = measure_model(tiny_model_dir, language="ru", records=16, batch_size=8, repeats=2)
    assert result.dataset == "lidirus" and result.init_s >= 0.3
    for r in result.repetitions:
        assert r["init_s"] >= 0.3 and r["inference_s"] == pytest.approx(r["total_s"] - r["init_s"])
        assert r["throughput"] == pytest.approx(16 / (r["total_s"] - r["init_s"]))
        assert r["throughput"] > 16 / r["total_s"]
    assert result.fitness is None  # no quality given


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


@pytest.mark.slow
def test_cli_measure_prints_json_and_reports_bad_options_in_one_line(tiny_model_dir, tmp_path):
    from diagnostics.cli import app

    result = CliRunner().invoke(app, ["models", "measure", str(tiny_model_dir), "--records", "12", "--batch-size",
                                      "8", "--repeats", "3", "--quality", "0.5", "--json", "--store",
                                      str(tmp_path)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["records"] == 12 and payload["batch_size"] == 8 and len(payload["repetitions"]) == 3
    assert payload["fitness"] == pytest.approx(0.5 * payload["throughput"] / math.log(payload["peak_memory_bytes"]))
    assert load_measurement(tmp_path, tiny_model_dir, dataset="axb", records=12, batch_size=8, repeats=3)
    bad = CliRunner().invoke(app, ["models", "measure", str(tiny_model_dir), "--repeats", "0"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "repeats" in bad.output
