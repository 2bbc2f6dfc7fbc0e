"""Read one foreign predictions file into rows of a common form (the *standard frame*).

Three families of files are read:

* ``columns``: a table (CSV or TSV with any separator, JSON lines, parquet) whose columns are named by a column
  mapping (``id=idx``, ``prediction=pred``, ``seed=run`` ...) or found under a usual name (:data:`ALIASES`);
* ``lm-eval``: the per-sample log of lm-evaluation-harness (``--log_samples``: one JSON object per document with
  ``doc_id``, ``doc``, ``target`` and ``filtered_resps``; choice log-likelihoods for multiple-choice tasks, a
  generated text otherwise), or a results ``.json`` holding such samples under ``"samples"``;
* ``trainer``: the scores of a ``transformers`` ``Trainer.predict`` call (``PredictionOutput.predictions``) saved
  with ``numpy.save`` / ``numpy.savez`` or as JSON, one row per example in the order the examples were given.

Each reader returns a :class:`Source`: one row per line of the file, with the columns of :data:`STANDARD` that the
file provides, ``prediction`` and ``gold`` already translated to binary labels (``None`` where a value means no
label; the raw value is kept beside it for the report).
"""

from __future__ import annotations

import difflib
import json
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ..core.schema import CLASS_LABELS, ENTAILMENT, LABELS
from ..core.tables import FORMATS as TABLE_FORMATS
from ..core.tables import iter_lines, iter_records, read_table, sniff_separator
from ..data import DataFormatError, shorten
from ..data import THREE_WAY
from ._labels import CHOICE_NAMES, NAMES, index_map, label_key, scores_to_predictions, to_labels

#: File formats: ``auto`` decides by suffix and content (see :func:`detect_format`).
FORMATS = ("auto", "csv", "tsv", "jsonl", "parquet", "lm-eval", "trainer")

#: What a column of a ``columns`` file can stand for (the keys of a column mapping).
ROLES = ("id", "premise", "hypothesis", "label", "prediction", "probability", "logits", "seed", "pretrain_seed",
         "experiment", "model", "language", "dataset", "position")

#: Column names recognised without a mapping (case-insensitive), per role; the first present wins.
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("example_id", "id", "idx", "guid", "pair_id", "pairid"),
    "premise": ("premise", "sentence1", "text_a", "sentence_a"),
    "hypothesis": ("hypothesis", "sentence2", "text_b", "sentence_b"),
    "label": ("label", "gold", "gold_label", "target", "label_ids"),
    "prediction": ("prediction", "pred", "predicted", "predicted_label", "prediction_label", "predictions"),
    "probability": ("probability", "prob_entailment", "p_entailment"),
    "logits": ("logits",),
    "seed": ("seed", "run", "run_id"),
    "pretrain_seed": ("pretrain_seed", "pretraining_seed"),
    "experiment": ("experiment",),
    "model": ("model",),
    "language": ("language", "lang"),
    "dataset": ("dataset",),
}

#: Columns of a standard frame (only those a file provides are present, ``_line`` always is).
STANDARD = ("_line", "id", "premise", "hypothesis", "position", "seed", "pretrain_seed", "experiment", "model",
            "language", "dataset", "gold", "gold_raw", "prediction", "prediction_raw", "probability")

_INTEGRAL_TEXT = re.compile(r"[+-]?\d+\.0+")


#: The refusal of an lm-evaluation-harness ``results_*.json`` (aggregate scores only) given as a predictions file.
LM_EVAL_RESULTS = ("{path}: an lm-evaluation-harness results file (aggregate scores and the run's config, no "
                   "per-example predictions); import the samples_<task>_<time>.jsonl file(s) beside it, written with "
                   "--log_samples")


def is_lm_eval_results(payload: object) -> bool:
    """Whether a parsed JSON document is an lm-evaluation-harness ``results_*.json`` without samples.

    True for an object with ``results`` and one of ``configs``, ``versions``, ``n-shot``, ``config``.
    """
    return (isinstance(payload, dict) and "samples" not in payload and isinstance(payload.get("results"), dict)
            and any(key in payload for key in ("configs", "versions", "n-shot", "config")))


