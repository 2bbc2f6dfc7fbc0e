"""A step that can be captured: the engine's training step recorded once per input shape, then replayed.

On a GPU a step of the engine is thousands of small kernels, and at K = 16 runs the host's launching of them, not
the device, sets the pace (docs/finetune.md, "Where a step's time goes"). A CUDA graph records a step's kernels once
and replays them with one launch. What it replays is fixed at capture: the same kernels, on the same memory, with
the same host values (a learning rate passed as a Python float is a constant of the graph). So a step can be
captured when

* everything that changes from step to step is a tensor at a fixed address: the batch is copied into static input
  buffers (one set per input shape), each run's learning rates into the optimizer's rate buffer
  (:meth:`~._stacked_optim._StackedOptimizer.set_factors`), outside the graph;
* the step reads nothing back from the device (no ``.item()``, no branch on a tensor's value) and makes no shape
  from values (no ``nonzero``, ``unique``, boolean indexing): both would synchronise, and a graph cannot hold them;
* it reads, from outside itself, only tensors that live from step to step (weights, moments, clip and rate
  buffers, the input buffers): a tensor made anew before each step would be read at its capture-time address;
* it has no Python side effect that a later step needs (a replay runs no Python).

The engine's step (:func:`diagnostics.finetune._fused.fit_runs` with ``capture=True``) meets them: batches are
padded to width buckets (:func:`bucket_width`), so a handful of shapes recur; the partial-batch weights are always
an input; the optimizer's ``apply()`` reads its rates from the device; a group of one gets the additive 4-D mask
(Hugging Face's mask builder asks the device whether the batch has padding); the word embedding's norm is taken over
the whole gradient (lazy rows, which pick rows on the host, cannot be captured, nor skipping padding, which gathers
at positions read on the host).

:class:`StepGraphs` runs a step function through graphs, one per input shape: the first step at a shape runs
eagerly (a warm-up, as CUDA graphs need), the next is captured and replayed, and every later one replayed. On CUDA
the graphs are ``torch.cuda.CUDAGraph``. Elsewhere they are :class:`RecordedStep`, this module's stand-in with the
same contract, which makes the claim checkable on a CPU: capture records every aten op the step dispatches (below
autograd, ``vmap`` and autocast, so the forward, backward and optimizer ops themselves) with the tensors it reads,
refuses what a CUDA capture could not hold (:class:`CaptureError`: host reads, value-made shapes, tensors made from
host data, tensors from outside that are not declared static), and leaves every tensor as it was (a CUDA capture
runs nothing); replay runs the recorded ops again on the static tensors' current contents, with the captured host
values, and no Python of the step. A step whose replay equals its eager run on new inputs and rates, bit for bit
and with dropout drawing from the same generator, holds no hidden host value (``tests/finetune/test_capture.py``).
:meth:`RecordedStep.signature` gives what a graph fixes (ops, host values, shapes, static tensors read), so two
captures of one shape can be compared directly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_unflatten

__all__ = ["CaptureError", "RecordedStep", "StepGraphs", "bucket_width", "static_tensors"]

#: Ops that give the host a value of the device's: on CUDA a synchronisation, in a graph a value frozen at capture.
_HOST_READS = frozenset({"aten::_local_scalar_dense", "aten::item", "aten::equal", "aten::is_nonzero",
                         "aten::allclose", "aten::is_set_to"})
#: Ops whose output's shape depends on their inputs' values.
_VALUE_SHAPED = frozenset({"aten::nonzero", "aten::nonzero_numpy", "aten::argwhere", "aten::masked_select",
                           "aten::_unique", "aten::_unique2", "aten::unique_dim", "aten::unique_consecutive",
                           "aten::unique_dim_consecutive", "aten::bincount"})
#: Ops that turn host data into a tensor inside the step (``torch.tensor(...)``): a constant of the graph.
_HOST_DATA = frozenset({"aten::lift_fresh", "aten::lift_fresh_copy"})
#: Ops that index with a boolean mask (which makes a shape from its values).
_INDEXING = frozenset({"aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_"})


class CaptureError(RuntimeError):
    """A step that cannot be captured: it reads the device from the host, makes a shape from values, or reads a
    tensor from outside that does not live from step to step."""


def bucket_width(longest: int, quantum: int, limit: int | None = None) -> int:
    """The width a step's batches are padded to: ``longest`` rounded up to a multiple of ``quantum``.

    Parameters
    ----------
    longest : int
        The longest example of the step's batches (tokens).
    quantum : int
        The buckets' step (0 or 1: no rounding).
    limit : int, optional
        The widest bucket (the inputs' maximum length): a rounded width above it is ``limit``, and ``longest``
        itself where it is above.

    Returns
    -------
    int
        The padded width (at least ``longest``).
    """
    if quantum <= 1:
        return longest
    width = -(-longest // quantum) * quantum
    if limit is not None:
        width = min(width, max(limit, longest))
    return width


def _hazard(func, args: tuple, kwargs: dict) -> str | None:
    """Why ``func`` on these arguments cannot be in a graph, or ``None``."""
    name = func._schema.name
    if name in _HOST_READS:
        return "reads a value of the device on the host"
    if name in _VALUE_SHAPED:
        return "makes a shape from the values of its input"
    if name in _HOST_DATA:
        return "makes a tensor of host data"
    if name == "aten::repeat_interleave" and kwargs.get("output_size") is None and \
            isinstance(args[0] if args else None, torch.Tensor) and func._overloadname == "Tensor":
        return "makes a shape from the values of its input (no output_size)"
    if name in _INDEXING:
        indices, _ = tree_flatten(args[1:2])
        if any(isinstance(t, torch.Tensor) and t.dtype in (torch.bool, torch.uint8) for t in indices):
            return "indexes with a boolean mask (a shape made from its values)"
    return None


def _written(func, args: tuple, kwargs: dict) -> Iterable[torch.Tensor]:
    """The tensors ``func`` writes in place (by its schema's alias annotations)."""
    for position, argument in enumerate(func._schema.arguments):
        alias = argument.alias_info
        if alias is None or not alias.is_write:
            continue
        value = args[position] if position < len(args) else kwargs.get(argument.name)
        for tensor in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(tensor, torch.Tensor):
                yield tensor


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage().data_ptr()


_SLOT, _STATIC, _CONST = 0, 1, 2


class _Recorder(TorchDispatchMode):
    """Record every op dispatched while active: its arguments as slots (tensors made during the recording), static
    tensors or constants, and which of its outputs are new slots; refuse what a graph cannot hold."""

    def __init__(self, static: set[int]):
        super().__init__()
        self.static = static
        self.program: list[tuple[Any, list, Any, list[tuple[int, int]]]] = []
        self.values: list[torch.Tensor] = []  # every tensor made while recording, held so that ids stay unique
        self.slots: dict[int, int] = {}
        self.saved: dict[int, tuple[torch.Tensor, torch.UntypedStorage]] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        hazard = _hazard(func, args, kwargs)
        if hazard is not None:
            raise CaptureError(f"{func}: {hazard}")
        flat, spec = tree_flatten((args, kwargs))
        refs = []
        for value in flat:
            if not isinstance(value, torch.Tensor):
                refs.append((_CONST, value))
                continue
            slot = self.slots.get(id(value))
            if slot is not None:
                refs.append((_SLOT, slot))
            elif value.numel() == 0 or _storage(value) in self.static:
                refs.append((_STATIC, value))
            elif value.dim() == 0 and value.device.type == "cpu":  # a host scalar: the graph keeps its value
                refs.append((_CONST, value.clone()))
            else:
                raise CaptureError(f"{func} reads a tensor of shape {tuple(value.shape)} that is neither made by the "
                                   "step nor one of its static tensors: a graph would read it where it was at capture")
        for tensor in _written(func, args, kwargs):  # a static tensor's contents before the step wrote them
            key = _storage(tensor)
            if key in self.static and key not in self.saved and tensor.numel():
                self.saved[key] = (tensor, tensor.untyped_storage().clone())
        out = func(*args, **kwargs)
        outputs, _ = tree_flatten(out)
        inputs = [value for value in flat if isinstance(value, torch.Tensor)]
        new = []
        for position, value in enumerate(outputs):
            if isinstance(value, torch.Tensor) and not any(value is x for x in inputs) and id(value) not in self.slots:
                self.slots[id(value)] = len(self.values)
                new.append((position, len(self.values)))
                self.values.append(value)
        self.program.append((func, refs, spec, new))
        return out

    def restore(self) -> None:
        """Give every static tensor the step wrote its contents before the recording."""
        for tensor, before in self.saved.values():
            tensor.untyped_storage().copy_(before)
        self.saved.clear()


class RecordedStep:
    """A step recorded once and replayed: the CPU's stand-in for a CUDA graph, with a CUDA graph's contract.

    Capturing runs ``step`` once while recording the aten ops it dispatches, then gives every static tensor the
    contents it had before and torch's CPU generator its state, so that, as with a CUDA capture, nothing has moved.
    :meth:`replay` runs the recorded ops again: on the static tensors' contents of the moment, with the host values
    of the capture, drawing random numbers from torch's generator as the step does.

    Parameters
    ----------
    step : callable
        ``step() -> torch.Tensor``, the work to record (here: forward, backward and optimizer update).
    static : iterable of torch.Tensor
        The tensors the step may read from outside itself (weights, moments, rate and input buffers); reading
        any other tensor made before the step raises :class:`CaptureError`, as does any op a graph cannot hold.

    Raises
    ------
    CaptureError
        The step cannot be captured (the static tensors are restored first).
    """

    def __init__(self, step: Callable[[], torch.Tensor], static: Iterable[torch.Tensor]):
        recorder = _Recorder({_storage(t) for t in static if t.numel()})
        rng = torch.get_rng_state()
        try:
            with recorder:
                output = step()
            self._output = recorder.slots.get(id(output))
            if self._output is None:
                raise CaptureError("the step's output is not a tensor it makes")
        finally:
            recorder.restore()
            torch.set_rng_state(rng)
        self._program = recorder.program
        self._size = len(recorder.values)
        # free each slot after its last reader (the replay holds what the eager step would, not every tensor)
        last: dict[int, int] = {}
        for index, (_, refs, _, new) in enumerate(self._program):
            for _, slot in new:
                last.setdefault(slot, index)
            for kind, slot in refs:
                if kind == _SLOT:
                    last[slot] = index
        last.pop(self._output, None)
        self._frees: list[list[int]] = [[] for _ in self._program]
        for slot, index in last.items():
            self._frees[index].append(slot)

    @property
    def ops(self) -> int:
        """Number of recorded ops."""
        return len(self._program)

    def replay(self) -> torch.Tensor:
        """Run the recorded step again; its output (a new tensor at each replay).

        Returns
        -------
        torch.Tensor
            What the step returned, computed anew.
        """
        values: list[torch.Tensor | None] = [None] * self._size
        with torch.no_grad(), torch.autocast("cpu", enabled=False):
            for (func, refs, spec, new), frees in zip(self._program, self._frees):
                flat = [values[ref] if kind == _SLOT else ref for kind, ref in refs]
                args, kwargs = tree_unflatten(flat, spec)
                out = func(*args, **kwargs)
                if new:
                    outputs, _ = tree_flatten(out)
                    for position, slot in new:
                        values[slot] = outputs[position]
                for slot in frees:
                    values[slot] = None
        return values[self._output]

    def signature(self) -> list[tuple]:
        """What a graph of this step fixes: per op its name, host values, and the shape, strides and dtype of every
        tensor it reads (a static tensor's by its storage and offset).

        Two captures with equal signatures are one graph: the one replays the other's step.

        Returns
        -------
        list of tuple
            One tuple per op, in order.
        """
        storages: dict[int, int] = {}
        out = []
        for func, refs, _, _ in self._program:
            args = []
            for kind, ref in refs:
                if kind == _CONST:
                    args.append(("const", ref.tolist() if isinstance(ref, torch.Tensor) else repr(ref)))
                elif kind == _SLOT:
                    args.append(("slot", ref))
                else:
                    storage = storages.setdefault(_storage(ref), len(storages))
                    args.append(("static", storage, ref.storage_offset(), tuple(ref.shape), ref.stride(),
                                 str(ref.dtype)))
            out.append((str(func), tuple(args)))
        return out


class _CudaGraph:
    """``step`` captured as one ``torch.cuda.CUDAGraph`` (in ``pool``, on ``stream``); :meth:`replay` runs it."""

    def __init__(self, step: Callable[[], torch.Tensor], pool, stream, mode: str):
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=pool, stream=stream, capture_error_mode=mode):
            self.output = step()

    def replay(self) -> torch.Tensor:
        self.graph.replay()
        return self.output


class StepGraphs:
    """A step function run through graphs, one per shape of its inputs: copy in, warm up, capture, replay.

    Each call copies the step's host tensors into static buffers of their shapes, runs ``prepare()`` (the writes to
    other static buffers the step reads, such as the learning rates) and then the step: eagerly for the first
    ``warmup`` calls at a shape, through a graph captured at the next call and replayed at every later one. On CUDA
    every call runs on one side stream (a graph is captured on the stream its step's autograd ran on), ordered after
    and before the caller's stream. Elsewhere the graphs are :class:`RecordedStep`.

    Parameters
    ----------
    step : callable
        ``step(inputs) -> torch.Tensor``: the step on a dict of static input buffers. Its output is copied at each
        call (a graph overwrites its output at the next replay).
    static : callable
        ``static() -> list of torch.Tensor``: the tensors the step reads and writes that live from step to step
        (the input buffers are added), asked at each capture.
    device : str
        Torch device of the buffers.
    warmup : int
        Eager calls at a shape before its capture.
    mode : str
        CUDA's ``capture_error_mode``.
    """

    def __init__(self, step: Callable[[dict[str, torch.Tensor]], torch.Tensor],
                 static: Callable[[], list[torch.Tensor]], device: str, *, warmup: int = 1, mode: str = "relaxed"):
        self.step, self.static, self.device = step, static, device
        self.warmup, self.mode = warmup, mode
        self.cuda = torch.device(device).type == "cuda"
        self.stream = torch.cuda.Stream(device) if self.cuda else None
        self.buffers: dict[tuple, dict[str, torch.Tensor]] = {}
        self.graphs: dict[tuple, Any] = {}
        self.calls: dict[tuple, int] = {}
        self.pool = None
        #: Per call: ``"eager"``, ``"capture"`` (captured, then replayed) or ``"replay"``; ``"clear"`` at each
        #: :meth:`clear`.
        self.log: list[str] = []

    def clear(self) -> None:
        """Forget every graph and buffer (the tensors the step reads were made anew)."""
        self.buffers, self.graphs, self.calls, self.pool = {}, {}, {}, None
        self.log.append("clear")

    def __call__(self, host: dict[str, torch.Tensor], prepare: Callable[[], None] | None = None) -> torch.Tensor:
        """Run the step on ``host``'s tensors (copied to the device's static buffers of their shapes).

        Parameters
        ----------
        host : dict of str to torch.Tensor
            The step's inputs of this call, on the host (pinned on CUDA for copies that do not wait).
        prepare : callable, optional
            Called before the step, on the step's stream (e.g. the optimizer's ``set_factors``).

        Returns
        -------
        torch.Tensor
            A copy of the step's output.
        """
        key = tuple((name, tuple(t.shape), t.dtype) for name, t in host.items())
        context = torch.cuda.stream(self.stream) if self.cuda else contextlib.nullcontext()
        caller = torch.cuda.current_stream(self.device) if self.cuda else None
        if self.cuda:
            self.stream.wait_stream(caller)
        with context:
            buffers = self.buffers.get(key)
            if buffers is None:
                buffers = self.buffers[key] = {name: torch.empty(t.shape, dtype=t.dtype, device=self.device)
                                               for name, t in host.items()}
            for name, tensor in host.items():
                buffers[name].copy_(tensor, non_blocking=True)
            if prepare is not None:
                prepare()
            graph = self.graphs.get(key)
            if graph is None and self.calls.get(key, 0) < self.warmup:
                self.calls[key] = self.calls.get(key, 0) + 1
                self.log.append("eager")
                output = self.step(buffers)
            else:
                if graph is None:
                    graph = self.graphs[key] = self._capture(buffers)
                    self.log.append("capture")
                else:
                    self.log.append("replay")
                output = graph.replay()
            output = output.clone()
        if self.cuda:
            caller.wait_stream(self.stream)
            output.record_stream(caller)
        return output

    def _capture(self, buffers: dict[str, torch.Tensor]):
        def step() -> torch.Tensor:
            return self.step(buffers)

        if self.cuda:
            if self.pool is None:
                self.pool = torch.cuda.graph_pool_handle()
            return _CudaGraph(step, self.pool, self.stream, self.mode)
        return RecordedStep(step, [*self.static(), *buffers.values()])


def static_tensors(stack, optimizer) -> list[torch.Tensor]:
    """Every tensor the engine's step reads or writes that lives from step to step: the stack's weights, frozen
    parameters and buffers, and the optimizer's state.

    Parameters
    ----------
    stack : StackedClassifiers
        The group's runs.
    optimizer : StackedAdamW or StackedBertAdam
        Their optimizer.

    Returns
    -------
    list of torch.Tensor
        The tensors (views of them count as them).
    """
    return [*stack.params.values(), *stack.shared.values(), *stack.buffers.values(),
            *optimizer.static_tensors()]

