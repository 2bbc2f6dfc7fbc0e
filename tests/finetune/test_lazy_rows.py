"""Lazy word-embedding rows: BertAdam updating only the rows a batch read equals the eager update bit for bit.

Token ids follow a Zipf law over a small vocabulary, so most rows go untouched for many steps and are replayed when
read again (or at a check). Both clips bind on some steps; each run has its own warm-up and plateau decays.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest
import torch
from torch import nn

from diagnostics.finetune import SweepConfig
from diagnostics.finetune._batching import TokenInputs
from diagnostics.finetune._fused import EngineRun, RunData, StackedClassifiers, batched_validator, fit_runs
from diagnostics.finetune._jiant import warmup_linear
from diagnostics.finetune._bert_adam_kernel import bert_adam_replay_
from diagnostics.finetune._lazy_rows import word_embedding
from diagnostics.finetune._stacked_optim import StackedAdamW, StackedBertAdam

VOCAB, WIDTH, PAD = 700, 13, 0  # an odd width: elementwise ops run their vectorised and scalar paths


class Embedded(nn.Module):
    """A word embedding (padding row 0), a linear layer, a LayerNorm and a head."""

    def __init__(self, seed: int):
        super().__init__()
        torch.manual_seed(seed)
        self.word_embeddings = nn.Embedding(VOCAB, WIDTH, padding_idx=PAD)
        self.dense = nn.Linear(WIDTH, 9)
        self.LayerNorm = nn.LayerNorm(9)
        self.classifier = nn.Linear(9, 2)

    def get_input_embeddings(self) -> nn.Embedding:
        return self.word_embeddings


def zipf_ids(generator: np.random.Generator, shape: tuple[int, ...], vocab: int = VOCAB) -> np.ndarray:
    """Token ids whose ranks follow a Zipf law (exponent 1.1) over ``vocab``, padding excluded."""
    ranks = np.arange(1, vocab)
    weights = 1.0 / ranks ** 1.1
    return generator.choice(ranks, size=shape, p=weights / weights.sum())


def _config(lr: float = 1e-3) -> SweepConfig:
    return SweepConfig(recipe="jiant", optimizer="bert_adam", lr=lr, weight_decay=0.01, max_grad_norm=3.0,
                       bert_adam_max_grad_norm=1.0, adam_eps=1e-6)


def _state(stack, optimizer) -> dict[str, torch.Tensor]:
    out = {}
    for name in optimizer.names:
        out[f"p/{name}"] = stack.params[name].detach().clone()
        out[f"m/{name}"] = optimizer.exp_avg[name].clone()
        out[f"v/{name}"] = optimizer.exp_avg_sq[name].clone()
    return out


def _assert_equal(a: dict, b: dict, where: str) -> None:
    for key in a:
        assert torch.equal(a[key], b[key]), (where, key, (a[key] - b[key]).abs().max())


def train_both(size: int, steps: int, check_every: int, seed: int = 0) -> int:
    """``size`` runs, eager and lazy, on the same Zipf batches and gradients; runs join slot 0 (and slot 2) mid-way.

    Returns how many row-steps the lazy optimizer replayed (so the test sees it deferred work).
    """
    config = _config()
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    pair = []
    for lazy in (False, True):
        models = [Embedded(k) for k in range(size)]
        stack = StackedClassifiers(models, "cpu")
        pair.append((stack, StackedBertAdam(stack, models[0], config, lazy_rows=lazy)))
    (eager_stack, eager), (lazy_stack, lazy) = pair
    assert eager.rows is not None and lazy.rows.lazy and not eager.rows.lazy
    name = lazy.rows.name
    replayed = [0]
    original = type(lazy.rows)._replay

    def counting(self, rows):
        replayed[0] += int((self.steps - self.applied[rows]).sum())
        return original(self, rows)

    lazy.rows._replay = counting.__get__(lazy.rows)
    first, decays = [0] * size, [1.0] * size
    joins = {steps // 3: 0, steps // 2: 2 % size}
    for step in range(steps):
        if step in joins:  # a run leaves its slot and another joins there: every row brought up to date first
            position = joins[step]
            for stack, optimizer in pair:
                optimizer.flush()
                stack.put(position, Embedded(1000 + step))
                optimizer.reset(position)
            first[position], decays[position] = step, 1.0
        factors = []
        for k in range(size):
            if (step - first[k]) % (97 + 31 * k) == 96:  # each run's own plateaus
                decays[k] *= 0.5
            factors.append(decays[k] * warmup_linear((step - first[k]) / steps, 0.1))
        ids = torch.from_numpy(zipf_ids(rng, (size, 2, 6)))
        ids[:, 1, 4:] = PAD  # padding, as a batch padded to its longest pair
        grads = {}
        for n in eager.names:
            shape = eager_stack.params[n].shape
            sigma = torch.empty(size).uniform_(math.log(0.01), math.log(3.0), generator=generator).exp()
            grads[n] = torch.randn(shape, generator=generator) * sigma.view((-1,) + (1,) * (len(shape) - 1))
        dense = torch.zeros_like(grads[name])  # the embedding's gradient: only the rows each run read
        for k in range(size):
            read = torch.unique(ids[k])
            read = read[read != PAD]
            dense[k, read] = grads[name][k, read]
        grads[name] = dense
        for stack, optimizer in pair:
            local, table = optimizer.rows.prepare(ids)
            for n in optimizer.names:
                if n == name and table is not None:
                    table.grad = dense.index_select(1, optimizer.rows.rows)
                    assert torch.equal(stack.params[n].detach()[torch.arange(size)[:, None, None], ids],
                                       table.detach()[torch.arange(size)[:, None, None], local])
                else:
                    stack.params[n].grad = grads[n].clone()
            optimizer.step(factors)
        if (step + 1) % check_every == 0 or step + 1 == steps:
            position = step % size
            _assert_equal(eager.slot_state(position), lazy.slot_state(position), f"slot state after {step + 1}")
            _assert_equal(_state(eager_stack, eager), _state(lazy_stack, lazy), f"check after {step + 1}")
    return replayed[0]


@pytest.mark.parametrize("size, steps, check_every", [
    (1, 150, 50), (3, 150, 50),
    # eight runs, and a thousand steps: the slow target (the default suite keeps one and three runs)
    *(pytest.param(size, steps, every, marks=pytest.mark.slow) for size, steps, every in
      ((8, 150, 50), (1, 1000, 250), (3, 1000, 250), (8, 1000, 250)))])
def test_lazy_rows_equal_the_eager_update_bit_for_bit_at_every_check(size, steps, check_every):
    replayed = train_both(size, steps=steps, check_every=check_every)
    assert replayed > check_every // 3 * VOCAB  # most of the table was deferred and replayed


def replay_rows_in_torch(param, exp_avg, exp_avg_sq, rows, starts, history, decay, beta1, beta2, eps):
    """The in-register replay's contract (``bert_adam_replay_rows_``) in torch ops: the rows of each first missed
    step gathered, replayed by the torch replay, written back (the kernel equals the torch replay row by row:
    tests/finetune/test_bert_adam_kernel.py)."""
    steps = history.shape[0]
    for start in sorted(set(starts.tolist())):
        chosen = rows[starts == start]
        blocks = [t.index_select(1, chosen) for t in (param, exp_avg, exp_avg_sq)]
        bert_adam_replay_(*blocks, [len(chosen)] * (steps - start), history[start:, 0], history[start:, 1], decay,
                          beta1, beta2, eps)
        for whole, block in zip((param, exp_avg, exp_avg_sq), blocks):
            whole.index_copy_(1, chosen, block)


def test_lazy_rows_through_the_in_register_replay_equal_the_eager_update_bit_for_bit(monkeypatch):
    """Where the replay kernel runs (CUDA with Triton) the rows go to it whole, each with its first missed step: its
    contract, in torch ops here, leaves every row as the eager update does at every check, runs joining mid-way."""
    from diagnostics.finetune import _lazy_rows

    calls = []

    def counted(*args):
        calls.append(len(args[3]))
        replay_rows_in_torch(*args)

    monkeypatch.setattr(_lazy_rows, "replay_eligible", lambda *tensors: True)
    monkeypatch.setattr(_lazy_rows, "bert_adam_replay_rows_", counted)
    train_both(3, steps=12, check_every=6)
    assert len(calls) > 6 and max(calls) > VOCAB // 2  # catch-ups before batches and whole-table flushes


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="Triton is not installed (CUDA torch only)")
def test_lazy_rows_through_the_interpreted_replay_kernel_equal_the_eager_update_bit_for_bit(monkeypatch):
    """The kernel itself under Triton's interpreter (as it runs on CUDA), a short run: minutes, the interpreter runs
    one program per row and run."""
    from diagnostics.finetune import _bert_adam_kernel

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    _bert_adam_kernel._replay_kernel.cache_clear()
    try:
        train_both(2, steps=4, check_every=2)
    finally:
        _bert_adam_kernel._replay_kernel.cache_clear()


def test_a_step_given_no_rows_updates_the_whole_table_after_bringing_it_up_to_date():
    config = _config()
    models = [Embedded(k) for k in range(2)]
    stacks = [StackedClassifiers(models, "cpu") for _ in range(2)]
    eager, lazy = (StackedBertAdam(s, models[0], config, lazy_rows=flag) for s, flag in zip(stacks, (False, True)))
    rng = np.random.default_rng(3)
    generator = torch.Generator().manual_seed(3)
    for step in range(6):
        grads = {n: torch.randn(p.shape, generator=generator) for n, p in stacks[0].params.items()}
        ids = torch.from_numpy(zipf_ids(rng, (2, 2, 5)))
        name = lazy.rows.name
        grads[name] = torch.zeros_like(grads[name])
        grads[name][:, 1:4] = 0.1  # rows 1-3 read by both runs
        ids[:, 0, :3] = torch.tensor([1, 2, 3])
        for stack, optimizer in zip(stacks, (eager, lazy)):
            if step < 5:
                _, table = optimizer.rows.prepare(ids)
                if table is not None:
                    table.grad = grads[name].index_select(1, optimizer.rows.rows)
            for n, p in stack.params.items():
                if n != name or step == 5 or optimizer is eager:
                    p.grad = grads[n].clone()
            optimizer.step([1.0, 0.5])
    # the last step had no rows: the dense norm and update, in both
    _assert_equal(_state(stacks[0], eager), _state(stacks[1], lazy), "after a step without rows")


def test_the_padding_row_keeps_its_index_in_the_sub_table():
    config = _config()
    models = [Embedded(0)]
    stack = StackedClassifiers(models, "cpu")
    assert not StackedBertAdam(stack, models[0], config).rows.lazy  # the engine's default: every row every step
    optimizer = StackedBertAdam(stack, models[0], config, lazy_rows=True)
    assert word_embedding(models[0]) == ("word_embeddings.weight", PAD)
    ids = torch.tensor([[[PAD, 17, 5, PAD], [300, 5, 5, 2]]])
    local, table = optimizer.rows.prepare(ids)
    assert optimizer.rows.rows.tolist() == [0, 2, 5, 17, 300]
    assert local.tolist() == [[[0, 3, 2, 0], [4, 2, 2, 1]]] and table.shape == (1, 5, WIDTH)


def test_frozen_embeddings_and_adamw_have_no_rows():
    models = [Embedded(0)]
    models[0].word_embeddings.requires_grad_(False)
    stack = StackedClassifiers(models, "cpu")
    assert word_embedding(models[0]) is None and StackedBertAdam(stack, models[0], _config()).rows is None
    models = [Embedded(0)]
    adamw = StackedAdamW(StackedClassifiers(models, "cpu"), models[0], SweepConfig(lr=1e-3))
    assert adamw.rows is None


# --- the engine, end to end ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def zipf_model_dir(tmp_path_factory):
    """A 2-layer random BERT with a vocabulary of 600 (rows go untouched for many steps)."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=600, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=2)
    folder = tmp_path_factory.mktemp("zipf") / "bert"
    BertForSequenceClassification(config).save_pretrained(folder, safe_serialization=True)
    return folder


