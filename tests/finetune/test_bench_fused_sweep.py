"""benchmarks/bench_fused_sweep.py runs from a bare checkout (PYTHONPATH only) on a CPU with a tiny model."""

import json
import os
import subprocess
import sys

import pytest

from _paths import ROOT
from diagnostics.finetune import SweepConfig

KS, WARMUP, STEPS = (2, 3), 1, 2


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "fused.json"
    # one thread: on cores other processes share, a waiting thread pool turns each op into milliseconds
    env = os.environ | {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_fused_sweep.py"), "--size", "tiny", "--device", "cpu",
               "--ks", ",".join(map(str, KS)), "--warmup", str(WARMUP), "--steps", str(STEPS),
               "--baseline-steps", str(STEPS), "--profile", "--static-widths", "16", "--rows-arms", "--capture-arms",
               "--capture-check", "--out", str(out)]
    done = subprocess.run(command, cwd=out.parent, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


def test_the_report_names_the_machine_and_the_settings(report):
    assert report["benchmark"] == "fused_sweep"
    assert {"python", "torch", "transformers", "device"} <= set(report["machine"])
    settings = report["settings"]
    assert settings["size"] == "tiny" and settings["ks"] == list(KS)
    assert settings["precisions"] == ["fp32", "tf32", "bf16"]
    assert settings["pairs"] > 2000  # every RTE train pair's length once
    config = SweepConfig(**settings["recipe"])  # the recipe recorded is a valid config: the study's
    assert (config.recipe, config.optimizer, config.batch_size, config.lr) == ("jiant", "bert_adam", 4, 1e-5)


def test_every_arm_trained(report):
    arms = report["arms"]
    assert (arms[0]["fuse"], arms[0]["precision"], arms[0]["ratio"]) == (1, "fp32", 1.0)
    assert [(a["k"], a["precision"]) for a in arms[1:]] == [(k, p) for p in ("fp32", "tf32", "bf16") for k in KS]
    for arm in arms:
        assert arm["status"] == "ok", arm
        assert arm["steps_trained"] == [2 * WARMUP + STEPS] and arm["timed_steps"] == STEPS
        assert arm["pairs_per_s"] > 0 and arm["seconds"] > 0 and arm["ratio"] > 0
        assert 0 <= arm["padding_share"] < 1
        assert arm["padded_tokens"] >= arm["real_tokens"] > 0
    assert set(report["ratio"]) == {f"K={k} {p}" for p in ("fp32", "tf32", "bf16") for k in KS}


def test_the_rows_arms_train_each_k_with_the_word_embedding_updated_every_step_and_lazily(report):
    arms = report["rows_arms"]
    assert [(a["k"], a["lazy_rows"]) for a in arms] == [(k, lazy) for k in KS for lazy in (False, True)]
    for arm in arms:
        assert arm["status"] == "ok" and arm["precision"] == "fp32" and arm["pairs_per_s"] > 0, arm
        assert arm["vocab"] == 1000 and 0 < arm["rows_per_step"] <= arm["rows_per_step_max"] <= 1000
    assert report["settings"]["ids"] == "zipf"


def test_the_capture_arms_train_each_k_with_its_step_replayed(report):
    arms = report["capture_arms"]
    assert [a["k"] for a in arms] == list(KS)
    for arm in arms:
        assert arm["status"] == "ok" and arm["capture"] and arm["pairs_per_s"] > 0, arm
        assert arm["steps_trained"] == [2 * WARMUP + STEPS]
        graphs = arm["graphs"]
        assert sum(graphs.values()) == 2 * WARMUP + STEPS and graphs["eager"] >= 1
    check, = report["capture_check"]
    assert (check["k"], check["steps"], check["dropout"]) == (max(KS), STEPS, False)
    assert check["eager"]["eager"] == STEPS == sum(check["captured"][kind] for kind in ("eager", "capture", "replay"))
    assert check["equal"] and check["max_abs_diff"] == 0, check  # on the CPU a replay is its eager step


def test_zipf_ids_read_as_many_distinct_rows_per_batch_as_the_real_text():
    """Pairs of the real lengths with ids from the fitted law: distinct ids per batch of 4 pairs within 5 % of the
    tokenised text's (recorded in benchmarks/data/token_zipf.json), far below uniform ids'."""
    bench = _bench_module()
    for dataset in ("rte", "terra"):
        fit = json.loads(bench.ZIPF.read_text(encoding="utf-8"))["datasets"][dataset]
        vocab = bench.SIZES["mbert"]["vocab_size"]
        zipf, _ = bench.training_pairs(dataset, vocab, "zipf")
        uniform, _ = bench.training_pairs(dataset, vocab, "uniform")
        drawn = bench.distinct_per_batch(zipf.input_ids, draws=1000)
        assert abs(drawn - fit["distinct_per_batch"]) < 0.05 * fit["distinct_per_batch"], (dataset, drawn, fit)
        assert bench.distinct_per_batch(uniform.input_ids, draws=300) > 1.4 * drawn


def test_the_profile_covers_one_step(report):
    profile = report["profile"]
    assert profile["status"] == "ok" and profile["k"] == KS[0]
    assert profile["top"] and all(entry["calls"] > 0 for entry in profile["top"])
    assert "Name" in profile["table"]


def test_the_fixed_width_step_is_timed_with_and_without_dropout(report):
    # on a CPU there is no graph to capture: the eager step is timed, and nothing claims a graph time
    static = report["static_width"]
    assert [(a["width"], a["precision"], a["dropout"]) for a in static] == [
        (16, p, d) for p in ("fp32", "tf32", "bf16") for d in (False, True)]
    for arm in static:
        assert arm["status"] == "ok" and arm["k"] == max(KS) and arm["eager_ms"] > 0, arm
        assert "graph_ms" not in arm and "graph_error" not in arm


def _bench_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_fused_sweep", ROOT / "benchmarks" / "bench_fused_sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # torch.compile of the update: tens of seconds on a CPU
def test_the_compiled_bert_adam_variant_takes_the_engines_step(tmp_path):
    import torch

    from diagnostics.finetune._fused import StackedClassifiers
    from diagnostics.finetune._modeling import load_classifier
    from diagnostics.finetune._stacked_optim import StackedBertAdam

    bench = _bench_module()
    bench.write_model(tmp_path / "model", "tiny")
    models = [load_classifier(tmp_path / "model", seed=k, dropout=0.0, head="jiant") for k in range(3)]
    generator = torch.Generator().manual_seed(0)
    inputs = {"input_ids": torch.randint(5, 1000, (3, 4, 16), generator=generator),
              "attention_mask": torch.ones((3, 4, 16), dtype=torch.long),
              "token_type_ids": torch.zeros((3, 4, 16), dtype=torch.long)}
    labels = torch.randint(0, 2, (3, 4), generator=generator)
    start = StackedClassifiers(models, "cpu").params
    after = []
    for compiled in (False, True):
        stack = StackedClassifiers(models, "cpu")
        optimizer = StackedBertAdam(stack, models[0], bench.sweep_config(1, 1, "cpu", "fp32"))
        update = bench._CompiledBertAdam(optimizer) if compiled else optimizer.step
        for _ in range(3):  # runs at their own rates; clipping binds (the tiny model's gradients exceed 1.0)
            logits = stack.logits(inputs, train=False)
            torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten()).backward()
            update([1.0, 0.5, 0.25])
        after.append({name: p.detach().clone() for name, p in stack.params.items()})
    moved = max((after[0][n] - start[n]).abs().max().item() for n in start)
    differ = max((after[0][n] - after[1][n]).abs().max().item() for n in start)
    assert moved > 1e-5 and differ < moved / 100, (moved, differ)