@dataclass
class Source:
    """One file read into the standard frame.

    Parameters
    ----------
    path : Path
    fmt : str
        The format it was read as (``csv``, ``tsv``, ``jsonl``, ``parquet``, ``lm-eval`` or ``trainer``).
    frame : pandas.DataFrame
        One row per record of the file: ``_line`` (1-based line or record number) and the columns of
        :data:`STANDARD` the file provides.
    notes : list of str
        How the file was read (the columns used, the label of each score index ...), for the import report.
    """

    path: Path
    fmt: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def detect_format(path: str | Path) -> str:
    """Decide the format of a file from its suffix and, for JSON, its first record.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    str
        ``trainer`` for ``.npy`` / ``.npz`` and for a ``.json`` holding only numbers; ``lm-eval`` for JSON lines
        whose first record has ``doc_id`` and ``filtered_resps`` (or ``resps``) and for a ``.json`` with
        ``"samples"``; ``parquet`` for ``.parquet`` / ``.pq``; ``jsonl`` for other JSON lines; ``tsv`` for
        ``.tsv``; ``csv`` otherwise (the separator is sniffed).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".npy", ".npz"):
        return "trainer"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix == ".json":
        payload = _load_json(path)
        if isinstance(payload, dict) and "samples" in payload:
            return "lm-eval"
        if is_lm_eval_results(payload):
            raise UserInputError(LM_EVAL_RESULTS.format(path=path))
        return "trainer"
    if suffix in (".jsonl", ".ndjson"):
        for _, text in iter_lines(path):
            if text.strip():
                try:
                    first = json.loads(text)
                except json.JSONDecodeError:
                    return "jsonl"
                is_sample = isinstance(first, dict) and "doc_id" in first and (
                    "filtered_resps" in first or "resps" in first)
                return "lm-eval" if is_sample else "jsonl"
        return "jsonl"
    return "tsv" if suffix == ".tsv" else "csv"


def read_source(path: str | Path, fmt: str = "auto", *, columns: Mapping[str, str | list[str]] | None = None,
                label_map: Mapping[str, str] | None = None, sep: str | None = None,
                lm_eval_filter: str | None = None) -> Source:
    """Read one file into a :class:`Source`.

    Parameters
    ----------
    path : str or Path
    fmt : str
        One of :data:`FORMATS`.
    columns : mapping, optional
        Role (:data:`ROLES`) -> column name; ``logits`` may name several columns (a list, or names separated by
        commas), in class order. For lm-eval files the names are paths into the record, ``doc.idx``,
        ``doc.sentence1``, ``doc_id``.
    label_map : mapping, optional
        From :func:`~diagnostics.predictions.parse_label_map`: file value (or class / choice index) -> label.
    sep : str, optional
        Separator of a CSV file; sniffed when ``None``.
    lm_eval_filter : str, optional
        For lm-eval files logged with several filters (one record per document and filter): the filter to read.

    Returns
    -------
    Source
        The file's rows.

    Raises
    ------
    DataFormatError
        A file that cannot be read as that format (the message names the file and line).
    UserInputError
        A mapped column the file lacks, or scores without a label map where the format has no convention.
    FileNotFoundError
        The file does not exist.
    """
    path = Path(path)
    if path.is_dir():
        raise DataFormatError(path, None, "a predictions file", "a folder")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if fmt not in FORMATS:
        raise UserInputError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if path.stat().st_size == 0:
        raise DataFormatError(path, None, "a predictions file", "an empty file (0 bytes)")
    fmt = detect_format(path) if fmt == "auto" else fmt
    mapping = _mapping(columns)
    if fmt == "lm-eval":
        return _read_lm_eval(path, mapping, label_map, lm_eval_filter)
    if fmt == "trainer":
        return _read_trainer(path, mapping, label_map)
    raw, notes = _read_table(path, fmt, sep)
    return _from_columns(path, fmt, raw, mapping, label_map, notes)


def _mapping(columns: Mapping | None) -> dict[str, list[str]]:
    out = {}
    for role, names in (columns or {}).items():
        if role not in ROLES:
            close = difflib.get_close_matches(str(role), ROLES, n=1)
            raise UserInputError(f"column mapping {role}=...: expected a role in {', '.join(ROLES)}, found {role!r}"
                                 + (f"; did you mean {close[0]!r}?" if close else ""))
        listed = names.split(",") if isinstance(names, str) else list(names)
        listed = [str(n).strip() for n in listed if str(n).strip()]
        if not listed:
            raise UserInputError(f"column mapping {role}=: no column named")
        if len(listed) > 1 and role != "logits":
            raise UserInputError(f"column mapping {role}={','.join(listed)}: only logits may name several columns")
        out[role] = listed
    return out


# --- tables -----------------------------------------------------------------------------------------------------


def _read_table(path: Path, fmt: str, sep: str | None) -> tuple[pd.DataFrame, list[str]]:
    if fmt not in TABLE_FORMATS:
        raise UserInputError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    notes = []
    if fmt in ("csv", "tsv") and sep is None:
        sep = sniff_separator(path, "\t" if fmt == "tsv" else ",")
        notes.append(f"separator {sep!r} (sniffed)")
    raw = read_table(path, fmt=fmt, sep=sep, line_column="_line")
    if raw.empty:
        raise DataFormatError(path, None, "at least one row", "no rows")
    return raw, notes


def _resolve(raw: pd.DataFrame, mapping: dict[str, list[str]], defaults: Mapping[str, str], path: Path,
             aliases: bool = True) -> dict[str, list[str]]:
    """Role -> the column(s) of ``raw`` it is read from: the mapping, else the format's default, else an alias."""
    present = [c for c in raw.columns if c != "_line"]
    lower = {str(c).casefold(): c for c in present}
    found: dict[str, list[str]] = {}
    for role, names in mapping.items():
        missing = [n for n in names if n not in raw.columns]
        if missing:
            close = difflib.get_close_matches(missing[0], [str(c) for c in present], n=1)
            raise UserInputError(f"{path}: column mapping {role}={','.join(names)}: no column {missing[0]!r} "
                                 f"(columns: {', '.join(map(str, present[:20]))}"
                                 + (" ..." if len(present) > 20 else "") + ")"
                                 + (f"; did you mean {close[0]!r}?" if close else ""))
        found[role] = names
    taken = {n for names in found.values() for n in names}
    for role in ROLES:
        if role in found:
            continue
        if role in defaults and defaults[role] in raw.columns and defaults[role] not in taken:
            found[role] = [defaults[role]]
        elif aliases:
            for alias in ALIASES.get(role, ()):
                if alias in lower and lower[alias] not in taken:
                    found[role] = [lower[alias]]
                    break
        taken.update(found.get(role, []))
    return found


