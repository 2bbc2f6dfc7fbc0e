"""Write the one predictions table in foreign formats (and the table itself), the inverse of the importers.

Each writer produces what the corresponding tool writes, so that a table exported and imported back is the same
table: a colleague's table (:func:`to_columns`: ids or only the texts, labels as names or codes), the
lm-evaluation-harness ``--log_samples`` file of every run (:func:`to_lm_eval`), and the score array of every run
as ``Trainer.predict`` returns it (:func:`to_trainer`). The table itself is written by the one table writer,
:func:`diagnostics.core.tables.write_table` (re-exported here).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ..core.io_utils import atomic_path
from ..core.schema import CLASS_LABELS, ENTAILMENT, LABELS
from ..core.tables import SUFFIXES, write_table
from ._labels import parse_label_map

#: Log-probability written for a probability of 0 (JSON has no infinity; exp of it is 0.0 in float64).
LOG_FLOOR = -1e4
#: Suffixes :func:`write_table` writes.
TABLE_SUFFIXES = tuple(SUFFIXES)


def _one_dataset(table: pd.DataFrame) -> str:
    names = list(pd.unique(table["dataset"].astype(str)))
    if len(names) != 1:
        raise ValueError(f"export one dataset at a time: the table holds {', '.join(names)}")
    return names[0]


def _runs(table: pd.DataFrame) -> list[str]:
    return [k for k in ("experiment", "language", "model", "pretrain_seed", "seed") if k in table.columns]


def _run_name(values: Mapping) -> str:
    parts = [f"{k}{values[k]}" for k in ("pretrain_seed", "seed") if k in values]
    varying = [str(values[k]) for k in ("experiment", "language", "model") if k in values]
    return "_".join(varying + parts)


def _encoder(label_map) -> dict[str, object]:
    """Label -> the value written for it: the first value a label map gives it, else the label itself."""
    parsed = parse_label_map(label_map)
    if parsed is None:
        return {label: label for label in LABELS}
    out: dict[str, object] = {}
    for value, label in parsed.items():
        out.setdefault(label, int(value) if value.lstrip("-").isdigit() else value)
    missing = [label for label in LABELS if label not in out]
    if missing:
        raise UserInputError(f"label map {label_map!r}: no value for {', '.join(missing)}")
    return out


def to_columns(table: pd.DataFrame, path: str | Path, *, text: bool = False, label_map: str | Mapping | None = None,
               run_column: str = "seed", probability: bool = True, sep: str | None = None) -> Path:
    """Write the table as a colleague would: one row per (run, example), ids or texts, labels as names or codes.

    Parameters
    ----------
    table : pandas.DataFrame
        A predictions table of one dataset.
    path : str or Path
        ``.csv``, ``.tsv``, ``.jsonl`` or ``.parquet``.
    text : bool
        Write ``premise`` and ``hypothesis`` (from the dataset) instead of the ``id``.
    label_map : str or mapping, optional
        Codes for the labels, as the importer reads them (``"0=entailment,1=not_entailment"``); default the names.
    run_column : str
        Name of the seed column.
    probability : bool
        Write ``probability`` when the table has it.
    sep : str, optional
        Separator of a ``.csv`` file.

    Returns
    -------
    Path
        The written file. ``experiment``, ``language`` and ``model`` columns are written when the table holds
        several values of them (import them back with their columns); ``pretrain_seed`` when present.

    Raises
    ------
    ValueError
        A table of several datasets.
    """
    from ..stats import dataset_frame

    dataset = _one_dataset(table)
    encode = _encoder(label_map)
    out = pd.DataFrame(index=table.index)
    for key in ("experiment", "language", "model"):
        if table[key].nunique() > 1:
            out[key] = table[key]
    if text:
        known = dataset_frame(dataset)
        texts = known.drop_duplicates("id").set_index(known["id"].drop_duplicates().astype(str))
        out["premise"] = texts["premise"].reindex(table["example_id"].astype(str)).to_numpy()
        out["hypothesis"] = texts["hypothesis"].reindex(table["example_id"].astype(str)).to_numpy()
    else:
        out["id"] = table["example_id"].astype(str)
    out["label"] = table["label"].map(encode)
    out["prediction"] = table["prediction"].map(encode)
    if "pretrain_seed" in table.columns:
        out["pretrain_seed"] = table["pretrain_seed"]
    out[run_column] = table["seed"]
    if probability and "probability" in table.columns:
        out["probability"] = table["probability"]
    return write_table(out.reset_index(drop=True), path, sep=sep)


def _log_scores(table: pd.DataFrame, order: tuple[str, ...]) -> np.ndarray:
    """Scores (log-probabilities) in class ``order`` whose arg-max (first on ties) is each row's prediction."""
    p = table["probability"].to_numpy(dtype=np.float64)
    if np.isnan(p).any():
        raise ValueError("the table has rows without probability: scores cannot be written for them")
    with np.errstate(divide="ignore"):
        log_ent = np.maximum(np.log(p), LOG_FLOOR)
        log_not = np.maximum(np.log1p(-p), LOG_FLOOR)
    scores = np.column_stack([log_ent if label == ENTAILMENT else log_not for label in order])
    want = np.asarray([order.index(label) for label in table["prediction"]])
    other = 1 - want
    rows = np.arange(len(scores))
    # ties go to the first class (numpy.argmax): nudge the other score by one ulp where that would pick the wrong one
    tie_loses = (scores[rows, want] < scores[rows, other]) | ((scores[rows, want] == scores[rows, other])
                                                               & (want > other))
    scores[rows[tie_loses], other[tie_loses]] = np.nextafter(scores[rows[tie_loses], want[tie_loses]], -np.inf)
    return scores


