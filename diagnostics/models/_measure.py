"""Resource figures of a model folder by the MOROCCO protocol: init time, inference throughput, memory, fitness.

MOROCCO (Kapusta et al.) compares models by quality, speed and memory together with
``fitness = Q * Tp / log(M)``: ``Q`` a quality score in [0, 1], ``Tp`` inference throughput in records per second
and ``M`` the peak inference memory in **bytes**. Its protocol, followed by :func:`measure_model`:

* inference only (no training, no optimizer state, no gradients);
* ``N = 2000`` records (here: the bundled diagnostic set of a language by default, cycled when it has fewer),
  processed in batches of 32;
* the model initialisation time ``T_init`` is measured on its own and left out of the throughput:
  ``Tp = N / (T_total - T_init)``;
* every figure is the median of 5 repetitions.

What is measured, exactly, in each repetition:

* ``init_s``: wall time of building the classifier from the folder (``AutoModelForSequenceClassification``,
  2 labels; a base model gets a freshly initialised head, which costs the same at inference), moving it to the
  device and switching it to eval mode. The tokenizer is loaded once before the repetitions (it is shared by every
  folder with the same tokenizer files, see :func:`~diagnostics.models.load_tokenizer`); its first load
  time is reported apart as ``tokenizer_load_s``. The model's Python code is imported once before the first
  repetition too (a one-off cost of a fresh process, several seconds for transformers, that would otherwise land
  in the first ``init_s``).
* ``inference_s``: wall time of turning the ``N`` records into predictions: tokenising each batch (premise,
  hypothesis; padded to the batch's longest, truncated at ``max_length``), the forward pass without gradients, the
  arg-max, and on CUDA the copy back to the host (the clock stops after a synchronisation). ``Tp = N /
  inference_s``.
* ``peak_memory_bytes``: on CUDA, ``torch.cuda.max_memory_allocated`` from a reset just before loading, less what
  was allocated before (weights + activations of the repetition; the caching allocator's reserve and the CUDA
  context are not counted). On CPU, the peak resident set size (RSS) of the process while the repetition runs
  (model load + inference), sampled every 5 ms by a thread, less the RSS just before loading: the weights, the
  activations and the tokenised batches, plus whatever else the process allocates meanwhile (other threads).
  RSS is coarser than CUDA's counter: memory the allocator keeps from an earlier repetition is not seen again,
  which is one reason for the median; and weights that stay memory-mapped from the ``.safetensors`` file count
  only as far as they are touched (on CUDA every weight is copied and counted). Compare CPU figures with CPU
  figures, CUDA with CUDA.

Measurements can be stored in a run store (:func:`save_measurement`, read back by :func:`load_measurement`), keyed
by the model's fingerprint, the records' dataset, the device type and the protocol's settings: the fine-tuning
sweep attaches a stored measurement of its model to every run (the figures do not depend on the fine-tuning seed;
only ``Q`` does).
"""

from __future__ import annotations

import gc
import math
import os
import resource
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

#: The protocol's defaults: records per repetition, batch size, repetitions.
PROTOCOL_RECORDS = 2000
PROTOCOL_BATCH_SIZE = 32
PROTOCOL_REPEATS = 5


def current_rss_bytes() -> int:
    """Measure the resident set size of this process (``/proc/self/statm``; falls back to ``ru_maxrss``).

    Returns
    -------
    int
        Bytes.
    """
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class PeakMemory:
    """Peak RSS of this process while the ``with`` block runs, sampled by a daemon thread every ``interval`` s.

    (``ru_maxrss`` is the peak of the whole process lifetime, useless for the second run of an in-process sweep.)
    The peak in bytes is in ``peak``, the RSS when the block started in ``start``.

    Parameters
    ----------
    interval : float
        Seconds between samples.
    """

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.peak = 0
        self.start = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, current_rss_bytes())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self.start = self.peak = current_rss_bytes()
        self._stop.clear()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.peak = max(self.peak, current_rss_bytes())


def fitness(quality: float | None, throughput: float | None, memory_bytes: float | None) -> float | None:
    """Compute the MOROCCO fitness ``Q * Tp / log(M)`` with ``M`` in bytes (natural logarithm).

    Parameters
    ----------
    quality : float or None
        Quality score in [0, 1] (e.g. an accuracy).
    throughput : float or None
        Inference records per second.
    memory_bytes : float or None
        Peak inference memory in bytes.

    Returns
    -------
    float or None
        The fitness; ``None`` when an input is ``None`` or the memory is at most 1 byte (``log(M) <= 0``).

    Notes
    -----
    The unit of ``M`` matters: ``log(M_MiB) = log(M_bytes) - 20 log 2`` is a shift, not a rescaling, so fitness
    computed from MiB can order two models differently than fitness computed from bytes (the log base, by contrast,
    rescales every fitness by the same factor and never reorders).
    """
    if quality is None or throughput is None or memory_bytes is None or memory_bytes <= 1:
        return None
    return float(quality) * float(throughput) / math.log(float(memory_bytes))