def _text_column(values: pd.Series) -> pd.Series:
    """Cells as ``str`` (integral floats without ``.0``), missing cells as ``None``."""
    return pd.Series([None if v is None or (not isinstance(v, str) and pd.isna(v)) else cell_text(v)
                      for v in values], index=values.index, dtype=object)


def cell_text(value: object) -> str:
    """Spell an example id or seed cell as a string: one rule for every format.

    Surrounding spaces are removed. A number with a zero fraction is the integer it holds, whether the file stores
    it as a number (JSON lines, parquet) or as text (CSV, TSV): ``3.0``, ``"3.0"`` and ``"3.00"`` are all ``"3"``.
    """
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    text = str(value).strip()
    if _INTEGRAL_TEXT.fullmatch(text):
        text = text.split(".")[0]
    return text


def _score_matrix(cells, path: Path, lines, what: str) -> np.ndarray:
    rows = []
    for line, cell in zip(lines, cells):
        if isinstance(cell, str):
            try:
                cell = json.loads(cell)
            except json.JSONDecodeError:
                raise DataFormatError(path, int(line), f"{what} as a list of numbers", shorten(cell)) from None
        try:
            rows.append(np.asarray(cell, dtype=np.float64).ravel())
        except (TypeError, ValueError):
            raise DataFormatError(path, int(line), f"{what} as a list of numbers", shorten(cell)) from None
    sizes = {len(r) for r in rows}
    if len(sizes) != 1 or 0 in sizes:
        bad = next(i for i, r in enumerate(rows) if len(r) != len(rows[0]) or not len(r))
        raise DataFormatError(path, int(lines[bad]), f"{len(rows[0])} {what} per row", f"{len(rows[bad])}")
    matrix = np.vstack(rows)
    if not np.isfinite(matrix).all():
        bad = int(np.flatnonzero(~np.isfinite(matrix).all(axis=1))[0])
        raise DataFormatError(path, int(lines[bad]), f"finite {what}", shorten(rows[bad].tolist()))
    return matrix


def _holds_arrays(values: pd.Series) -> bool:
    """Whether a column's cells are vectors (lists or arrays: logits per row) rather than single values."""
    first = next((v for v in values if v is not None and not (np.ndim(v) == 0 and pd.isna(v))), None)
    return first is not None and (isinstance(first, (list, tuple, np.ndarray)) and not isinstance(first, str))