def to_lm_eval(table: pd.DataFrame, folder: str | Path, *, task: str | None = None,
               with_ids: bool = True) -> list[Path]:
    """Write each run as an lm-evaluation-harness ``--log_samples`` file (``samples_<task>_<run>.jsonl``).

    With ``probability`` the samples are those of a multiple-choice task with the choices ``True`` (entailment)
    and ``False`` (not_entailment), as the harness's RTE tasks: ``filtered_resps`` holds the log-probability of
    each choice. Without it they are those of a generation task answering with the label's name.

    Parameters
    ----------
    table : pandas.DataFrame
        A predictions table of one dataset.
    folder : str or Path
        Created when missing.
    task : str, optional
        Task name in the file names (default the dataset's name).
    with_ids : bool
        Write the example id as ``doc.idx`` (else the doc holds only the texts, and the import matches by text).

    Returns
    -------
    list of Path
        One file per run, in run order.

    Raises
    ------
    ValueError
        A table of several datasets.
    """
    from ..stats import dataset_frame

    dataset = _one_dataset(table)
    known = dataset_frame(dataset)
    ids = known["id"].astype(str).drop_duplicates()
    position = pd.Series(np.arange(len(ids)), index=ids.to_numpy())
    texts = known.drop_duplicates("id").set_index(ids.to_numpy())
    # plain dicts: a pandas scalar look-up per row costs more than the rest of the row
    premise_of, hypothesis_of = dict(zip(texts.index, texts["premise"])), dict(zip(texts.index, texts["hypothesis"]))
    position_of = dict(zip(position.index, position.to_numpy().tolist()))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    keys = _runs(table)
    varying = {k for k in ("experiment", "language", "model") if table[k].nunique() > 1}
    scored = "probability" in table.columns and table["probability"].notna().all()
    paths = []
    for values, part in table.groupby(keys, sort=True):
        run = {k: v for k, v in zip(keys, values) if k not in ("experiment", "language", "model") or k in varying}
        lines = []
        scores = _log_scores(part, tuple(LABELS)) if scored else None
        for i, row in enumerate(part.itertuples(index=False)):
            premise, hypothesis = premise_of[row.example_id], hypothesis_of[row.example_id]
            doc = {**({"idx": int(row.example_id) if row.example_id.isdigit() else row.example_id}
                      if with_ids else {}), "premise": premise, "hypothesis": hypothesis,
                   "label": LABELS.index(row.label)}
            context = f"{premise}\nQuestion: {hypothesis} True or False?\nAnswer:"
            if scored:
                best = int(np.argmax(scores[i]))
                record = {"doc_id": position_of[row.example_id], "doc": doc, "target": LABELS.index(row.label),
                          "arguments": [[context, " True"], [context, " False"]],
                          "resps": [[[float(s), j == best]] for j, s in enumerate(scores[i])],
                          "filtered_resps": [[float(s), j == best] for j, s in enumerate(scores[i])],
                          "filter": "none", "metrics": ["acc"], "acc": float(row.prediction == row.label)}
            else:
                record = {"doc_id": position_of[row.example_id], "doc": doc, "target": row.label,
                          "arguments": [[context, {"until": ["\n"]}]], "resps": [[row.prediction]],
                          "filtered_resps": [row.prediction], "filter": "none", "metrics": ["exact_match"],
                          "exact_match": float(row.prediction == row.label)}
            lines.append(json.dumps(record, ensure_ascii=False, allow_nan=False))
        path = folder / f"samples_{task or dataset}_{_run_name(run)}.jsonl"
        with atomic_path(path) as tmp:
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def to_trainer(table: pd.DataFrame, folder: str | Path, *, fmt: str = "npy") -> list[Path]:
    """Write each run's scores as ``Trainer.predict`` gives them: logits of (not_entailment, entailment) per example.

    The logits are the log-probabilities of the two classes (their softmax is ``probability``), one row per
    example in the dataset's order; ``npz`` and ``json`` add ``label_ids`` (the gold class indices).

    Parameters
    ----------
    table : pandas.DataFrame
        A predictions table of one dataset, with ``probability``, every run covering every example.
    folder : str or Path
        Created when missing.
    fmt : {"npy", "npz", "json"}
        ``numpy.save`` of the logits, ``numpy.savez`` of ``predictions`` and ``label_ids``, or a JSON object of
        both.

    Returns
    -------
    list of Path
        One ``predictions_<run>.<fmt>`` file per run, in run order.

    Raises
    ------
    ValueError
        A table of several datasets, without probabilities, or a run that lacks examples.
    """
    from ..stats import dataset_frame

    if fmt not in ("npy", "npz", "json"):
        raise ValueError(f"fmt must be npy, npz or json, found {fmt!r}")
    if "probability" not in table.columns:
        raise ValueError("the Trainer format holds scores: the table has no probability column")
    dataset = _one_dataset(table)
    ids = dataset_frame(dataset)["id"].astype(str).drop_duplicates().to_numpy()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    keys = _runs(table)
    varying = {k for k in ("experiment", "language", "model") if table[k].nunique() > 1}
    paths = []
    for values, part in table.groupby(keys, sort=True):
        run = {k: v for k, v in zip(keys, values) if k not in ("experiment", "language", "model") or k in varying}
        part = part.set_index(part["example_id"].astype(str))
        if len(part) != len(ids) or not part.index.isin(ids).all():
            raise ValueError(f"run {run}: {len(part)} of {len(ids)} examples; a Trainer output holds every example "
                             "in the dataset's order")
        part = part.loc[ids]
        logits = _log_scores(part, CLASS_LABELS)
        label_ids = np.asarray([CLASS_LABELS.index(label) for label in part["label"]], dtype=np.int64)
        path = folder / f"predictions_{_run_name(run)}.{fmt}"
        with atomic_path(path) as tmp:
            if fmt == "npy":
                with open(tmp, "wb") as handle:
                    np.save(handle, logits)
            elif fmt == "npz":
                with open(tmp, "wb") as handle:
                    np.savez(handle, predictions=logits, label_ids=label_ids)
            else:
                payload = {"predictions": [[float(x) for x in row] for row in logits],
                           "label_ids": label_ids.tolist()}
                tmp.write_text(json.dumps(payload, allow_nan=False), encoding="utf-8")
        paths.append(path)
    return paths
