"""benchmarks/bench_optimizer_ops.py: its counting of one stacked optimizer step, on a 2-layer tiny structure."""

import importlib.util
import math

import pytest

from _paths import ROOT
from diagnostics.finetune import SweepConfig


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_optimizer_ops", ROOT / "benchmarks" / "bench_optimizer_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def counts(bench):
    structure = {"num_hidden_layers": 2, "hidden_size": 16, "num_attention_heads": 2, "intermediate_size": 32,
                 "vocab_size": 50, "max_position_embeddings": 32}
    return bench.count_ops(structure, runs=2, batch=(2, 8))


def test_the_recipe_counted_is_a_valid_jiant_config(bench):
    config = SweepConfig(recipe="jiant", optimizer="bert_adam", **bench.RECIPE)
    assert (config.max_grad_norm, config.bert_adam_max_grad_norm, config.batch_size) == (5.0, 1.0, 4)


def test_every_step_is_counted_and_moves_at_least_the_weights(counts):
    model = counts["model"]
    assert model["runs"] == 2 and model["stacked_elements"] == 2 * model["elements_per_run"] > 0
    for name in ("bert_adam", "bert_adam_torch_form", "adamw", "torch_adamw_one_run"):
        step = counts[name]
        assert step["ops"] > 0 and step["data_ops"] > 0 and step["bytes"] > 0
        assert step["ops"] == step["data_ops"] + step["view_ops"]
        assert math.isfinite(step["bytes_per_element"]) and step["bytes_per_element"] >= 16
        assert sum(op["calls"] for op in step["by_op"].values()) == step["data_ops"]
    for name in ("bert_adam", "adamw"):
        assert counts["ratio_to_torch_adamw"][name] > 0
    assert counts["forward"]["ops"] > 0 and counts["backward"]["ops"] > 0


def test_bert_adams_step_is_its_norms_and_one_kernel(counts):
    """One read of the gradients for the norms, one pass of the kernel (weight, gradient, both moments read; weight
    and moments written): 32 bytes per float32 element, plus the K x tensors clip factors and rates."""
    step, elements = counts["bert_adam"], counts["model"]["stacked_elements"]
    kernel = step["by_op"]["diagnostics.bert_adam_.default"]
    assert kernel["calls"] == 1 and 28 <= kernel["bytes"] / elements < 28.5
    assert 32 <= step["bytes_per_element"] < 33
    assert "aten._fused_adamw_.default" not in step["by_op"] and "aten._foreach_mul_.List" not in step["by_op"]
    # the CPU's torch form of the same step: every aten op seen, the kernel's not
    assert "diagnostics.bert_adam_.default" not in counts["bert_adam_torch_form"]["by_op"]
    assert counts["bert_adam_torch_form"]["bytes_per_element"] > step["bytes_per_element"]


def test_a_view_moves_no_bytes_and_an_in_place_op_reads_and_writes(bench):
    import torch

    x = torch.zeros(10)
    with bench.op_counter() as counter:
        x.view(2, 5)
        x.add_(1.0)
    summary = counter.summary()
    assert summary["view_ops"] == 1 and summary["data_ops"] == 1
    assert summary["bytes"] == 2 * 10 * 4  # x read, x written


@pytest.mark.parametrize("scaled", [False, True])
def test_a_fused_adam_step_writes_its_gradients_only_when_it_unscales_them(bench, scaled):
    """The counting rule follows the kernel: the gradient is stored back (divided by the scale) only with a scale."""
    import torch

    n = 64
    param, grad = torch.ones(n), torch.full((n,), 2.0)
    exp_avg, exp_avg_sq, step = torch.zeros(n), torch.zeros(n), torch.ones(())
    scale = torch.full((1,), 4.0) if scaled else None
    with bench.op_counter() as counter:
        torch._fused_adamw_([param], [grad], [exp_avg], [exp_avg_sq], [], [step], lr=1e-3, beta1=0.9, beta2=0.999,
                            weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False, grad_scale=scale)
    assert torch.equal(grad, torch.full((n,), 0.5 if scaled else 2.0))  # what the kernel did to the gradient
    tensor_bytes = n * 4
    reads, writes = 4 * tensor_bytes + 4, (4 if scaled else 3) * tensor_bytes  # step count read; p, m, v (, g) written
    assert counter.summary()["bytes"] == reads + writes + (4 if scaled else 0)  # the scale read


def test_lazy_rows_are_counted_against_the_eager_step(bench):
    structure = {"num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2, "intermediate_size": 32,
                 "vocab_size": 3000, "max_position_embeddings": 32}
    lazy = bench.count_lazy_rows(structure, runs=2, batch=(2, 8), steps=4)
    assert lazy["vocab"] == 3000 and 0 < lazy["rows_per_step"] < 3000 / 2
    # the lazy step moves the rows it read (and replays), the eager one the whole table
    assert lazy["lazy"]["bytes_per_element"] < lazy["eager"]["bytes_per_element"]
    assert lazy["flush"]["bytes"] > 0 and lazy["flush"]["bytes_per_element_per_step"] > 0
    # in registers: every late row (the whole table but the rows the last batch read) read and written once
    in_registers = lazy["flush_in_registers"]
    assert 3000 - 2 * 2 * 8 <= in_registers["late_rows"] < 3000
    expected = in_registers["late_rows"] * 2 * 16 * 24 / lazy["stacked_elements"]  # 2 runs x 16 wide x 24 bytes
    assert in_registers["bytes_per_element"] == round(expected, 2)
    assert in_registers["bytes_per_element"] < lazy["flush"]["bytes_per_element"] / 4


def test_an_index_select_moves_only_the_rows_it_reads(bench):
    import torch

    table, index = torch.zeros(100, 8), torch.tensor([3, 7])
    with bench.op_counter() as counter:
        table.index_select(0, index)
    assert counter.summary()["bytes"] == 2 * (2 * 8 * 4) + 2 * 8
