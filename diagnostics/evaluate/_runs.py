"""An evaluation's run folder: written through the run store's public writers, in one function.

An evaluation is stored as a run of the store (``<out>/<experiment>/<language>/<model>/seed=<k>/``) with the files
every finished run holds (the run store's ``RUN_FILES``), so the store's readers, its integrity checks and the
statistics treat it as a trained run. ``config.json`` holds ``run`` (the coordinates and the run hash of the
``sweep`` section), ``sweep`` (the inference settings as sweep settings: model, language, seed, maximum length,
batch, precision; nothing was trained) and ``evaluation`` (what was evaluated: the model's folder, revision and
fingerprint, the data sets and the label rule applied). A finished evaluation is recognised by its
:func:`evaluation_key`; :func:`write_evaluation_run` is the one place that writes into a run folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd


#: The entries of ``config.json``'s ``evaluation`` record that decide its predictions: a finished run with the same
#: values is not evaluated again.
KEY_FIELDS = ("fingerprint", "datasets", "label_rule", "max_length", "truncation", "precision")


def evaluation_key(record: dict[str, Any]) -> dict[str, Any]:
    """The part of an ``evaluation`` record that decides its predictions (see :data:`KEY_FIELDS`).

    Parameters
    ----------
    record : dict
        An ``evaluation`` record (``config.json``).

    Returns
    -------
    dict
        The fields of :data:`KEY_FIELDS`, JSON-normalised (tuples as lists).
    """
    return json.loads(json.dumps({k: record.get(k) for k in KEY_FIELDS}, default=str))


def stored_evaluation(path: Path) -> dict[str, Any] | None:
    """The ``evaluation`` record of a finished run folder, ``None`` when the run is not finished or not one.

    Parameters
    ----------
    path : Path
        A run folder.

    Returns
    -------
    dict or None
        The record, or ``None``.
    """
    from diagnostics.finetune import RUN_CONFIG, is_done

    if not is_done(path):
        return None
    try:
        config = json.loads((Path(path) / RUN_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    record = config.get("evaluation") if isinstance(config, dict) else None
    return record if isinstance(record, dict) else None


def write_evaluation_run(path: Path, *, run: dict[str, Any], sweep: dict[str, Any], evaluation: dict[str, Any],
                         metrics: dict[str, Any], predictions: pd.DataFrame, device: str, autocast: str) -> None:
    """Write one evaluation into its run folder under the run's lease, ``DONE`` last (with the checksums of the
    other files).

    Every file goes through the lease's writer (:func:`diagnostics.finetune.owned_run`); a killed earlier attempt
    (no ``DONE``) is cleared first, and a run another process holds raises ``RunLockedError``.

    Parameters
    ----------
    path : Path
        The run folder (:func:`diagnostics.finetune.run_dir`).
    run : dict
        The coordinates and ``run_hash`` (``config.json``'s ``run``).
    sweep : dict
        The inference settings as sweep settings (``config.json``'s ``sweep``).
    evaluation : dict
        What was evaluated (``config.json``'s ``evaluation``).
    metrics : dict
        ``metrics.json``.
    predictions : pandas.DataFrame
        The predictions table of the run.
    device : str
        The torch device used (``versions.json``).
    autocast : str
        The autocast dtype used (``versions.json``).
    """
    from diagnostics.finetune import RUN_CONFIG, library_versions, owned_run

    with owned_run(path) as writer:
        writer.write_json(RUN_CONFIG, {"run": run, "sweep": sweep, "evaluation": evaluation})
        writer.write_json("versions.json", library_versions() | {"device": device, "autocast": autocast})
        writer.write_json("metrics.json", metrics)
        writer.write_predictions(predictions)
        writer.mark_done({"kind": "evaluation", "rows": int(len(predictions))})