@dataclass
class Measurement:
    """The protocol's figures for one model folder (medians over the repetitions) and each repetition's own.

    Parameters
    ----------
    folder : str
        The measured model folder.
    dataset : str
        Where the records came from (a registered dataset name, or ``"<records>"`` for records passed in).
    records : int
        Records per repetition (``N``).
    batch_size : int
        Records per forward pass.
    repeats : int
        Number of repetitions.
    device : str
        ``cpu`` or ``cuda[:i]``.
    threads : int
        ``torch.get_num_threads()`` during the measurement.
    max_length : int
        Truncation length of the tokenised pairs.
    init_s : float
        Median model initialisation time ``T_init`` (s).
    inference_s : float
        Median time of the ``N`` records without initialisation (s).
    throughput : float
        Median of the repetitions' ``N / inference_s`` (records/s).
    peak_memory_bytes : int
        Median peak inference memory ``M`` (bytes).
    memory_kind : str
        ``cuda_max_allocated`` or ``rss_increase`` (see the module docstring).
    tokenizer_load_s : float
        Time of the one tokenizer load before the repetitions (0 when it was cached already).
    quality : float or None
        ``Q`` when given.
    fitness : float or None
        ``Q * Tp / log(M_bytes)`` when ``quality`` is given.
    repetitions : list of dict
        Per repetition: ``init_s, inference_s, total_s, records, batches, largest_batch, throughput,
        peak_memory_bytes``.
    """

    folder: str
    dataset: str
    records: int
    batch_size: int
    repeats: int
    device: str
    threads: int
    max_length: int
    init_s: float
    inference_s: float
    throughput: float
    peak_memory_bytes: int
    memory_kind: str
    tokenizer_load_s: float
    quality: float | None = None
    fitness: float | None = None
    repetitions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the measurement as a JSON-serialisable dict.

        Every field, plus ``peak_memory_mib`` for reading convenience (the fitness uses bytes).
        """
        return asdict(self) | {"peak_memory_mib": round(self.peak_memory_bytes / 2**20, 2)}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Measurement:
        """Rebuild a measurement from :meth:`to_dict`'s output (extra keys are ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})

    def with_quality(self, quality: float | None) -> Measurement:
        """Return a copy with another quality score and the fitness that goes with it.

        ``quality`` is ``Q`` in [0, 1]; the resource figures stay the same.
        """
        values = asdict(self) | {"quality": quality,
                                 "fitness": fitness(quality, self.throughput, self.peak_memory_bytes)}
        return Measurement(**values)


def default_dataset(language: str) -> str:
    """Name the bundled diagnostic set of a language (the protocol's default records).

    Parameters
    ----------
    language : str
        Language code (``en``, ``ru``, ``sv`` ...).

    Returns
    -------
    str
        The first bundled dataset of kind ``diagnostic`` registered for the language (``axb``, ``lidirus``,
        ``swediagnostics``).

    Raises
    ------
    ValueError
        When the language has no bundled diagnostic set (pass ``dataset=`` or ``records=`` instead).
    """
    from diagnostics.data import REGISTRY

    for spec in REGISTRY.values():
        if spec.kind == "diagnostic" and spec.language == language and spec.folder is not None:
            return spec.name
    bundled = sorted({s.language for s in REGISTRY.values() if s.kind == "diagnostic" and s.folder is not None})
    raise ValueError(f"no bundled diagnostic set for language {language!r} (bundled: {', '.join(bundled)}); "
                     "name a dataset instead")


def protocol_pairs(frame, records: int) -> list[tuple[str, str]]:
    """Take ``records`` (premise, hypothesis) pairs from a dataset table, cycling through it when it is shorter.

    ``frame`` needs ``premise`` and ``hypothesis`` columns; the pairs come in table order, repeated as often as
    needed. Raises ``ValueError`` for an empty table, missing columns or ``records < 1``.
    """
    missing = [c for c in ("premise", "hypothesis") if c not in frame.columns]
    if missing:
        raise ValueError(f"the records need premise and hypothesis columns, missing {missing}")
    if records < 1:
        raise ValueError(f"records: expected a number >= 1, found {records}")
    if len(frame) == 0:
        raise ValueError("the dataset has no records")
    pairs = list(zip(frame["premise"].astype(str), frame["hypothesis"].astype(str)))
    return [pairs[i % len(pairs)] for i in range(records)]


