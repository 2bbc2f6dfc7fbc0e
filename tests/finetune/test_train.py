"""The training loop on a tiny random BERT with the real tokenizer and real data subsets."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from diagnostics.finetune import SweepConfig, collect_predictions, run_sweep
from diagnostics.finetune._run_spec import RunSpec
from diagnostics.finetune._train import mcc, train_run
from diagnostics.models import load_tokenizer, tiny_random_model


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "model", seed=0, num_hidden_layers=3)


def config(tmp_path, tiny, **overrides):
    values = dict(output_dir=str(tmp_path / "runs"), experiment="t", models=[{"name": "tiny", "path": str(tiny)}],
                  languages=["en"], seeds=[0], train_size=96, max_seq_length=48, batch_size=16, lr=1e-3,
                  max_epochs=2, warmup_ratio=0.0, num_threads=1, progress=False)
    values.update(overrides)
    return SweepConfig(**values)


def run_one(cfg, seed=0, language="en"):
    from diagnostics.finetune._run_spec import spec_dict

    spec = RunSpec(cfg.to_dict(), language, spec_dict(cfg.models[0]), seed)
    return train_run(spec), spec.path


def test_same_seed_identical_and_other_seed_differs(tmp_path, tiny):
    a = run_sweep(config(tmp_path / "a", tiny, seeds=[0, 1]))
    b = run_sweep(config(tmp_path / "b", tiny, seeds=[0]))
    assert set(a["state"]) == {"done"} and set(b["state"]) == {"done"}
    pa, pb = collect_predictions(tmp_path / "a/runs"), collect_predictions(tmp_path / "b/runs")
    seed0, seed1 = pa[pa.seed == 0].reset_index(drop=True), pa[pa.seed == 1].reset_index(drop=True)
    pd.testing.assert_frame_equal(seed0, pb)  # bit-identical, probabilities included
    assert not np.allclose(seed0["probability"], seed1["probability"])
    ma = json.loads((tmp_path / "a/runs/t/en/tiny/seed=0/metrics.json").read_text())
    mb = json.loads((tmp_path / "b/runs/t/en/tiny/seed=0/metrics.json").read_text())
    assert ma["history"] == mb["history"]


def test_run_folder_contents_and_metrics(tmp_path, tiny):
    cfg = config(tmp_path, tiny, models=[{"name": "tiny-p7", "path": str(tiny), "pretrain_seed": 7}])
    outcome, path = run_one(cfg)
    assert outcome["state"] == "done"
    assert {p.name for p in path.iterdir()} == {"config.json", "versions.json", "metrics.json", "predictions.parquet",
                                                "DONE", ".lease"}  # no staging left, no LOCK
    assert json.loads((path / "DONE").read_text())["format"] == 2
    versions = json.loads((path / "versions.json").read_text())
    assert versions["torch"] and versions["transformers"] and versions["numpy"] and versions["python"]
    metrics = json.loads((path / "metrics.json").read_text())
    res = metrics["resources"]
    for key in ("train_peak_memory_mib", "train_examples_per_s", "inference_records_per_s", "init_s",
                "fitness_train_mib"):
        assert res[key] > 0, key
    assert res["fitness"] is None and res["morocco"]["measured"] is False  # CPU: only a stored measurement counts
    assert len(metrics["history"]) == 2 and metrics["best"]["epoch"] in (1, 2)
    assert metrics["diagnostics"]["axb"]["categories"] == 33
    preds = pd.read_parquet(path / "predictions.parquet")
    assert list(preds.columns) == ["experiment", "language", "model", "seed", "dataset", "example_id", "label",
                                   "prediction", "probability", "pretrain_seed"]
    assert (preds["pretrain_seed"] == 7).all() and (preds["model"] == "tiny-p7").all()
    assert metrics["diagnostics"]["axb"]["mcc"] == pytest.approx(
        mcc(preds.label == "entailment", preds.prediction == "entailment"))
    # second call: skipped, nothing rewritten
    stamp = (path / "DONE").stat().st_mtime_ns
    assert run_one(cfg)[0]["state"] == "skipped"
    assert (path / "DONE").stat().st_mtime_ns == stamp


@pytest.mark.slow
def test_top_k_with_all_layers_matches_full_finetuning_with_frozen_embeddings(tmp_path, tiny):
    """Cached inputs of the frozen part are exact: with dropout off the two paths train the same model; the top-k
    run's checkpoint (frozen layers re-attached) reproduces its stored predictions."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from diagnostics import data

    common = dict(dropout=0.0, feature_dtype="float32", max_epochs=1)
    _, full = run_one(config(tmp_path / "full", tiny, freeze_embeddings=True, **common))
    _, top = run_one(config(tmp_path / "top", tiny, train_top_k_layers=3, save_checkpoint=True, **common))
    a = pd.read_parquet(full / "predictions.parquet")["probability"].to_numpy()
    b = pd.read_parquet(top / "predictions.parquet")["probability"].to_numpy()
    np.testing.assert_allclose(a, b, atol=1e-4)
    assert not np.allclose(a, a.mean(), atol=1e-6)  # the comparison is not between constants
    assert (tmp_path / "top/runs/.cache/features/tiny").exists()

    assert (top / "checkpoint" / "model.safetensors").exists()
    # the checkpoint holds its model's tokenizer files as they are: one cached tokenizer serves both
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (top / "checkpoint" / name).read_bytes() == (Path(tiny) / name).read_bytes()
    assert load_tokenizer(top / "checkpoint") is load_tokenizer(tiny)
    model = AutoModelForSequenceClassification.from_pretrained(top / "checkpoint").eval()
    tok = AutoTokenizer.from_pretrained(top / "checkpoint")
    axb = data.load("axb").head(20)
    batch = tok(axb.premise.tolist(), axb.hypothesis.tolist(), truncation=True, max_length=48, padding=True,
                return_tensors="pt")
    with torch.no_grad():
        proba = torch.softmax(model(**batch).logits, -1)[:, 1].numpy()
    np.testing.assert_allclose(proba, b[:20], atol=1e-4)