def _from_columns(path: Path, fmt: str, raw: pd.DataFrame, mapping: dict[str, list[str]],
                  label_map: Mapping[str, str] | None, notes: list[str]) -> Source:
    roles = _resolve(raw, mapping, {}, path)
    if "prediction" in roles and "logits" not in roles and _holds_arrays(raw[roles["prediction"][0]]):
        roles["logits"] = roles.pop("prediction")
        notes.append(f"column {roles['logits'][0]} holds a score vector per row: read as logits")
    out = pd.DataFrame({"_line": raw["_line"].to_numpy()})
    for role in ("id", "premise", "hypothesis", "seed", "pretrain_seed", "experiment", "model", "language",
                 "dataset", "position"):
        if role in roles:
            values = raw[roles[role][0]]
            out[role] = (_text_column(values) if role not in ("premise", "hypothesis")
                         else values.astype(object).where(values.notna(), None)).to_numpy()
    if "label" in roles:
        out["gold_raw"] = raw[roles["label"][0]].to_numpy(dtype=object)
        out["gold"] = to_labels(out["gold_raw"], label_map).to_numpy()
    scores = None
    if "logits" in roles:
        names = roles["logits"]
        cells = (raw[names].to_numpy(dtype=object).tolist() if len(names) > 1
                 else raw[names[0]].tolist())
        scores = _score_matrix(cells, path, out["_line"].to_numpy(), "logits")
        labels = index_map(scores.shape[1], label_map, CLASS_LABELS if scores.shape[1] == 2 else None,
                           f"{path}: logits")
        notes.append("logits " + ", ".join(f"{i} -> {lab}" for i, lab in enumerate(labels)))
    if "prediction" in roles:
        out["prediction_raw"] = raw[roles["prediction"][0]].to_numpy(dtype=object)
        out["prediction"] = to_labels(out["prediction_raw"], label_map).to_numpy()
    if "probability" in roles:
        prob = pd.to_numeric(raw[roles["probability"][0]], errors="coerce")
        bad = (prob.isna() & raw[roles["probability"][0]].notna()) | ~prob.fillna(0.5).between(0.0, 1.0)
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataFormatError(path, int(out["_line"].iat[pos]), "probability (P(entailment)) in [0, 1]",
                                  shorten(raw[roles["probability"][0]].iat[pos]))
        out["probability"] = prob.to_numpy(dtype=np.float64)
    if scores is not None:
        prediction, probability = scores_to_predictions(scores, labels)
        if "prediction" not in roles:
            out["prediction_raw"] = np.argmax(scores, axis=1)
            out["prediction"] = prediction
        if "probability" not in roles:
            out["probability"] = probability
    elif "prediction" not in roles and "probability" in roles:
        # the toolkit's own convention: class 1 (entailment) wins only above one half, as argmax does on ties
        out["prediction_raw"] = out["probability"]
        out["prediction"] = np.where(out["probability"].isna(), None,
                                     np.where(out["probability"] > 0.5, ENTAILMENT, LABELS[1])).astype(object)
        notes.append("prediction from probability: entailment above 0.5")
    if "prediction" not in out.columns:
        raise UserInputError(f"{path}: no prediction column (columns: {', '.join(map(str, raw.columns[1:]))}); "
                             "name it with --map prediction=COLUMN (or logits=... / probability=...)")
    used = ", ".join(f"{role}={','.join(names)}" for role, names in roles.items())
    notes.insert(0, f"columns {used}")
    return Source(path, fmt, out, notes)


# --- lm-evaluation-harness --------------------------------------------------------------------------------------


def _load_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as err:
        raise DataFormatError(path, err.lineno, "a JSON document", f"invalid JSON ({err.msg})") from None
    except UnicodeDecodeError:
        raise DataFormatError(path, None, "UTF-8 text", "undecodable bytes") from None


