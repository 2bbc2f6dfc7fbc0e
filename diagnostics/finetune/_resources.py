"""Resource figures of a run: the training run's own, and the MOROCCO protocol's figures of its model.

MOROCCO (Kapusta et al.) compares models with ``fitness = Q * Tp / log(M)``: ``Q`` a quality score in [0, 1],
``Tp`` inference records per second and ``M`` peak inference memory in bytes, measured by a protocol (inference
only, ``N = 2000`` records at batch size 32, model initialisation time left out, median of 5 repetitions; see
:mod:`diagnostics.models._measure`). A run's ``metrics.json -> resources`` holds two families of figures:

* the training run's own (``train_peak_memory_mib``: training and inference together; ``fitness_train_mib``: the
  earlier, non-protocol figure ``Q * Tp_run / log(M_MiB)`` with the run's diagnostic-set throughput), kept for
  comparison with older stores but not MOROCCO's numbers: the unit of ``M`` is not a constant factor inside the
  logarithm (``log M_MiB = log M_bytes - 20 log 2``), so these can order models differently;
* the protocol's (``morocco``: the measurement of the run's model; ``fitness``: ``Q * Tp / log(M_bytes)`` with the
  run's best validation accuracy as ``Q``). Tp and M do not depend on the fine-tuning seed, so the model is
  measured once per run store and device type (:func:`protocol_figures`): automatically on CUDA, where the
  protocol takes seconds; on CPU only when a measurement is stored already (``diagnostics models measure FOLDER
  --store OUTPUT_DIR``), since on a 2-core CPU host the protocol costs minutes per model (far more than a demo
  run) — without one, ``morocco`` says so and ``fitness`` is ``None``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from diagnostics.models import PeakMemory, current_rss_bytes, fitness

__all__ = ["PeakMemory", "current_rss_bytes", "fitness", "fitness_mib", "protocol_figures"]


def fitness_mib(quality: float, throughput: float, memory_mib: float) -> float | None:
    """Compute ``Q * Tp / log(M)`` with ``M`` in MiB: the run's earlier, non-protocol figure (``fitness_train_mib``).

    Use :func:`fitness` (bytes) for MOROCCO's fitness; this one is kept for comparison with older run stores.
    ``quality`` is in [0, 1], ``throughput`` in inference records per second. ``None`` when undefined (memory <= 1
    MiB) or an input is ``None``.
    """
    if memory_mib is None or memory_mib <= 1 or throughput is None or quality is None:
        return None
    return quality * throughput / math.log(memory_mib)


def protocol_figures(model_path: str | Path, language: str, device: str, store: str | Path,
                     quality: float | None) -> dict[str, Any]:
    """Attach the MOROCCO protocol's figures of a run's model: stored in the run store, or measured now on CUDA.

    The protocol measures the 2-label classifier built from ``model_path`` (inference cost does not depend on the
    head's weights) on ``language``'s bundled diagnostic set; measurements are kept in ``store`` (``output_dir``).
    ``quality`` is ``Q``, the run's best validation accuracy.

    Returns ``{"morocco": {...} or {"measured": False, "reason": ...}, "fitness": float or None}``; ``morocco``
    holds the measurement's medians (``init_s, throughput, peak_memory_bytes, memory_kind``), its settings and
    ``measured_now`` (whether this run measured it). A measurement that fails (a model without ``.safetensors``
    weights to fingerprint, CUDA out of memory ...) is reported in ``reason``, never raised: the run is trained
    already. Two workers of a sweep that find none at the same time both measure (the later write wins).
    """
    from diagnostics.models import default_dataset, load_measurement, measure_model, save_measurement

    try:
        dataset = default_dataset(language)
    except ValueError as err:
        return {"morocco": {"measured": False, "reason": str(err)}, "fitness": None}
    measured_now = False
    try:
        found = load_measurement(store, model_path, dataset=dataset, device=device)
        if found is None and device.startswith("cuda"):
            found = measure_model(model_path, dataset=dataset, device=device)
            save_measurement(found, store)
            measured_now = True
    except (OSError, ValueError, RuntimeError) as err:  # a side measurement never fails a trained run
        return {"morocco": {"measured": False, "reason": f"{type(err).__name__}: {err}"}, "fitness": None}
    if found is None:
        return {"morocco": {"measured": False,
                            "reason": f"no stored protocol measurement of this model on {device} (it costs minutes "
                                      f"on a CPU; store one with: diagnostics models measure {model_path} "
                                      f"--language {language} --store {store})"},
                "fitness": None}
    figures = found.with_quality(quality).to_dict()
    figures.pop("repetitions", None)
    keep = ("dataset", "records", "batch_size", "repeats", "device", "threads", "init_s", "throughput",
            "peak_memory_bytes", "peak_memory_mib", "memory_kind", "measured_at_load_average")
    morocco = {key: figures[key] for key in keep if key in figures} | {"measured": True, "measured_now": measured_now}
    return {"morocco": morocco, "fitness": figures["fitness"]}