def test_the_fused_adamw_variant_is_the_engines_step_but_for_the_decays_rounding(tmp_path):
    """The step before BertAdam's kernel (clip scaling, then torch's fused AdamW kernel without bias correction)
    moves the weights as the kernel does; they differ by the decay, applied apart and rounded on its own."""
    import torch

    from diagnostics.finetune._fused import StackedClassifiers
    from diagnostics.finetune._modeling import load_classifier
    from diagnostics.finetune._stacked_optim import StackedBertAdam

    bench = _bench_module()
    bench.write_model(tmp_path / "model", "tiny")
    models = [load_classifier(tmp_path / "model", seed=k, dropout=0.0, head="jiant") for k in range(2)]
    generator = torch.Generator().manual_seed(0)
    config = bench.sweep_config(1, 1, "cpu", "fp32").with_overrides(["lr=1e-3"])
    start = StackedClassifiers(models, "cpu").params
    grads = [{n: torch.randn(p.shape, generator=generator) for n, p in start.items()} for _ in range(3)]
    after = []
    for variant in (None, "fused_adamw"):
        stack = StackedClassifiers(models, "cpu")
        optimizer = StackedBertAdam(stack, models[0], config)
        update = bench._UPDATE_VARIANTS[variant](optimizer) if variant else optimizer.step
        for step in grads:
            for name, p in stack.params.items():
                p.grad = step[name].clone()
            update([0.5, 0.5])
        after.append({name: p.detach().clone() for name, p in stack.params.items()})
    moved = max((after[0][n] - start[n]).abs().max().item() for n in start)
    differ = max((after[0][n] - after[1][n]).abs().max().item() for n in start)
    assert moved > 1e-4 and 0 < differ < moved / 1000, (moved, differ)


@pytest.mark.slow
def test_the_step_variants_run_from_the_command_line(tmp_path):
    out = tmp_path / "variants.json"
    env = os.environ | {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_fused_sweep.py"), "--size", "tiny", "--device", "cpu",
               "--ks", "2", "--precisions", "fp32", "--warmup", "1", "--steps", "2", "--baseline-steps", "2",
               "--static-widths", "16", "--static-variants", "sdpa,compiled_bert_adam,fused_adamw", "--out", str(out)]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    static = json.loads(out.read_text(encoding="utf-8"))["static_width"]
    assert [a["variant"] for a in static] == ["engine", "engine", "sdpa", "compiled_bert_adam", "fused_adamw"]
    assert all(a["status"] == "ok" and a["eager_ms"] > 0 for a in static), static
