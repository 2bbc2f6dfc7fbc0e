"""Import foreign prediction files as the one predictions table, with a report of what matched and what did not.

The steps, for every file given:

1. the file is read (:func:`~diagnostics.predictions.read_source`): CSV / TSV / JSON lines / parquet with a
   column mapping, an lm-evaluation-harness ``--log_samples`` file, or a ``Trainer.predict`` score array;
2. each row gets its run: a seed (and a pretraining seed) from a column, from ``seeds=`` / ``seed_pattern=``, or the
   file's position among the files given;
3. each row is matched to an example of the named dataset: by id, by the (premise, hypothesis) pair after
   :func:`~diagnostics.predictions.match_key` normalisation, or by position (the dataset's order);
4. the gold label comes from the dataset; a file carrying its own gold label is checked against it.

Rows that do not match (and dataset examples a run lacks) are listed with the reason; such a partial import is
refused unless ``allow_partial=True``, so that a wrong mapping or a file of another dataset never passes silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ..core.io_utils import output_folder
from ..core.schema import PREDICTION_OPTIONAL, PREDICTION_REQUIRED
from ..core.tables import write_table_to
from ._labels import parse_label_map
from ._readers import Source, cell_text, read_source
from ._matching import RUN_KEYS, SHOWN, fail, match_rows

#: How rows are matched to dataset examples.
MATCHES = ("auto", "id", "text", "position")
#: Files the report folder holds (:meth:`ImportResult.write`).
REPORT_FILES = ("import_report.md", "runs.csv", "unmatched.csv", "missing.csv", "label_disagreements.csv",
                "punctuation_matches.csv")


class ImportRefusedError(UserInputError):
    """An import that matched only part of the rows or examples, or whose gold labels disagree with the dataset.

    Parameters
    ----------
    message : str
        One line: what did not match, how many, why, and the option that accepts it.
    result : ImportResult
        Everything that was read and matched, for inspection (``result.unmatched``, ``result.missing``,
        ``result.label_disagreements``) or to write the report (``result.write(folder)``).
    """

    def __init__(self, message: str, result: ImportResult):
        super().__init__(message)
        self.result = result


@dataclass
class ImportResult:
    """A finished import: the table and the report of how it was matched.

    Parameters
    ----------
    table : pandas.DataFrame
        The predictions table (validated; empty when the import was refused before any row matched).
    dataset : str
        The dataset the rows were matched to.
    n_examples : int
        Examples in the dataset.
    rows : int
        Rows read from the files.
    matched : int
        Rows in the table.
    unmatched : pandas.DataFrame
        One row per file row that is not in the table: ``file, line, pretrain_seed, seed, id, premise, hypothesis,
        prediction, reason, detail, closest_id`` (``closest_id``: for text matched rows, the example whose premise
        is nearest, when one is close).
    missing : pandas.DataFrame
        One row per (run, dataset example) without a prediction: the run keys and ``example_id``.
    label_disagreements : pandas.DataFrame
        One row per matched row whose own gold label differs from the dataset's: ``file, line, pretrain_seed,
        seed, example_id, file_label, file_value, dataset_label``.
    runs : pandas.DataFrame
        One row per run: the run keys, ``files``, ``rows``, ``matched``, ``unmatched``, ``missing``,
        ``matched_by``.
    notes : list of str
        How each file was read (columns, separator, label of each score index, seed names ...).
    punctuation_matches : pandas.DataFrame
        One row per file row matched only with punctuation ignored (``matched_by`` "text (punctuation ignored)"
        or "id (texts equal with punctuation ignored)"): ``file, line, pretrain_seed, seed, example_id,
        matched_by, premise, hypothesis, dataset_premise, dataset_hypothesis``.
    """

    table: pd.DataFrame
    dataset: str
    n_examples: int
    rows: int
    matched: int
    unmatched: pd.DataFrame
    missing: pd.DataFrame
    label_disagreements: pd.DataFrame
    runs: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    punctuation_matches: pd.DataFrame = field(default_factory=pd.DataFrame)

    def summary(self) -> str:
        """Describe the import in a few lines: counts per run, unmatched rows by reason, label disagreements.

        Returns
        -------
        str
            Plain text (also valid markdown), one fact per line.
        """
        lines = [f"imported {self.matched} of {self.rows} rows into {len(self.runs)} run(s) of dataset "
                 f"{self.dataset} ({self.n_examples} examples)"]
        for row in self.runs.itertuples(index=False):
            run = " ".join(f"{k}={getattr(row, k)}" for k in ("pretrain_seed", "seed") if k in self.runs.columns)
            lines.append(f"- run {row.model} {run} ({row.files}): {row.matched} of {row.rows} rows matched by "
                         f"{row.matched_by}, {row.missing} example(s) of the dataset missing")
        if len(self.unmatched):
            counts = self.unmatched["reason"].value_counts()
            lines.append(f"unmatched rows: {len(self.unmatched)} ("
                         + "; ".join(f"{reason}: {n}" for reason, n in counts.items()) + ")")
        else:
            lines.append("unmatched rows: none")
        lines.append(f"examples missing from a run: {len(self.missing)}")
        if len(self.punctuation_matches):
            lines.append(f"rows matched only with punctuation ignored (quotation marks lost in export ...): "
                         f"{len(self.punctuation_matches)}, each listed in punctuation_matches.csv")
        if len(self.label_disagreements):
            shown = ", ".join(f"(id {r.example_id!r}, file {r.file_label!r}, dataset {r.dataset_label!r})"
                              for r in self.label_disagreements.head(SHOWN).itertuples(index=False))
            lines.append(f"gold labels of the files that differ from the dataset's: {len(self.label_disagreements)}"
                         f" row(s): {shown}" + (" ..." if len(self.label_disagreements) > SHOWN else ""))
        else:
            lines.append("gold labels of the files that differ from the dataset's: none")
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)

    def write(self, folder: str | Path) -> dict[str, Path]:
        """Write the report: ``import_report.md`` and the CSV tables of :data:`REPORT_FILES`, as one set.

        Parameters
        ----------
        folder : str or Path
            Created when missing. The files replace those of an earlier report at once
            (:func:`~diagnostics.core.io_utils.output_folder`); other files in it are kept.

        Returns
        -------
        dict of str to Path
            File name -> written path.
        """
        frames = {"runs.csv": self.runs, "unmatched.csv": self.unmatched, "missing.csv": self.missing,
                  "label_disagreements.csv": self.label_disagreements,
                  "punctuation_matches.csv": self.punctuation_matches}
        with output_folder(folder, REPORT_FILES) as files:
            for name, frame in frames.items():
                with files.file(name) as tmp:
                    write_table_to(frame, tmp, "csv")
            with files.file("import_report.md") as tmp:
                tmp.write_text("# Import report\n\n" + self.summary() + "\n", encoding="utf-8")
        return {name: files.path(name) for name in [*frames, "import_report.md"]}


def import_predictions(files: str | Path | Sequence[str | Path], dataset: str, **options) -> pd.DataFrame:
    """Import foreign prediction files as the one predictions table.

    Parameters
    ----------
    files : str, Path or sequence of them
        The files: one per seed (lm-evaluation-harness samples, Trainer outputs, tables), or tables whose seed
        column holds several runs.
    dataset : str
        The registered dataset the predictions are for (``axb``, ``lidirus``, ``swediagnostics`` ...).
    **options
        The keyword arguments of :func:`import_with_report` (``columns``, ``label_map``, ``match``, ``seeds``,
        ``model``, ``allow_partial`` ...).

    Returns
    -------
    pandas.DataFrame
        The predictions table: the columns of :data:`diagnostics.core.schema.PREDICTION_REQUIRED`, ``probability``
        when the files carry scores, ``pretrain_seed`` for nested designs; one row per (run, example), runs in
        seed order, examples in the dataset's order.

    Raises
    ------
    ImportRefusedError
        A partial match or disagreeing gold labels (see :func:`import_with_report`).
    UserInputError
        A file, option or mapping that cannot be used.
    """
    return import_with_report(files, dataset, **options).table


def import_with_report(files: str | Path | Sequence[str | Path], dataset: str, *, fmt: str = "auto",
                       columns: Mapping[str, str | list[str]] | None = None,
                       label_map: str | Mapping | None = None, sep: str | None = None, match: str = "auto",
                       seeds: Sequence[int] | None = None, pretrain_seeds: Sequence[int] | None = None,
                       seed_pattern: str | None = None, experiment: str = "imported", model: str = "imported",
                       language: str | None = None, order: str | Path | Sequence[str] | None = None,
                       lm_eval_filter: str | None = None, dataset_file: str | Path | None = None,
                       allow_partial: bool = False, trust_labels: bool = False) -> ImportResult:
    """Import foreign prediction files and report how every row was matched.

    Parameters
    ----------
    files : str, Path or sequence of them
        The files (see :func:`import_predictions`).
    dataset : str
        Registered dataset name; its ids, texts, order and gold labels are what the rows are matched to.
    fmt : str
        ``auto`` (by suffix and content), ``csv``, ``tsv``, ``jsonl``, ``parquet``, ``lm-eval`` or ``trainer``.
    columns : mapping, optional
        Role -> column: ``{"id": "idx", "prediction": "pred", "seed": "run", "pretrain_seed": "checkpoint",
        "logits": ["l0", "l1"]}``; roles not named are looked for under usual names (``example_id``, ``premise``,
        ``label`` ...; see :data:`~diagnostics.predictions._readers.ALIASES`).
    label_map : str or mapping, optional
        Which file value means which label: ``"0=entailment,1=not_entailment"``; for score arrays and lm-eval
        choices, which index (or choice text) is which label. Without it, label names are read in any case and
        3-way labels collapse (neutral, contradiction -> not_entailment); 2 Trainer classes are the toolkit's
        order (0 not_entailment, 1 entailment), 2 or 3 lm-eval choices the harness's NLI order (entailment first).
    sep : str, optional
        Separator of CSV files; sniffed when ``None``.
    match : str
        ``auto`` (id when the file has ids, else the texts, else the position), ``id``, ``text`` or ``position``.
    seeds : sequence of int, optional
        The seed of each file (files without a seed column); default: a seed pattern, else 0, 1, 2 ... in the
        order the files are given.
    pretrain_seeds : sequence of int, optional
        The pretraining seed of each file (nested designs).
    seed_pattern : str, optional
        A regular expression searched in each file's path as given, folders included (the last occurrence counts,
        see :func:`seed_match`): its group ``seed`` (or its first group) is the seed, a group ``pretrain_seed``
        the pretraining seed (``r"seed(?P<seed>\\d+)"`` finds 13 in ``out/seed13/model/samples_rte_x.jsonl``).
    experiment : str
        ``experiment`` value of rows without an experiment column.
    model : str
        ``model`` value of rows without a model column.
    language : str, optional
        ``language`` value of rows without a language column; default the dataset's language.
    order : str, Path or sequence of str, optional
        The example ids of position-matched rows, in file order (a text file with one id per line); default the
        dataset's order.
    lm_eval_filter : str, optional
        For lm-eval samples logged under several filters, the filter to import.
    dataset_file : str or Path, optional
        The file of ``dataset`` (a user-supplied diagnostic, e.g. ``diagnostic_fr``), read as its ``test`` split.
    allow_partial : bool
        Import the matched rows even when some rows did not match or runs lack examples of the dataset.
    trust_labels : bool
        Keep the files' own gold labels where they differ from the dataset's (else such an import is refused).

    Returns
    -------
    ImportResult
        The table and the report.

    Raises
    ------
    ImportRefusedError
        Some rows did not match, some runs lack examples (without ``allow_partial``), no row matched at all, or
        the files' gold labels differ from the dataset's (without ``trust_labels``); ``err.result`` holds the
        report.
    UserInputError
        An unknown dataset or option value, an unreadable file, a mapping naming a missing column.
    """
    from ..data import DataRef, get_spec
    from ..stats import dataset_frame
    from ..stats import validate_predictions

    if match not in MATCHES:
        raise UserInputError(f"match {match!r}: expected one of {', '.join(MATCHES)}")
    paths = [Path(files)] if isinstance(files, (str, Path)) else [Path(f) for f in files]
    if not paths:
        raise UserInputError("no file to import")
    spec = get_spec(dataset)
    known = dataset_frame(dataset if dataset_file is None else DataRef(dataset, "test", str(dataset_file)))
    if "label" not in known.columns:
        raise UserInputError(f"dataset {dataset!r} has no gold labels")
    parsed_map = parse_label_map(label_map)
    for name, values in (("seeds", seeds), ("pretrain_seeds", pretrain_seeds)):
        if values is not None and len(values) != len(paths):
            raise UserInputError(f"{name}: {len(values)} value(s) for {len(paths)} file(s)")
    pattern = _compile(seed_pattern)
    sources = [read_source(p, fmt, columns=columns, label_map=parsed_map, sep=sep, lm_eval_filter=lm_eval_filter)
               for p in paths]
    notes = [f"{s.path.name}: {s.fmt}; " + "; ".join(s.notes) for s in sources]
    rows = pd.concat([_with_runs(s, i, seeds, pretrain_seeds, pattern, experiment, model,
                                 language or spec.language) for i, s in enumerate(sources)], ignore_index=True)
    notes += _number_runs(rows)
    for column in ("id", "premise", "hypothesis", "gold", "gold_raw", "prediction_raw"):
        if column not in rows.columns:
            rows[column] = None
    ids = known["id"].astype(str).to_numpy()
    order_ids = _order(order, ids)
    method = match_rows(rows, known, dataset, match, order_ids)
    gold = pd.Series(known["label"].to_numpy(dtype=object), index=ids)
    gold = gold[~gold.index.duplicated()]
    return _finish(rows, known, gold, dataset, method, notes, allow_partial, trust_labels, validate_predictions)


# --- runs ---------------------------------------------------------------------------------------------------------


def _compile(seed_pattern: str | None):
    if seed_pattern is None:
        return None
    try:
        pattern = re.compile(seed_pattern)
    except re.error as err:
        raise UserInputError(f"seed pattern '{seed_pattern}': not a regular expression ({err})") from None
    if pattern.groups == 0:
        raise UserInputError(f"seed pattern '{seed_pattern}': needs a group, e.g. seed(?P<seed>\\d+)")
    return pattern


def seed_match(pattern: re.Pattern, path: str | Path) -> re.Match | None:
    """Find the seed pattern in a file's path: the whole path as given, folders included.

    lm-evaluation-harness names its files ``samples_<task>_<time>.jsonl`` under ``<output_path>/<model>/``, so the
    seed is usually in a folder the user chose (``out/seed13/...``), not in the file name. Returns the last
    occurrence (the one nearest the file name), or None.
    """
    found = None
    for found in pattern.finditer(Path(path).as_posix()):
        pass
    return found


def _with_runs(source: Source, index: int, seeds, pretrain_seeds, pattern, experiment: str, model: str,
               language: str) -> pd.DataFrame:
    frame = source.frame.copy()
    frame.insert(0, "file", str(source.path))
    found = seed_match(pattern, source.path) if pattern is not None else None
    if pattern is not None and found is None:
        raise UserInputError(f"{source.path}: the seed pattern '{pattern.pattern}' does not occur in the file's path")
    groups = found.groupdict() if found is not None else {}
    if "seed" not in frame.columns:
        if seeds is not None:
            value = seeds[index]
        elif found is not None:
            value = groups.get("seed") if groups.get("seed") is not None else found.group(1)
        else:
            value = index
        frame["seed"] = cell_text(value)
    if "pretrain_seed" not in frame.columns:
        if pretrain_seeds is not None:
            frame["pretrain_seed"] = cell_text(pretrain_seeds[index])
        elif groups.get("pretrain_seed") is not None:
            frame["pretrain_seed"] = cell_text(groups["pretrain_seed"])
    for key, default in (("experiment", experiment), ("model", model), ("language", language)):
        if key not in frame.columns:
            frame[key] = default
        else:
            frame[key] = frame[key].where(frame[key].notna(), default)
    frame["_implicit_position"] = source.fmt == "trainer"
    return frame


def _number_runs(rows: pd.DataFrame) -> list[str]:
    """Seeds (and pretraining seeds) as integers; names that are not integers are numbered in order of appearance."""
    notes = []
    for key in ("seed", "pretrain_seed"):
        if key not in rows.columns:
            continue
        values = rows[key]
        if values.isna().any():
            where = rows[values.isna()].iloc[0]
            raise UserInputError(f"{where['file']}:{where['_line']}: no {key} value")
        numeric = pd.to_numeric(values, errors="coerce")
        if numeric.notna().all() and (numeric == np.round(numeric)).all():
            rows[key] = numeric.astype("int64")
            continue
        names = list(pd.unique(values.astype(str)))
        rows[key] = values.astype(str).map({name: i for i, name in enumerate(names)}).astype("int64")
        notes.append(f"{key} names numbered in order of appearance: "
                     + ", ".join(f"{name} -> {i}" for i, name in enumerate(names)))
    return notes


def _order(order, ids: np.ndarray) -> np.ndarray:
    if order is None:
        return ids
    if isinstance(order, (str, Path)):
        path = Path(order)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        values = [line.strip() for line in path.read_text(encoding="utf-8-sig").splitlines() if line.strip()]
    else:
        values = [cell_text(v) for v in order]
    unknown = sorted(set(values) - set(ids))
    if unknown:
        raise UserInputError(f"order: {len(unknown)} id(s) not in the dataset, e.g. {unknown[0]!r}")
    return np.asarray(values, dtype=object)


# --- the table and the report ---------------------------------------------------------------------------------------


def _finish(rows: pd.DataFrame, known: pd.DataFrame, gold: pd.Series, dataset: str, method: str, notes: list[str],
            allow_partial: bool, trust_labels: bool, validate) -> ImportResult:
    run = [k for k in RUN_KEYS if k in rows.columns]
    nested = "pretrain_seed" in rows.columns
    good = rows["reason"].isna().to_numpy()
    dataset_label = gold.reindex(rows["example_id"].where(good, None)).to_numpy(dtype=object)
    no_gold = good & pd.isna(dataset_label) & (rows["gold"].isna().to_numpy() if "gold" in rows.columns else True)
    fail(rows, no_gold, "no gold label", "the dataset has no label for this example and the file gives none")
    good = rows["reason"].isna().to_numpy()
    disagree = np.zeros(len(rows), dtype=bool)
    if "gold" in rows.columns:
        disagree = good & rows["gold"].notna().to_numpy() & pd.notna(dataset_label) & (
            rows["gold"].to_numpy(dtype=object) != dataset_label)
    # file rows that are not in the table
    shown = ["file", "_line", *(["pretrain_seed"] if nested else []), "seed", "id", "premise", "hypothesis",
             "prediction_raw", "reason", "detail", "closest_id"]
    unmatched = rows.loc[~good, [c for c in shown if c in rows.columns]].rename(
        columns={"_line": "line", "prediction_raw": "prediction"})
    unmatched = unmatched.reindex(columns=[{"_line": "line", "prediction_raw": "prediction"}.get(c, c)
                                           for c in shown]).reset_index(drop=True)
    disagreements = pd.DataFrame({
        "file": rows.loc[disagree, "file"], "line": rows.loc[disagree, "_line"],
        **({"pretrain_seed": rows.loc[disagree, "pretrain_seed"]} if nested else {}),
        "seed": rows.loc[disagree, "seed"], "example_id": rows.loc[disagree, "example_id"],
        "file_label": rows.loc[disagree, "gold"],
        "file_value": rows.loc[disagree, "gold_raw"] if "gold_raw" in rows.columns else None,
        "dataset_label": dataset_label[disagree]}).reset_index(drop=True)
    # the table
    kept = rows[good].copy()
    label = dataset_label[good]
    if trust_labels and "gold" in kept.columns:
        label = np.where(kept["gold"].notna(), kept["gold"].to_numpy(dtype=object), label)
    kept["label"] = label
    kept["dataset"] = dataset
    position = pd.Series(np.arange(len(known)), index=known["id"].astype(str).to_numpy())
    position = position[~position.index.duplicated()]
    kept["_pos"] = position.reindex(kept["example_id"]).to_numpy()
    kept = kept.sort_values(run + ["_pos"], kind="stable")
    optional = [c for c in PREDICTION_OPTIONAL if c in kept.columns and (c != "probability" or kept[c].notna().any())]
    table = kept[list(PREDICTION_REQUIRED) + optional].reset_index(drop=True)
    # runs and missing examples
    all_ids = known["id"].astype(str).drop_duplicates().to_numpy()
    runs_rows, missing_parts = [], []
    for values, part in rows.groupby(run, sort=True, dropna=False):
        values = dict(zip(run, values if isinstance(values, tuple) else (values,)))
        matched_ids = part.loc[part["reason"].isna(), "example_id"]
        matched_set = set(matched_ids.to_numpy(dtype=str))  # a set, not np.isin: object arrays sort slowly
        lacking = all_ids[np.fromiter((i not in matched_set for i in all_ids), dtype=bool, count=len(all_ids))]
        by = sorted(set(part["matched_by"].dropna()))
        runs_rows.append({**values, "files": ", ".join(sorted({Path(f).name for f in part["file"]})),
                          "rows": len(part), "matched": len(matched_ids),
                          "unmatched": int(part["reason"].notna().sum()),
                          "missing": len(lacking), "matched_by": " + ".join(by) or method})
        if len(lacking):
            missing_parts.append(pd.DataFrame({**{k: [v] * len(lacking) for k, v in values.items()},
                                               "example_id": lacking}))
    runs = pd.DataFrame(runs_rows)
    missing = (pd.concat(missing_parts, ignore_index=True) if missing_parts
               else pd.DataFrame(columns=run + ["example_id"]))
    loose = good & rows["matched_by"].fillna("").str.contains("punctuation ignored").to_numpy()
    texts = known.assign(_id=known["id"].astype(str)).drop_duplicates("_id").set_index("_id")
    punctuation = pd.DataFrame({
        "file": rows.loc[loose, "file"], "line": rows.loc[loose, "_line"],
        **({"pretrain_seed": rows.loc[loose, "pretrain_seed"]} if nested else {}),
        "seed": rows.loc[loose, "seed"], "example_id": rows.loc[loose, "example_id"],
        "matched_by": rows.loc[loose, "matched_by"], "premise": rows.loc[loose, "premise"],
        "hypothesis": rows.loc[loose, "hypothesis"],
        "dataset_premise": texts["premise"].reindex(rows.loc[loose, "example_id"]).to_numpy(),
        "dataset_hypothesis": texts["hypothesis"].reindex(rows.loc[loose, "example_id"]).to_numpy()}
    ).reset_index(drop=True)
    result = ImportResult(table, dataset, len(known), len(rows), len(table), unmatched, missing, disagreements, runs,
                          notes, punctuation)
    _refuse(result, allow_partial, trust_labels)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # runs with different examples: already in the report (allow_partial)
        result.table = validate(table, source=f"import into {dataset}", datasets={dataset: known},
                                trust_labels=trust_labels)
    return result


def _refuse(result: ImportResult, allow_partial: bool, trust_labels: bool) -> None:
    if result.matched == 0:
        reasons = result.unmatched["reason"].value_counts()
        first = result.unmatched.iloc[0]
        raise ImportRefusedError(f"no row of {result.rows} matched dataset {result.dataset!r} ("
                                 + "; ".join(f"{r}: {n}" for r, n in reasons.items())
                                 + f"); first: {Path(first['file']).name}:{first['line']}: {first['reason']}"
                                 + (f" ({first['detail']})" if isinstance(first["detail"], str) else ""), result)
    if not allow_partial and (len(result.unmatched) or len(result.missing)):
        parts = []
        if len(result.unmatched):
            reasons = result.unmatched["reason"].value_counts()
            first = result.unmatched.iloc[0]
            parts.append(f"{len(result.unmatched)} of {result.rows} rows did not match ("
                         + "; ".join(f"{r}: {n}" for r, n in reasons.items())
                         + f"; first {Path(first['file']).name}:{first['line']}"
                         + (f": {first['detail']}" if isinstance(first["detail"], str) else "") + ")")
        if len(result.missing):
            short = result.runs[result.runs["missing"] > 0]
            parts.append(f"{len(short)} run(s) lack examples of the dataset ({len(result.missing)} (run, example) "
                         f"pairs; {int(short['missing'].max())} at most per run of {result.n_examples})")
        raise ImportRefusedError(f"partial match with dataset {result.dataset!r}: " + "; ".join(parts)
                                 + "; allow_partial=True (--allow-partial) imports the matched rows", result)
    if not trust_labels and len(result.label_disagreements):
        bad = result.label_disagreements
        shown = ", ".join(f"(id {r.example_id!r}, file {r.file_label!r}, dataset {r.dataset_label!r})"
                          for r in bad.drop_duplicates("example_id").head(SHOWN).itertuples(index=False))
        raise ImportRefusedError(f"the files' gold labels differ from dataset {result.dataset!r} in {len(bad)} of "
                                 f"{result.matched} row(s) ({bad['example_id'].nunique()} example(s)): {shown}"
                                 + (" ..." if bad["example_id"].nunique() > SHOWN else "")
                                 + "; check the label map (a swapped 0/1 swaps the predictions too); "
                                 "trust_labels=True (--trust-labels) keeps the files' labels", result)
