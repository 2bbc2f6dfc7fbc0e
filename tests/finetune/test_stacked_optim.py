"""The engine's optimizers over stacked runs in ``_stacked_optim``: each run's gradient norm over all of its own
parameters, AdamW's rates read from the device equal to the rates given as floats (bit for bit on the CPU), AdamW over
K stacked runs equal to torch's ``AdamW`` run by run (no decay on biases and LayerNorm, the head's own rate,
each run's own global clip and learning-rate factor, its own step count after a reset), and a BertAdam slot saved and
restored in another stack going on as if never moved."""

import copy

import numpy as np
import pytest
import torch

from diagnostics.finetune import SweepConfig
from diagnostics.finetune._fused import StackedClassifiers
from diagnostics.finetune._modeling import load_classifier
from diagnostics.finetune._stacked_optim import StackedAdamW, StackedBertAdam

from _oracle import random_pairs, small_bert_folder
from _small_modules import Small

SEEDS = [0, 1, 2]
VOCAB = 120


@pytest.fixture(scope="module")
def small_model_dir(tmp_path_factory):
    """A 2-layer random BERT with a small vocabulary (the mechanics only; the optimizer step stays cheap)."""
    return small_bert_folder(tmp_path_factory.mktemp("small") / "bert", VOCAB)


@pytest.fixture(scope="module")
def pairs():
    """Token ids of random pairs of varied length, random labels, and a validation slice."""
    return random_pairs(VOCAB)


def _config(**changes):
    values = dict(dropout=0.0, batch_size=4, lr=3e-3, max_epochs=3, patience=5, skip_padding=False,
                  max_grad_norm=0.05, progress=False)
    return SweepConfig(**(values | changes))


def test_per_run_clipping_is_global_over_each_runs_parameters(small_model_dir, pairs):
    train, gold, _, _ = pairs
    config = _config(max_grad_norm=0.5, lr=1e-3)
    models = [load_classifier(small_model_dir, seed=s, dropout=0.0) for s in SEEDS]
    stack = StackedClassifiers(models)
    optimizer = StackedAdamW(stack, models[0], config)
    batch = train.batch(np.arange(4))
    logits = stack.logits({k: v.expand(len(SEEDS), *v.shape) for k, v in batch.items()})
    labels = gold[:4]
    scale = torch.tensor([1.0, 10.0, 100.0])  # three runs with very different gradient norms
    (torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.repeat(3), reduction="none")
     .view(3, 4).mean(1) * scale).sum().backward()
    expected = []
    for k in range(len(SEEDS)):
        model = models[k]
        model.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(**batch).logits, labels) * scale[k]
        loss.backward()
        expected.append(float(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])))
    np.testing.assert_allclose(optimizer.grad_norms().numpy(), expected, rtol=1e-5)


def test_adamw_reads_its_rates_from_the_device_and_equals_the_float_rate_kernel(small_model_dir):
    """The CPU kernel reads a float64 rate tensor as the float it was: the step equals the one that passed each
    group's rate as a Python float (the engine's AdamW before), bit for bit."""
    config = _config(max_grad_norm=1.0)
    factors = [0.37, 1 / 3]
    pair = []
    for _ in range(2):
        models = [load_classifier(small_model_dir, seed=s, dropout=0.0) for s in range(2)]
        stack = StackedClassifiers(models, "cpu")
        optimizer = StackedAdamW(stack, models[0], config)
        generator = torch.Generator().manual_seed(0)
        for p in stack.params.values():
            p.grad = torch.randn(p.shape, generator=generator)
        pair.append((stack, optimizer))
    (stack, optimizer), (old_stack, old) = pair
    optimizer.step(factors)
    assert optimizer._rates.dtype == torch.float64
    with torch.no_grad():  # the float-rate step, written out
        stacked = old._gradients()
        _, coef = old._global_clip(old._norms(stacked))
        old._inverse.copy_(coef.reciprocal())
        old.counts.add_(1.0)
        for run, factor in enumerate(factors):
            first = 0
            for base_lr, decay, params, exp_avg, exp_avg_sq in old._views(run, run + 1):
                grads = [g[run] for g in stacked[first:first + len(params)]]
                torch._fused_adamw_(params, grads, exp_avg, exp_avg_sq, [], old._count_views[run][:len(params)],
                                    lr=base_lr * factor, beta1=0.9, beta2=0.999, weight_decay=decay,
                                    eps=config.adam_eps, amsgrad=False, maximize=False,
                                    grad_scale=old._inverse_views[run])
                first += len(params)
    for name, value in stack.params.items():
        assert torch.equal(value, old_stack.params[name]), name
    for name in optimizer.names:
        assert torch.equal(optimizer.exp_avg[name], old.exp_avg[name])