def _lm_eval_records(path: Path, lm_eval_filter: str | None) -> list[tuple[int, dict]]:
    if path.suffix.lower() == ".json":
        payload = _load_json(path)
        samples = payload.get("samples") if isinstance(payload, dict) else None
        if not isinstance(samples, dict) or not samples:
            raise DataFormatError(path, None, "an lm-evaluation-harness results file with \"samples\"",
                                  "no samples")
        if len(samples) > 1:
            raise UserInputError(f"{path}: samples of {len(samples)} tasks ({', '.join(sorted(samples))}); "
                                 "write each task's samples to its own file (--log_samples does)")
        records = list(enumerate(next(iter(samples.values())), start=1))
    else:
        records = list(iter_records(path, objects=False))
    for number, record in records:
        if not isinstance(record, dict) or "doc_id" not in record or not (
                "filtered_resps" in record or "resps" in record):
            raise DataFormatError(path, number, "an lm-evaluation-harness sample (doc_id, doc, target, filtered_resps)",
                                  shorten(record))
    if not records:
        raise DataFormatError(path, None, "at least one sample", "no samples")
    filters = sorted({str(r.get("filter")) for _, r in records if "filter" in r})
    if len(filters) > 1 and lm_eval_filter is None:
        raise UserInputError(f"{path}: samples of {len(filters)} filters ({', '.join(filters)}); choose one with "
                             "--filter NAME")
    if lm_eval_filter is not None:
        records = [(n, r) for n, r in records if str(r.get("filter")) == lm_eval_filter]
        if not records:
            raise UserInputError(f"{path}: no sample of filter {lm_eval_filter!r} (filters: "
                                 f"{', '.join(filters) or 'none recorded'})")
    return records


def _is_number(value) -> bool:
    if isinstance(value, bool):
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _response(resps, path: Path, line: int):
    """(kind, value) of a sample's responses: ``("choices", [ll...])`` or ``("text", str)``."""
    items = resps
    if isinstance(items, list) and items and all(isinstance(x, list) and len(x) == 1 and isinstance(x[0], list)
                                                 for x in items):
        items = [x[0] for x in items]  # unfiltered ``resps``: one list of responses per request
    if isinstance(items, list) and items and all(isinstance(x, list) and len(x) == 2 and _is_number(x[0])
                                                 for x in items):
        return "choices", [float(x[0]) for x in items]
    while isinstance(items, list) and len(items) == 1:
        items = items[0]
    if isinstance(items, str):
        return "text", items
    raise DataFormatError(path, line, "filtered_resps holding choice log-likelihoods ([[ll, is_greedy], ...]) or "
                                      "one generated text", shorten(resps))


def _choice_texts(record: dict) -> list[str] | None:
    """The continuations of a multiple-choice sample's requests (``arguments``), when recorded."""
    args = record.get("arguments")
    if isinstance(args, dict):  # {"gen_args_0": {"arg_0": context, "arg_1": continuation}, ...}
        args = [list(v.values()) if isinstance(v, dict) else v for _, v in sorted(
            args.items(), key=lambda kv: int("".join(c for c in kv[0] if c.isdigit()) or 0))]
    if not isinstance(args, list) or not all(isinstance(a, list) and len(a) >= 2 for a in args):
        return None
    return [str(a[1]) for a in args]


def _flatten(record: dict) -> dict:
    row = {}
    for key, value in record.items():
        if key == "doc" and isinstance(value, dict):
            for k, v in value.items():
                if v is None or isinstance(v, (str, int, float, bool)):
                    row[f"doc.{k}"] = v
        elif value is None or isinstance(value, (str, int, float, bool)):
            row[key] = value
    return row


def _choice_labels(n: int, texts: list[str] | None, label_map: Mapping[str, str] | None) -> list[str]:
    """Label of each choice: the map by index or by choice text, else the text itself (:data:`CHOICE_NAMES`:
    ``True`` / ``yes`` / ``entailment`` -> entailment, ``False`` / ``no`` / ``not_entailment`` -> not_entailment),
    else the harness's usual NLI order."""
    default = {2: LABELS, 3: THREE_WAY}.get(n)
    out = []
    for i in range(n):
        text = label_key(texts[i]) if texts is not None and i < len(texts) else None
        label = None
        if label_map is not None:
            label = label_map.get(str(i)) or (label_map.get(text) if text is not None else None)
        if label is None and text is not None:
            label = CHOICE_NAMES.get(text)
        if label is None and label_map is None and default is not None:
            label = NAMES[label_key(default[i])]
        if label is None:
            shown = f" ({texts[i]!r})" if texts is not None and i < len(texts) else ""
            raise UserInputError(f"choice {i}{shown} of {n}: no label; map every choice index or text, e.g. "
                                 f"--label-map 0={ENTAILMENT},1=neutral,2=contradiction")
        out.append(label)
    return out