def _load_model(folder: Path, device: str):
    """Build the 2-label classifier of ``folder`` on ``device`` in eval mode (what ``init_s`` times)."""
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # a base model's "newly initialised head" notice is expected
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        model = AutoModelForSequenceClassification.from_pretrained(str(folder), num_labels=2)
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    return model.to(device).eval()


def _import_model_class(folder: Path) -> None:
    """Import the classifier's modelling code before the clock runs (a one-off cost of the process, not of init)."""
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING

    config = AutoConfig.from_pretrained(str(folder))
    try:
        MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING[type(config)]
    except KeyError:
        pass  # from_pretrained reports an unsupported architecture itself


def _infer(model, tokenizer, pairs: list[tuple[str, str]], batch_size: int, max_length: int,
           device: str) -> tuple[int, int, int]:
    """Predict every pair in batches; returns (records predicted, batches, largest batch)."""
    import torch

    done = batches = largest = 0
    with torch.inference_mode():
        for start in range(0, len(pairs), batch_size):
            chunk = pairs[start:start + batch_size]
            encoded = tokenizer([p for p, _ in chunk], [h for _, h in chunk], padding=True, truncation=True,
                                max_length=max_length, return_tensors="pt")
            encoded = {k: v.to(device) for k, v in encoded.items()}
            predicted = model(**encoded).logits.argmax(dim=-1).cpu()
            done += int(predicted.shape[0])
            batches += 1
            largest = max(largest, int(predicted.shape[0]))
    return done, batches, largest


def _repetition(folder: Path, tokenizer, pairs, batch_size: int, max_length: int, device: str) -> dict[str, Any]:
    """One repetition of the protocol: load (timed apart), predict every record, peak memory of both."""
    import torch

    cuda = device.startswith("cuda")
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        allocated_before = torch.cuda.memory_allocated(device)
    with PeakMemory(interval=0.005) as rss:
        started = time.perf_counter()
        model = _load_model(folder, device)
        if cuda:
            torch.cuda.synchronize(device)
        loaded = time.perf_counter()
        records, batches, largest = _infer(model, tokenizer, pairs, batch_size, max_length, device)
        if cuda:
            torch.cuda.synchronize(device)
        finished = time.perf_counter()
    peak = (torch.cuda.max_memory_allocated(device) - allocated_before) if cuda else rss.peak - rss.start
    del model
    gc.collect()
    inference_s = finished - loaded
    return {"init_s": loaded - started, "inference_s": inference_s, "total_s": finished - started,
            "records": records, "batches": batches, "largest_batch": largest,
            "throughput": records / inference_s if inference_s > 0 else math.inf, "peak_memory_bytes": int(peak)}


def measure_model(folder: str | os.PathLike, *, language: str = "en", dataset: str | None = None, records_from=None,
                  records: int = PROTOCOL_RECORDS, batch_size: int = PROTOCOL_BATCH_SIZE,
                  repeats: int = PROTOCOL_REPEATS, device: str = "cpu", quality: float | None = None,
                  max_length: int | None = None) -> Measurement:
    """Measure a model folder by the MOROCCO protocol (see the module docstring for what is timed and counted).

    Parameters
    ----------
    folder : str or PathLike
        A Hugging Face model folder with its tokenizer (a pretrained encoder or a fine-tuned checkpoint).
    language : str
        Language whose bundled diagnostic set gives the records when neither ``dataset`` nor ``records_from`` is
        given.
    dataset : str, optional
        A registered dataset name to take the records from (its default split).
    records_from : pandas.DataFrame, optional
        A table with ``premise`` and ``hypothesis`` columns to take the records from instead.
    records : int
        ``N``, records per repetition (the dataset is cycled when shorter).
    batch_size : int
        Records per forward pass.
    repeats : int
        Repetitions; every reported figure is their median.
    device : str
        ``cpu``, ``cuda`` or ``cuda:i``.
    quality : float, optional
        ``Q`` in [0, 1]; with it the fitness is computed.
    max_length : int, optional
        Truncation length; default the tokenizer's ``model_max_length`` capped at 512.

    Returns
    -------
    Measurement
        Medians, per-repetition figures and the settings they were measured with.

    Raises
    ------
    ValueError
        A count below 1, a quality outside [0, 1], an unknown device, or records that cannot be built.
    FileNotFoundError
        A folder without tokenizer files.
    """
    import torch

    from ._loading import load_tokenizer

    for name, value in (("records", records), ("batch_size", batch_size), ("repeats", repeats)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name}: expected a whole number >= 1, found {value}")
    if quality is not None and not 0 <= quality <= 1:
        raise ValueError(f"quality: expected a number in [0, 1], found {quality}")
    if not (device == "cpu" or device.startswith("cuda")):
        raise ValueError(f"device: expected cpu, cuda or cuda:i, found {device!r}")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: CUDA is not available here")
    folder = Path(os.fspath(folder))
    if records_from is None:
        from diagnostics.data import load

        dataset = dataset or default_dataset(language)
        records_from = load(dataset)
    pairs = protocol_pairs(records_from, int(records))
    started = time.perf_counter()
    tokenizer = load_tokenizer(folder)
    tokenizer_load_s = time.perf_counter() - started
    if max_length is None:
        max_length = min(int(getattr(tokenizer, "model_max_length", 512) or 512), 512)
    _import_model_class(folder)
    runs = [_repetition(folder, tokenizer, pairs, int(batch_size), int(max_length), device) for _ in range(repeats)]
    peak = statistics.median(r["peak_memory_bytes"] for r in runs)
    result = Measurement(
        folder=str(folder), dataset=dataset or "<records>", records=int(records), batch_size=int(batch_size),
        repeats=int(repeats), device=device, threads=torch.get_num_threads(), max_length=int(max_length),
        init_s=statistics.median(r["init_s"] for r in runs),
        inference_s=statistics.median(r["inference_s"] for r in runs),
        throughput=statistics.median(r["throughput"] for r in runs), peak_memory_bytes=int(round(peak)),
        memory_kind="cuda_max_allocated" if device.startswith("cuda") else "rss_increase",
        tokenizer_load_s=tokenizer_load_s, repetitions=runs)
    return result.with_quality(quality)


