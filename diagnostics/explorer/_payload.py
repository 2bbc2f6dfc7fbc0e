"""The instability explorer's data as JSON: what notebook 10 writes and the report's ``explorer.html`` embeds.

Written next to the notebook's figures as :data:`PAYLOAD_NAME`; :func:`read_payload` reads it back through the
checked JSON reader, so a file cut short or not JSON is one line naming the file, not a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.file_checks import read_json
from ..core.io_utils import write_text_atomic
from ..core.schema import ENTAILMENT, LABELS
from ..core.taxonomy import FINE
from ..stats import category_matrix
from ._format import display_round, run_label

#: File name of the explorer's data (written by the notebook next to its figures, read by the report).
PAYLOAD_NAME = "explorer.json"


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def build_payload(model, n: int = 5) -> dict:
    """Pack everything the report's ``explorer.html`` shows into compact JSON-ready structures.

    Sentences are stored once per dataset (``texts``; ``premise`` / ``hypothesis`` index them); predictions as
    one string per setting (``"1"`` entailment, ``"0"`` not, ``"."`` missing; example-major, seeds in order);
    probabilities as integers in per mille (-1 missing); categories as lists of row indices.

    Parameters
    ----------
    model : ExplorerModel
        The explorer's state (:mod:`diagnostics.explorer._model`).
    n : int
        Least stable categories per language in the page's lead section.

    Returns
    -------
    dict
        ``version, level, labels, keys, categories, features, datasets, settings, lead``. A comparison's payload
        (:meth:`diagnostics.explorer.ComparisonModel.payload`) adds ``pair``: ``{"a", "b", "names"}``, the indices
        of its two settings and their names; the page computes the outcomes of the examples itself.
    """
    cat_index = {c: j for j, c in enumerate(model.category_names)}
    features = sorted({f for t in model.texts.values() for col in ("features", "auto_features")
                       for fs in t[col] if fs is not None for f in fs},
                      key=lambda f: (FINE.index(f) if f in FINE else len(FINE), f))
    feature_index = {f: j for j, f in enumerate(features)}
    datasets, dataset_index, rows_of = [], {}, {}
    for i, s in enumerate(model.settings):
        name = str(s["dataset"])
        if name not in dataset_index:
            dataset_index[name] = len(datasets)
            datasets.append(name)
    packed_datasets = []
    for name in datasets:
        used = set().union(*(model.instance_rows(i)["example_id"] for i, s in enumerate(model.settings)
                             if str(s["dataset"]) == name))
        texts = model.texts[name]
        texts = texts[texts["id"].isin(used)]
        rows_of[name] = pd.Index(texts["id"])
        gold_labels = {}
        for i, s in enumerate(model.settings):
            if str(s["dataset"]) == name:
                gold_labels.update(zip(model.instance_rows(i)["example_id"], model.instance_rows(i)["label"]))
        names, members = category_matrix(texts.reset_index(drop=True), model.level, ids=texts["id"].to_numpy())
        member_lists = [[] for _ in model.category_names]
        for j, c in enumerate(names):
            if c in cat_index:
                member_lists[cat_index[c]] = np.flatnonzero(members[:, j]).tolist()
        has_auto = texts["auto_features"].notna().any()
        # diagnostic sets hold most sentences twice (a pair and its mirror): each sentence is stored once
        sentences = list(dict.fromkeys([*texts["premise"], *texts["hypothesis"]]))
        sentence_index = {t: j for j, t in enumerate(sentences)}
        packed_datasets.append({
            "name": name, "ids": texts["id"].tolist(), "texts": sentences,
            "premise": [sentence_index[t] for t in texts["premise"]],
            "hypothesis": [sentence_index[t] for t in texts["hypothesis"]],
            "label": "".join("1" if gold_labels[x] == ENTAILMENT else "0" for x in texts["id"]),
            "gold": [[feature_index[f] for f in fs] for fs in texts["features"]],
            "auto": [[feature_index[f] for f in (fs or [])] for fs in texts["auto_features"]] if has_auto
            else None,
            "members": member_lists})
    packed_settings = []
    for i, s in enumerate(model.settings):
        name = str(s["dataset"])
        index = rows_of[name]
        inst = model.instance_rows(i)
        row = index.get_indexer(inst["example_id"])
        n_runs = len(model.runs[i])
        pred = np.full((len(index), n_runs), ".", dtype="<U1")
        codes = np.array([[("." if p is None else "1" if p == ENTAILMENT else "0") for p in ps]
                          for ps in inst["predictions"]], dtype="<U1").reshape(len(inst), n_runs)
        pred[row] = codes
        prob = None
        if "probabilities" in inst:
            values = np.full((len(index), n_runs), -1, dtype=np.int64)
            p = np.array(list(inst["probabilities"]), dtype=float).reshape(len(inst), n_runs)
            # per mille of the correctly rounded 3-decimal value: the page prints the listing's digits
            values[row] = np.array([round(round(float(x), 3) * 1000) if np.isfinite(x) else -1 for x in p.ravel()],
                                   dtype=np.int64).reshape(p.shape)
            prob = values.ravel().tolist()
        flip = [None] * len(index)
        for r, v in zip(row, inst["flip_rate"].to_numpy()):
            flip[r] = display_round(v, 2)
        labels = [run_label(r) for r in model.runs[i]]
        wide = model.seed_mcc(i)
        table = model.category_table(i)
        mcc, sigma, mean, flip_share, n_cat, dsig = [], [], [], [], [], []
        members = packed_datasets[dataset_index[name]]["members"]
        for j, c in enumerate(model.category_names):
            present = c in wide.index and c in table.index
            # rounded once, to the decimals every view shows (the page prints them as they are)
            mcc.append([display_round(wide.at[c, lab], 2) if lab in wide.columns else None for lab in labels]
                       if present else None)
            sigma.append(display_round(table.at[c, "sigma"], 3) if present else None)
            mean.append(display_round(table.at[c, "mean"], 3) if present else None)
            flip_share.append(display_round(table.at[c, "flip_share"], 4) if present else None)
            n_cat.append(int(table.at[c, "n"]) if present else 0)
            delta = model.delta_sigma(i, c)
            ids = packed_datasets[dataset_index[name]]["ids"]
            dsig.append([display_round(delta.get(ids[r], np.nan), 3) for r in members[j]] if delta is not None
                        else None)
        packed_settings.append({**{k: _plain(v) for k, v in s.items() if k != "dataset"},
                                "dataset": dataset_index[name], "seeds": labels, "pred": "".join(pred.ravel()),
                                "prob": prob, "flip": flip, "mcc": mcc, "sigma": sigma, "mean": mean,
                                "flipShare": flip_share, "n": n_cat, "dsig": dsig})
    lead = model.least_stable(n)
    return {"version": 1, "level": model.level, "labels": list(LABELS), "keys": [k for k in model.keys
                                                                                if k != "dataset"],
            "leadExperiment": _plain(model.lead_experiment), "categories": model.category_names,
            "features": features, "datasets": packed_datasets, "settings": packed_settings,
            "lead": [[int(r.setting), cat_index[r.category]] for r in lead.itertuples(index=False)]}


def save_payload(model, path: str | Path, n: int = 5) -> Path:
    """Write :func:`build_payload` as compact JSON (what ``diagnostics report`` turns into ``explorer.html``).

    Parameters
    ----------
    model : ExplorerModel
        The explorer's state (:mod:`diagnostics.explorer._model`).
    path : str or Path
        A ``.json`` file, or a folder (created) to write :data:`PAYLOAD_NAME` into.
    n : int
        Least stable categories per language in the opening section.

    Returns
    -------
    Path
        The written file.
    """
    return write_payload(build_payload(model, n), path)


def write_payload(payload: dict, path: str | Path) -> Path:
    """Write a built payload as compact JSON (atomically).

    Parameters
    ----------
    payload : dict
        :func:`build_payload`, possibly with a ``pair`` (:meth:`diagnostics.explorer.ComparisonModel.payload`).
    path : str or Path
        A ``.json`` file, or a folder (created) to write :data:`PAYLOAD_NAME` into.

    Returns
    -------
    Path
        The written file.
    """
    path = Path(path)
    if path.is_dir() or path.suffix.lower() != ".json":
        path = path / PAYLOAD_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
    return path


class StaticPage:
    """The static views both explorer models share: :meth:`to_html` and the report's data (:meth:`save_payload`).

    A subclass sets ``_views`` to the module whose ``static_html(model, n, limit)`` renders it and defines
    ``payload(n)``.
    """

    _views = None

    def to_html(self, n: int = 5, limit: int = 20) -> str:
        """Render the static page (what papermill runs, the HTML report and front ends without widgets show).

        Parameters
        ----------
        n : int
            Categories shown (per language in the explorer; those with most changes in a comparison).
        limit : int
            Examples shown per category.

        Returns
        -------
        str
            An HTML fragment.
        """
        return self._views.static_html(self, n, limit)

    def save_payload(self, path: str | Path, n: int = 5) -> Path:
        """Write ``payload(n)`` as compact JSON (``diagnostics report`` turns it into ``explorer.html``).

        Parameters
        ----------
        path : str or Path
            A ``.json`` file, or a folder (created) to write :data:`PAYLOAD_NAME` into.
        n : int
            Least stable categories per language in the page's lead section.

        Returns
        -------
        pathlib.Path
            The written file.
        """
        return write_payload(self.payload(n), path)


def read_payload(path: str | Path) -> dict:
    """Read a payload written by :func:`save_payload`.

    Parameters
    ----------
    path : str or Path
        The JSON file.

    Returns
    -------
    dict
        The payload, as :func:`build_payload` made it.

    Raises
    ------
    diagnostics.core.errors.UserInputError
        When the file is not UTF-8, not JSON or cut short (one line naming the file).
    OSError
        When the file cannot be read.
    """
    return read_json(path, "the instability explorer's data (JSON)")