def _read_lm_eval(path: Path, mapping: dict[str, list[str]], label_map: Mapping[str, str] | None,
                  lm_eval_filter: str | None) -> Source:
    records = _lm_eval_records(path, lm_eval_filter)
    kinds, values = [], []
    for number, record in records:
        kind, value = _response(record.get("filtered_resps", record.get("resps")), path, number)
        kinds.append(kind)
        values.append(value)
    if len(set(kinds)) > 1:
        first = kinds.index("text")
        raise DataFormatError(path, records[first][0], "the same kind of response in every sample",
                              "choice log-likelihoods and generated texts mixed")
    raw = pd.DataFrame([{"_line": n, **_flatten(r)} for n, r in records])
    defaults = {"id": next((c for c in ("doc.idx", "doc.id", "doc.example_id", "doc.guid") if c in raw.columns), ""),
                "premise": next((c for c in ("doc.premise", "doc.sentence1") if c in raw.columns), ""),
                "hypothesis": next((c for c in ("doc.hypothesis", "doc.sentence2") if c in raw.columns), ""),
                "label": "target", "position": "doc_id"}
    roles = _resolve(raw, mapping, defaults, path, aliases=False)
    out = pd.DataFrame({"_line": raw["_line"].to_numpy()})
    for role in ("id", "premise", "hypothesis", "position", "seed", "pretrain_seed", "experiment", "model",
                 "language", "dataset"):
        if role in roles:
            values_ = raw[roles[role][0]]
            out[role] = (_text_column(values_) if role not in ("premise", "hypothesis")
                         else values_.astype(object).where(values_.notna(), None)).to_numpy()
    notes = [f"lm-evaluation-harness samples ({len(records)}"
             + (f", filter {lm_eval_filter!r}" if lm_eval_filter else "") + "); "
             + ", ".join(f"{role}={','.join(names)}" for role, names in roles.items())]
    gold_raw = raw[roles["label"][0]].to_numpy(dtype=object) if "label" in roles else None
    if kinds[0] == "choices":
        sizes = {len(v) for v in values}
        if len(sizes) != 1:
            bad = next(i for i, v in enumerate(values) if len(v) != len(values[0]))
            raise DataFormatError(path, records[bad][0], f"{len(values[0])} choices per sample", f"{len(values[bad])}")
        scores = np.asarray(values, dtype=np.float64)
        texts = _choice_texts(records[0][1])
        labels = _choice_labels(scores.shape[1], texts, label_map)
        notes.append("choices " + ", ".join(f"{i}{'' if texts is None else f' ({texts[i]!r})'} -> {lab}"
                                            for i, lab in enumerate(labels)))
        prediction, probability = scores_to_predictions(scores, labels)
        out["prediction_raw"] = np.argmax(scores, axis=1)
        out["prediction"] = prediction
        out["probability"] = probability
        if gold_raw is not None:
            out["gold_raw"] = gold_raw
            out["gold"] = [_choice_gold(v, labels, texts, label_map) for v in gold_raw]
    else:
        out["prediction_raw"] = np.asarray(values, dtype=object)
        out["prediction"] = to_labels(values, label_map).to_numpy()
        if gold_raw is not None:
            out["gold_raw"] = gold_raw
            out["gold"] = to_labels(gold_raw, label_map).to_numpy()
        notes.append("generated texts read as labels" + (" through the label map" if label_map else ""))
    return Source(path, "lm-eval", out, notes)