def _device_type(device: str) -> str:
    return "cuda" if device.startswith("cuda") else device


def measurement_path(store: str | os.PathLike, folder: str | os.PathLike, *, dataset: str, device: str = "cpu",
                     records: int = PROTOCOL_RECORDS, batch_size: int = PROTOCOL_BATCH_SIZE,
                     repeats: int = PROTOCOL_REPEATS) -> Path:
    """Locate where a run store keeps the protocol measurement of a model.

    ``store`` is a run store (the sweep's ``output_dir``). The fingerprint of ``folder`` names the entry, so a copy
    of the same model finds it too; of ``device`` (``cpu`` or ``cuda[:i]``) only the type counts. The path is
    ``<store>/.cache/morocco/<fingerprint>/<dataset>-<device type>-N<records>-b<batch>-r<repeats>.json``.
    """
    from ._fingerprint import model_fingerprint

    name = f"{dataset}-{_device_type(device)}-N{records}-b{batch_size}-r{repeats}.json"
    return Path(os.fspath(store)) / ".cache" / "morocco" / model_fingerprint(folder)[:16] / name


def save_measurement(measurement: Measurement, store: str | os.PathLike) -> Path:
    """Store a measurement in a run store, where the sweep's runs of the same model find it.

    Parameters
    ----------
    measurement : Measurement
        The measurement (its quality and fitness are not stored: each run has its own ``Q``).
    store : str or PathLike
        The run store (the sweep's ``output_dir``).

    Returns
    -------
    Path
        The JSON file written (atomically).
    """
    import json

    from ..core.io_utils import atomic_path

    path = measurement_path(store, measurement.folder, dataset=measurement.dataset, device=measurement.device,
                            records=measurement.records, batch_size=measurement.batch_size,
                            repeats=measurement.repeats)
    path.parent.mkdir(parents=True, exist_ok=True)
    values = measurement.with_quality(None).to_dict() | {"measured_at_load_average": os.getloadavg()[0]}
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(values, indent=2) + "\n", encoding="utf-8")
    return path


def load_measurement(store: str | os.PathLike, folder: str | os.PathLike, *, dataset: str, device: str = "cpu",
                     records: int = PROTOCOL_RECORDS, batch_size: int = PROTOCOL_BATCH_SIZE,
                     repeats: int = PROTOCOL_REPEATS) -> Measurement | None:
    """Read the stored protocol measurement of a model from a run store.

    Parameters
    ----------
    store : str or PathLike
        The run store.
    folder : str or PathLike
        The model folder.
    dataset : str
        The records' dataset.
    device : str
        ``cpu`` or ``cuda[:i]``.
    records, batch_size, repeats : int
        The protocol's settings.

    Returns
    -------
    Measurement or None
        ``None`` when none is stored (or the file is unreadable).
    """
    import json

    path = measurement_path(store, folder, dataset=dataset, device=device, records=records, batch_size=batch_size,
                            repeats=repeats)
    try:
        return Measurement.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