def _torch_adamw(model, config):
    """torch's AdamW over ``model`` grouped by hand: decay on the weights of dense and classifier only, the head's
    rate for the classifier."""
    groups = {(head, decay): [] for head in (False, True) for decay in (False, True)}
    for name, p in model.named_parameters():
        groups[(name.startswith("classifier"), name.endswith("weight") and "LayerNorm" not in name)].append(p)
    return torch.optim.AdamW([{"params": params, "lr": config.head_lr if head else config.lr,
                               "weight_decay": config.weight_decay if decay else 0.0, "base": config.head_lr
                               if head else config.lr} for (head, decay), params in groups.items() if params],
                             betas=(0.9, 0.999), eps=config.adam_eps)


def test_adamw_over_a_stack_is_torchs_adamw_run_by_run():
    config = SweepConfig(lr=1e-2, head_lr=5e-2, weight_decay=0.1, max_grad_norm=1.0, adam_eps=1e-8)
    models = [Small(k) for k in range(3)]
    references = [copy.deepcopy(m) for m in models]
    optimizers = [_torch_adamw(r, config) for r in references]
    stack = StackedClassifiers(models, "cpu")
    stacked = StackedAdamW(stack, models[0], config)
    generator = torch.Generator().manual_seed(0)
    scales, factors = [0.01, 1.0, 30.0], [1.0, 0.5, 0.25]  # run 0 never clips, run 2 always does
    for _ in range(4):
        grads = [{n: torch.randn(p.shape, generator=generator) * s for n, p in references[0].named_parameters()}
                 for s in scales]
        for name, p in stack.params.items():  # the stack may hold a tensor transposed
            p.grad = torch.stack([stack.model_layout(name, g[name]) for g in grads])
        stacked.step(factors)
        for reference, optimizer, grad, factor in zip(references, optimizers, grads, factors):
            for name, p in reference.named_parameters():
                p.grad = grad[name].clone()
            torch.nn.utils.clip_grad_norm_(reference.parameters(), config.max_grad_norm)
            for group in optimizer.param_groups:
                group["lr"] = group["base"] * factor
            optimizer.step()
    for k, reference in enumerate(references):
        state = stack.state_of(k)
        for name, p in reference.named_parameters():
            torch.testing.assert_close(state[name], p.detach(), rtol=1e-5, atol=1e-7, msg=f"run {k}: {name}")


def test_a_reset_slot_starts_its_moments_and_step_count_again():
    config = SweepConfig(lr=1e-2, max_grad_norm=0.0)
    models = [Small(k) for k in range(2)]
    stack = StackedClassifiers(models, "cpu")
    stacked = StackedAdamW(stack, models[0], config)
    for _ in range(3):
        for p in stack.params.values():
            p.grad = torch.ones(p.shape)
        stacked.step([1.0, 1.0])
    stacked.reset(1)
    state = stacked.slot_state(1)
    assert float(state["count"]) == 0 and all(not t.any() for n, t in state.items() if n != "count")
    assert float(stacked.slot_state(0)["count"]) == 3
    before = stack.state_of(1)
    for p in stack.params.values():
        p.grad = torch.ones(p.shape)
    stacked.step([1.0, 1.0])
    # Adam's first step after the reset moves each weight by the rate (bias-corrected m / sqrt(v) = 1)
    after = stack.state_of(1)
    torch.testing.assert_close(after["dense.weight"], before["dense.weight"] * (1 - 1e-2 * config.weight_decay) - 1e-2)


def test_a_slot_saved_and_restored_in_another_stack_goes_on_as_if_never_moved():
    config = SweepConfig(recipe="jiant", optimizer="bert_adam", lr=1e-3, weight_decay=0.01, max_grad_norm=5.0,
                         bert_adam_max_grad_norm=1.0, adam_eps=1e-6)
    generator = torch.Generator().manual_seed(0)
    models = [Small(k) for k in range(3)]
    stack = StackedClassifiers(models, "cpu")
    optimizer = StackedBertAdam(stack, models[0], config)

    def step(stack, optimizer, position_of_run2: int, grads):
        for name, p in stack.params.items():
            grad = torch.zeros(p.shape)
            grad[position_of_run2] = grads[name]
            p.grad = grad
        optimizer.step([0.5] * stack.size)

    draws = [{n: torch.randn(p.shape[1:], generator=generator) for n, p in stack.params.items()} for _ in range(6)]
    for grads in draws[:3]:
        step(stack, optimizer, 2, grads)
    saved, weights = optimizer.slot_state(2), stack.state_of(2)
    for grads in draws[3:]:
        step(stack, optimizer, 2, grads)
    # the run goes on in slot 0 of a group of two, from its saved weights and moments
    moved = Small(7)
    moved.load_state_dict(weights, strict=False)
    other = StackedClassifiers([moved, Small(8)], "cpu")
    resumed = StackedBertAdam(other, models[0], config)
    resumed.restore_slot(0, saved)
    for grads in draws[3:]:
        step(other, resumed, 0, grads)
    for name in stack.params:
        assert torch.equal(stack.params[name][2], other.params[name][0]), name