def _choice_gold(value, labels: list[str], texts: list[str] | None, label_map) -> str | None:
    """Gold of a multiple-choice sample: a choice index, a choice's text, or a label value."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if _is_number(value) and float(value).is_integer() and 0 <= int(float(value)) < len(labels):
        return labels[int(float(value))]
    if texts is not None:
        keys = [label_key(t) for t in texts]
        if label_key(value) in keys:
            return labels[keys.index(label_key(value))]
    return to_labels([value], label_map).iat[0]


# --- transformers Trainer -----------------------------------------------------------------------------------------


def _trainer_arrays(path: Path) -> tuple[np.ndarray, np.ndarray | None]:
    suffix = path.suffix.lower()
    label_ids = None
    try:
        if suffix == ".npy":
            scores = np.load(path, allow_pickle=False)
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as bundle:
                names = list(bundle.files)
                key = next((k for k in ("predictions", "logits", "scores") if k in names), names[0] if names else None)
                if key is None:
                    raise DataFormatError(path, None, "an array of predictions", "an empty .npz")
                scores = bundle[key]
                lab = next((k for k in ("label_ids", "labels") if k in names and k != key), None)
                label_ids = bundle[lab] if lab is not None else None
        else:
            payload = _load_json(path)
            if is_lm_eval_results(payload):
                raise UserInputError(LM_EVAL_RESULTS.format(path=path))
            if isinstance(payload, dict):
                key = next((k for k in ("predictions", "logits", "scores") if k in payload), None)
                if key is None:
                    raise DataFormatError(path, None, "a JSON list of score rows, or an object with \"predictions\"",
                                          f"keys {', '.join(map(str, payload))}")
                scores = np.asarray(payload[key])
                lab = next((k for k in ("label_ids", "labels") if k in payload), None)
                label_ids = np.asarray(payload[lab]) if lab is not None else None
            else:
                scores = np.asarray(payload)
    except UserInputError:
        raise  # already names the file and what is wrong (a DataFormatError of the JSON reader)
    except (ValueError, EOFError, zipfile.BadZipFile) as err:  # numpy's reader: damaged, or a pickled object
        raise DataFormatError(path, None, "a readable numpy or JSON array",
                              " ".join(str(err).split())[:160] or type(err).__name__) from None
    except OSError as err:
        if err.errno is not None:
            raise  # the disk's error, naming the file
        raise DataFormatError(path, None, "a readable numpy or JSON array",
                              " ".join(str(err).split())[:160] or type(err).__name__) from None
    if scores.dtype.kind not in "iuf" or scores.ndim not in (1, 2) or len(scores) == 0:
        raise DataFormatError(path, None, "a numeric array of shape (n_examples, n_classes) or (n_examples,)",
                              f"dtype {scores.dtype}, shape {scores.shape}")
    if label_ids is not None and label_ids.shape != (len(scores),):
        raise DataFormatError(path, None, f"label_ids of shape ({len(scores)},)", f"shape {label_ids.shape}")
    return scores, label_ids


def _read_trainer(path: Path, mapping: dict[str, list[str]], label_map: Mapping[str, str] | None) -> Source:
    unknown = sorted(set(mapping) - {"seed", "pretrain_seed"})
    if unknown:
        raise UserInputError(f"{path}: a Trainer output has no columns to map ({', '.join(unknown)}); its rows follow "
                             "the dataset's order (or --order)")
    scores, label_ids = _trainer_arrays(path)
    out = pd.DataFrame({"_line": np.arange(1, len(scores) + 1), "position": np.arange(len(scores)).astype(str)})
    out["position"] = out["position"].astype(object)
    if scores.ndim == 2:
        if not np.isfinite(scores).all():
            bad = int(np.flatnonzero(~np.isfinite(scores).all(axis=1))[0])
            raise DataFormatError(path, bad + 1, "finite scores", shorten(scores[bad].tolist()))
        labels = index_map(scores.shape[1], label_map, CLASS_LABELS if scores.shape[1] == 2 else None,
                           f"{path}: scores")
        prediction, probability = scores_to_predictions(scores, labels)
        out["prediction_raw"] = np.argmax(scores, axis=1)
        out["prediction"] = prediction
        out["probability"] = probability
        note = f"Trainer scores {scores.shape}; classes " + ", ".join(f"{i} -> {lab}" for i, lab in enumerate(labels))
    else:
        if not (np.isfinite(scores).all() and (scores == np.round(scores)).all() and scores.min() >= 0):
            raise DataFormatError(path, None, "class ids (integers >= 0) in a 1-D array", shorten(scores[:5].tolist()))
        n = max(int(scores.max()) + 1, 2)
        labels = index_map(n, label_map, CLASS_LABELS if n == 2 else None, f"{path}: class ids")
        out["prediction_raw"] = scores
        out["prediction"] = [labels[int(v)] if float(v).is_integer() and 0 <= v < len(labels) else None
                             for v in scores]
        note = (f"Trainer class ids ({len(scores)}); classes "
                + ", ".join(f"{i} -> {lab}" for i, lab in enumerate(labels)))
    if label_ids is not None:
        out["gold_raw"] = label_ids.astype(object)
        out["gold"] = [labels[int(v)] if _is_number(v) and float(v).is_integer() and 0 <= int(v) < len(labels)
                       else None for v in label_ids]
    return Source(path, "trainer", out, [note])