def _data(seed: int, count: int):
    rng = np.random.default_rng(seed)
    ids = [[101 % 600] + list(zipf_ids(rng, (int(rng.integers(3, 18)),), 600)) for _ in range(count)]
    gold = torch.from_numpy(rng.integers(0, 2, size=count))
    return TokenInputs(ids, None, 0), gold, TokenInputs(ids[:10], None, 0), gold[:10].numpy()


def _accuracy(gold, proba):
    return {"accuracy": float(np.mean((proba >= 0.5) == gold)), "mcc": 0.0}


@pytest.mark.parametrize("head", [pytest.param("transformers", marks=pytest.mark.slow), "jiant"])
def test_the_engine_with_lazy_rows_equals_it_without_at_every_check_and_the_end(zipf_model_dir, head):
    """A queue of four runs (two data sets, two budgets) in two slots: the first stops early and a run joins its slot.
    Lazy rows change nothing: every check's scores and losses and every run's final weights are the same bits."""
    from diagnostics.finetune._modeling import load_classifier

    values = dict(recipe="jiant", optimizer="bert_adam", dropout=0.0, batch_size=4, lr=3e-3, adam_eps=1e-6,
                  weight_decay=0.01, max_grad_norm=0.5, bert_adam_max_grad_norm=0.2, val_interval=5, patience=20,
                  lr_patience=0, skip_padding=False, progress=False)
    short, long = SweepConfig(max_vals=1, **values), SweepConfig(max_vals=5, **values)
    datasets = [_data(0, 30), _data(1, 22)]
    validators = [batched_validator(d[2], d[3], 8, "cpu", None, _accuracy) for d in datasets]
    outcome = {}
    for lazy in (False, True):
        models, states = {}, {}

        def join(seed, data, validate):
            models[seed] = load_classifier(zipf_model_dir, seed=seed, dropout=0.0, head=head)
            return RunData(models[seed], data[0], data[1], validate)

        def checked(index, state):
            states.setdefault(index, []).append(state()["tensors"])

        runs = [EngineRun(seed, short if seed == 0 else long,
                          lambda s=seed: join(s, datasets[s % 2], validators[s % 2])) for seed in range(4)]
        results = fit_runs(runs, slots=2, device="cpu", checked=checked, lazy_rows=lazy)
        outcome[lazy] = (results, models, states)
    eager_results, eager_models, eager_states = outcome[False]
    lazy_results, lazy_models, lazy_states = outcome[True]
    for seed in range(4):
        assert eager_results[seed].history == lazy_results[seed].history
        for (n, a), b in zip(eager_models[seed].named_parameters(), lazy_models[seed].parameters()):
            assert torch.equal(a, b), (seed, n)
    assert eager_states.keys() == lazy_states.keys() and eager_states
    for index in eager_states:
        for a, b in zip(eager_states[index], lazy_states[index]):
            for key in a:
                if key != "torch_rng":
                    assert torch.equal(a[key], b[key]), (index, key)