def test_training_with_skipped_padding_matches_without_when_dropout_is_off(tmp_path, tiny):
    """Same real-token arithmetic: with dropout off a run trains the same model either way (up to float order)."""
    common = dict(dropout=0.0, max_epochs=1)
    _, on = run_one(config(tmp_path / "on", tiny, **common))
    _, off = run_one(config(tmp_path / "off", tiny, skip_padding=False, **common))
    a = pd.read_parquet(on / "predictions.parquet")["probability"].to_numpy()
    b = pd.read_parquet(off / "predictions.parquet")["probability"].to_numpy()
    np.testing.assert_allclose(a, b, atol=1e-4)
    assert not np.allclose(a, a.mean(), atol=1e-6)


def test_failure_leaves_failed_marker_and_clean_retry(tmp_path, tiny, monkeypatch):
    cfg = config(tmp_path, tiny, extra_data={"name": "mnli", "size": 10})  # not bundled: fails while loading
    with pytest.raises(FileNotFoundError, match="not bundled"):
        run_one(cfg)
    path = tmp_path / "runs/t/en/tiny/seed=0"
    assert (path / "FAILED").exists() and not (path / "DONE").exists() and not (path / "LOCK").exists()
    with pytest.raises(ValueError, match="extra_data.path: expected a file"):  # the sweep refuses it up front
        run_sweep(cfg)
    monkeypatch.setattr(SweepConfig, "check_inputs", lambda self, cache=None: None)  # the retry's own failure
    result = run_sweep(cfg)
    assert result["state"].tolist() == ["failed"] and "not bundled" in result["error"].iat[0]


@pytest.mark.slow
def test_cpu_bf16_is_recorded_and_deterministic(tmp_path, tiny):
    from diagnostics.models import cpu_bf16_supported

    outs = []
    for name in ("a", "b"):
        run_sweep(config(tmp_path / name, tiny, precision="bf16", train_top_k_layers=1, max_epochs=1))
        outs.append(collect_predictions(tmp_path / name / "runs"))
        versions = json.loads(next((tmp_path / name / "runs").rglob("versions.json")).read_text())
        assert versions["autocast"] == ("torch.bfloat16" if cpu_bf16_supported() else "None")
    pd.testing.assert_frame_equal(outs[0], outs[1])
    # the compute dtype is part of the feature-cache key: fp32 features are a separate store
    run_sweep(config(tmp_path / "a", tiny, train_top_k_layers=1, max_epochs=1, experiment="fp32"))
    stores = {p.parent.name for p in (tmp_path / "a/runs/.cache/features").rglob("shard-*.safetensors")}
    assert len(stores) == (2 if cpu_bf16_supported() else 1)


def test_tf32_is_cuda_only_recorded_and_restored(tmp_path, tiny):
    import torch

    from diagnostics.finetune._train import _autocast_dtype, _torch_settings

    before = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    for device, expected in (("cuda", True), ("cpu", False)):
        cfg = config(tmp_path, tiny, precision="tf32", device=device)
        with _torch_settings(cfg) as chosen:
            assert chosen == device and _autocast_dtype(cfg, device) is None  # fp32 weights, no autocast
            assert torch.backends.cuda.matmul.allow_tf32 is expected and torch.backends.cudnn.allow_tf32 is expected
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before
    with _torch_settings(config(tmp_path, tiny, precision="fp32", device="cuda")):
        assert not torch.backends.cuda.matmul.allow_tf32  # fp32 means fp32 matrix products on CUDA too
    # on a CPU, tf32 trains exactly what fp32 trains, and says it ran without TF32
    for precision in ("fp32", "tf32"):
        run_sweep(config(tmp_path / precision, tiny, precision=precision, max_epochs=1, seeds=[0]))
    tables = [collect_predictions(tmp_path / p / "runs").drop(columns="run_hash", errors="ignore")
              for p in ("fp32", "tf32")]
    pd.testing.assert_frame_equal(tables[0], tables[1])
    versions = json.loads(next((tmp_path / "tf32" / "runs").rglob("versions.json")).read_text())
    assert versions["tf32"] is False and versions["autocast"] == "None"
