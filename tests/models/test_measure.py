"""``diagnostics.models._measure``: the MOROCCO measurement protocol of a model folder — fitness from bytes, the
records cycled to ``N``, medians over the repetitions with the initialisation left out of the throughput, the
bundled set of each language, and the measurement stored in a run store under its settings."""

from __future__ import annotations

import json
import math
import shutil
import statistics
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from _measurements import tiny_measurement

from diagnostics.finetune._resources import fitness_mib
from diagnostics.models import _measure as measure
from diagnostics.models._measure import (Measurement, default_dataset, fitness, load_measurement, measure_model,
                                        measurement_path, protocol_pairs, save_measurement)


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
    return tiny_measurement(tiny_model_dir)


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


def test_records_need_both_sentences_a_positive_count_and_a_row():
    frame = pd.DataFrame({"premise": ["a"], "hypothesis": ["x"]})
    assert protocol_pairs(frame, 1) == [("a", "x")]
    with pytest.raises(ValueError, match=">= 1"):
        protocol_pairs(frame, 0)
    with pytest.raises(ValueError, match="no records"):
        protocol_pairs(frame.iloc[:0], 3)
    with pytest.raises(ValueError, match="hypothesis"):
        protocol_pairs(frame.drop(columns="hypothesis"), 1)


def test_each_language_measures_on_its_bundled_diagnostic_set():
    assert default_dataset("en") == "axb" and default_dataset("ru") == "lidirus"
    with pytest.raises(ValueError, match="no bundled diagnostic set for language 'xx'.*en"):
        default_dataset("xx")


def _by_hand(folder) -> Measurement:
    return Measurement(folder=str(folder), dataset="axb", records=2000, batch_size=32, repeats=5, device="cpu",
                       threads=1, max_length=128, init_s=0.5, inference_s=20.0, throughput=100.0,
                       peak_memory_bytes=2**30, memory_kind="rss_increase", tokenizer_load_s=0.0)


def test_a_quality_gives_the_fitness_of_the_same_figures(tiny_model_dir):
    scored = _by_hand(tiny_model_dir).with_quality(0.8)
    assert scored.fitness == pytest.approx(0.8 * 100.0 / (30 * math.log(2))) and scored.throughput == 100.0
    assert scored.with_quality(None).fitness is None
    assert scored.to_dict()["peak_memory_mib"] == 1024.0
    assert Measurement.from_dict(scored.to_dict() | {"unknown": 1}) == scored


def test_a_stored_measurement_is_found_under_its_settings_only(tiny_model_dir, tmp_path):
    saved = _by_hand(tiny_model_dir).with_quality(0.8)
    path = save_measurement(saved, tmp_path)
    assert path == measurement_path(tmp_path, tiny_model_dir, dataset="axb")
    stored = json.loads(path.read_text())
    assert stored["quality"] is None and stored["fitness"] is None  # Q belongs to each run
    found = load_measurement(tmp_path, tiny_model_dir, dataset="axb")
    assert found == saved.with_quality(None)
    copy = shutil.copytree(tiny_model_dir, tmp_path / "copy")  # the same weights elsewhere: the same entry
    assert load_measurement(tmp_path, copy, dataset="axb") == found
    assert load_measurement(tmp_path, tiny_model_dir, dataset="axb", batch_size=16) is None
    assert load_measurement(tmp_path, tiny_model_dir, dataset="lidirus") is None
    assert load_measurement(tmp_path, tiny_model_dir, dataset="axb", device="cuda") is None
    assert measurement_path(tmp_path, tiny_model_dir, dataset="axb", device="cuda:1") == \
        measurement_path(tmp_path, tiny_model_dir, dataset="axb", device="cuda")  # the device type counts
    path.write_text("{not json")
    assert load_measurement(tmp_path, tiny_model_dir, dataset="axb") is None
