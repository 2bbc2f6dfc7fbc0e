"""Dataset registry: name -> files + reader, and the public :func:`load` entry point.

The registry is filled when this module is imported and is not changed afterwards: a user's file travels with
its reference (:class:`~diagnostics.data.DataRef`, or ``load(name, path=...)``) as a value.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ..core.errors import UnknownNameError
from ..core.resources import datasets_dir
from . import _readers as readers
from ._errors import DataFormatError
from ._kinds import KINDS  # noqa: F401  (re-exported: the registry names the formats a file may be read as)
from ._normalise import normalise_csv_quotes

Reader = Callable[..., pd.DataFrame]


def datasets_root() -> Path:
    """Return the folder holding the bundled data.

    ``$DIAGNOSTICS_DATASETS`` overrides the project root's ``datasets/``; see
    :func:`diagnostics.core.resources.datasets_dir`.

    Returns
    -------
    Path
        The datasets folder.
    """
    return datasets_dir()


@dataclass(frozen=True)
class DatasetSpec:
    """How to find and read one registered dataset.

    Parameters
    ----------
    name : str
        Registry name (``rte``, ``lidirus`` ...).
    language : str
        ISO 639-1 code of the texts.
    kind : str
        ``rte`` (binary entailment), ``diagnostic`` (with fine categories) or ``nli3`` (3-way NLI).
    reader : callable
        ``reader(path, language) -> DataFrame``, one of :mod:`diagnostics.data._readers`.
    folder : str or None
        Folder under :func:`datasets_root`; ``None`` for data the user must supply by ``path=``.
    splits : dict
        Split name -> file name inside ``folder``.
    split_column : str or None
        For single-file datasets holding several splits (SICK): the column whose value is the split.
    description : str
        One line for ``diagnostics data list``.
    """

    name: str
    language: str
    kind: str
    reader: Reader
    folder: str | None = None
    splits: dict[str, str] = field(default_factory=dict)
    split_column: str | None = None
    description: str = ""


REGISTRY: dict[str, DatasetSpec] = {}


def register(spec: DatasetSpec) -> DatasetSpec:
    """Add a dataset to the registry (a later registration of the same name replaces it).

    Parameters
    ----------
    spec : DatasetSpec
        The dataset, registered under ``spec.name``.

    Returns
    -------
    DatasetSpec
        ``spec`` itself.
    """
    REGISTRY[spec.name] = spec
    return spec


#: Languages whose RTE-style data and diagnostic may come from the user's files, each under its own dataset name
#: (so that predictions of two languages' diagnostics never share one ``dataset`` value).
USER_LANGUAGES = ("en", "ru", "fr", "de", "sv")


def user_dataset(language: str, kind: str) -> str:
    """Name the registered dataset of a language's user-supplied data: ``rte_fr`` (kind ``rte``) or ``diagnostic_fr``.

    Parameters
    ----------
    language : str
        Language code (one of :data:`USER_LANGUAGES` is registered).
    kind : {"rte", "diagnostic"}
        RTE-style data or a diagnostic set.

    Returns
    -------
    str
        ``<kind>_<language>``.

    Raises
    ------
    ValueError
        For another ``kind``.
    """
    if kind not in ("rte", "diagnostic"):
        raise ValueError(f"kind must be 'rte' or 'diagnostic', found {kind!r}")
    return f"{kind}_{language}"


def _bundled() -> None:
    register(DatasetSpec("rte", "en", "rte", readers.read_rte_jsonl, "rte",
                         {"train": "train.jsonl", "validation": "val.jsonl", "test": "test.jsonl"},
                         description="SuperGLUE RTE (English entailment)"))
    register(DatasetSpec("terra", "ru", "rte", readers.read_rte_jsonl, "terra",
                         {"train": "train.jsonl", "validation": "val.jsonl", "test": "test.jsonl"},
                         description="TERRa (Russian SuperGLUE entailment)"))
    register(DatasetSpec("axb", "en", "diagnostic", readers.read_glue_diagnostic_tsv, "glue_diagnostic",
                         {"test": "diagnostic-full.tsv"},
                         description="GLUE/SuperGLUE broad-coverage diagnostic, English (diagnostic-full: 3-way labels, domain)"))
    register(DatasetSpec("axb_superglue", "en", "diagnostic", readers.read_diagnostic_jsonl, "superglue_axb",
                         {"test": "AX-b.jsonl"}, description="SuperGLUE AX-b JSONL (binary labels), English"))
    register(DatasetSpec("lidirus", "ru", "diagnostic", readers.read_diagnostic_jsonl, "lidirus",
                         {"test": "LiDiRus.jsonl"}, description="LiDiRus (Russian SuperGLUE diagnostic)"))
    register(DatasetSpec("swediagnostics", "sv", "diagnostic", readers.read_swediagnostics_jsonl,
                         "swediagnostics_superlim", {"test": "swediagnostics_test.jsonl"},
                         description="SweDiagnostics (SuperLim 2 Swedish diagnostic; 3-way labels)"))
    register(DatasetSpec("sick", "en", "nli3", readers.read_sick, "sick",
                         {"train": "SICK.txt", "trial": "SICK.txt", "test": "SICK.txt"}, split_column="semeval_set",
                         description="SICK (3-way NLI; CC BY-NC-SA 3.0), extra English data"))
    register(DatasetSpec("mnli", "en", "nli3", readers.read_mnli,
                         description="MultiNLI, user-supplied (GLUE .tsv or MultiNLI .jsonl) via path="))
    register(DatasetSpec("rte_format", "xx", "rte", readers.read_rte_jsonl,
                         description="any RTE/TERRa-format JSONL file, via path= (set language=)"))
    register(DatasetSpec("diagnostic_format", "xx", "diagnostic", readers.read_diagnostic_jsonl,
                         description="any AX-b/LiDiRus-format JSONL diagnostic, via path= (set language=)"))
    for lang in USER_LANGUAGES:
        register(DatasetSpec(user_dataset(lang, "rte"), lang, "rte", readers.read_rte_jsonl,
                             description=f"RTE/TERRa-format JSONL in {lang}, user-supplied (train / validation / test)"))
        register(DatasetSpec(user_dataset(lang, "diagnostic"), lang, "diagnostic", readers.read_diagnostic_jsonl,
                             description=f"AX-b/LiDiRus-format diagnostic JSONL in {lang}, user-supplied"))


_bundled()

def manifest(spec: DatasetSpec) -> dict:
    """Read the ``manifest.json`` of a bundled dataset (source, commit, license, sha256 per file).

    Parameters
    ----------
    spec : DatasetSpec
        A bundled dataset (``spec.folder`` set).

    Returns
    -------
    dict
        The parsed manifest.

    Raises
    ------
    ValueError
        When the dataset is not bundled.
    """
    if spec.folder is None:
        raise ValueError(f"dataset {spec.name!r} is not bundled; it has no manifest")
    return json.loads((datasets_root() / spec.folder / "manifest.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=64)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify(spec: DatasetSpec, file_name: str) -> Path:
    """Return the path of a bundled file after checking its sha256 against the manifest.

    ``file_name`` is a file of the dataset's folder listed in the manifest; the path is under :func:`datasets_root`.
    Raises ``DataFormatError`` when the file's checksum differs from the manifest's (a corrupted or edited copy).
    """
    path = datasets_root() / spec.folder / file_name
    expected = manifest(spec)["files"][file_name]["sha256"]
    stat = path.stat()
    found = _sha256(path, stat.st_size, stat.st_mtime_ns)
    if found != expected:
        raise DataFormatError(path, None, f"sha256 {expected} (from manifest.json)", f"sha256 {found}",
                              "the bundled file was modified; restore it with `git checkout -- datasets/`")
    return path


def get_spec(name: str) -> DatasetSpec:
    """Look up a registered dataset, with a suggestion for near-miss names.

    Parameters
    ----------
    name : str
        Registered name.

    Returns
    -------
    DatasetSpec
        Its spec.

    Raises
    ------
    UnknownNameError
        For an unknown name (a ``KeyError``; the message suggests the closest registered one).
    """
    try:
        return REGISTRY[name]
    except KeyError:
        import difflib

        near = difflib.get_close_matches(name, list(REGISTRY), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise UnknownNameError(f"unknown dataset {name!r}{hint} (registered: {', '.join(sorted(REGISTRY))})") from None


def available() -> pd.DataFrame:
    """List the registered datasets.

    Returns
    -------
    pandas.DataFrame
        One row per dataset: ``name, language, kind, splits`` (list of split names), ``bundled`` (bool),
        ``description``.
    """
    return pd.DataFrame(
        [
            {"name": s.name, "language": s.language, "kind": s.kind, "splits": list(s.splits),
             "bundled": s.folder is not None, "description": s.description}
            for s in REGISTRY.values()
        ]
    )


def _read_split(spec: DatasetSpec, split: str, language: str) -> pd.DataFrame:
    frame = spec.reader(verify(spec, spec.splits[split]), language)
    if spec.split_column is not None:
        frame = frame[frame[spec.split_column] == split].reset_index(drop=True)
    return frame.assign(split=split)


def load(name, split: str | None = None, path: str | Path | None = None, *,
         language: str | None = None, normalise_quotes: bool = False) -> pd.DataFrame:
    """Load a registered dataset (or a user file in its format) as a tidy table.

    Parameters
    ----------
    name : str or DataRef
        A registered name, see :func:`available`; or a reference, whose split, file and language are used
        (:class:`~diagnostics.data.DataRef`: a user file travels with its reference, as a value).
    split : str, optional
        ``train``, ``validation``, ``test`` (``trial`` for SICK). ``None`` loads every split, stacked,
        with a ``split`` column. Ignored for the split name when ``path`` is given (recorded as given or ``"user"``).
    path : str or Path, optional
        Read this file with the dataset's reader instead of the bundled copy: a French translation of
        TERRa loads with ``load("rte_format", path="fr/train.jsonl", language="fr")``.
    language : str, optional
        Overrides the registered language (for user files).
    normalise_quotes : bool
        Undo CSV-quoting leftovers (TERRa ``\"\"\"...\"\"``) into new ``premise``/``hypothesis`` values; the raw
        texts are kept in ``premise_raw``/``hypothesis_raw``. Off by default: data is returned as published.

    Returns
    -------
    pandas.DataFrame
        Columns ``id, premise, hypothesis, label, language, dataset, split`` (+ ``label3`` where the source has
        3-way labels, ``features`` and ``coarse`` lists of canonical category names for diagnostic sets).
        ``label`` is ``entailment``/``not_entailment``, or missing for unlabelled test splits.

    Raises
    ------
    DataFormatError
        Malformed file (names file, line, expected and found) or a bundled file failing its checksum.
    UnknownNameError
        Unknown dataset or split name (a ``KeyError``).
    """
    if not isinstance(name, str):  # a DataRef (not imported: it loads through this function)
        name, split, path, language = name.name, name.split, name.path, name.language
    spec = get_spec(name)
    lang = language or spec.language
    if path is not None:
        frame = spec.reader(Path(path), lang).assign(split=split or "user")
    elif spec.folder is None:
        raise FileNotFoundError(f"dataset {name!r} is not bundled (no public copy is reachable offline): "
                                f"pass path= to your own copy, e.g. diagnostics.data.load({name!r}, path='train.jsonl')")
    else:
        if split is not None and split not in spec.splits:
            raise UnknownNameError(f"dataset {name!r} has no split {split!r}; splits: {', '.join(spec.splits)}")
        chosen = [split] if split is not None else list(spec.splits)
        frame = pd.concat([_read_split(spec, s, lang) for s in chosen], ignore_index=True)
    frame.insert(frame.columns.get_loc("language") + 1, "dataset", name)
    if normalise_quotes:
        for column in ("premise", "hypothesis"):
            frame[f"{column}_raw"] = frame[column]
            frame[column] = frame[column].map(normalise_csv_quotes)
    return frame
