"""Matching imported prediction rows to the examples of a dataset: by id, by the texts, or by position.

Each matcher fills ``example_id`` and ``matched_by`` of the rows it places and gives the others a ``reason`` (and a
``detail``) that the import report lists; a row keeps the first reason it gets.
"""

from __future__ import annotations

import difflib
import functools
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ..data import shorten
from ._text import loose_key, match_key

#: How a row matched when only :func:`~diagnostics.predictions._text.loose_key` (punctuation ignored) found it.
LOOSE = "text (punctuation ignored)"
LOOSE_ID = "id (texts equal with punctuation ignored)"
#: The columns that name a row's run.
RUN_KEYS = ["experiment", "language", "model", "pretrain_seed", "seed"]
#: How many examples a message names before "...".
SHOWN = 3


@functools.lru_cache(maxsize=1 << 15)
def _cached_keys(premise: str, hypothesis: str, loose: bool) -> str:
    return (loose_key if loose else match_key)(premise, hypothesis)


def _key(premise, hypothesis, loose: bool = False) -> str:
    """:func:`match_key` (or :func:`loose_key`) of a pair, remembered for text pairs: an import's runs and the dataset
    repeat the same texts."""
    if type(premise) is str and type(hypothesis) is str:
        return _cached_keys(premise, hypothesis, loose)
    return (loose_key if loose else match_key)(premise, hypothesis)


def match_rows(rows: pd.DataFrame, known: pd.DataFrame, dataset: str, match: str, order_ids: np.ndarray) -> str:
    """Place every row of ``rows`` on an example of ``known`` (in place) and return the method used.

    ``match`` is one of ``auto``, ``id``, ``text``, ``position``; ``auto`` picks the first the rows allow.
    """
    rows["example_id"], rows["reason"], rows["detail"], rows["matched_by"] = None, None, None, None
    _check_values(rows, dataset)
    method = _method(match, rows)
    if method == "id":
        _match_ids(rows, known)
    elif method == "text":
        _match_texts(rows, known)
    else:
        _match_positions(rows, order_ids)
    _mark_duplicates(rows)
    return method


def fail(rows: pd.DataFrame, mask, reason: str, detail=None) -> None:
    """Give ``reason`` (and ``detail``) to the rows of ``mask`` that have no reason yet."""
    mask = np.asarray(mask, dtype=bool) & rows["reason"].isna().to_numpy()
    rows.loc[mask, "reason"] = reason
    if detail is not None:
        details = detail if np.ndim(detail) == 0 else np.asarray(detail, dtype=object)[mask]
        rows.loc[mask, "detail"] = details


def _check_values(rows: pd.DataFrame, dataset: str) -> None:
    if "dataset" in rows.columns:
        other = rows["dataset"].notna() & (rows["dataset"].astype(str) != dataset)
        fail(rows, other, "row of another dataset", "dataset " + rows["dataset"].astype(str))
    no_value = rows["prediction_raw"].isna() if "prediction_raw" in rows.columns else rows["prediction"].isna()
    fail(rows, no_value & rows["prediction"].isna(), "no prediction")
    raw = rows["prediction_raw"] if "prediction_raw" in rows.columns else rows["prediction"]
    fail(rows, rows["prediction"].isna(), "prediction is no label",
          "value " + raw.map(lambda v: shorten(v)) + " (map it with --label-map)")


def _method(match: str, rows: pd.DataFrame) -> str:
    has = {key: key in rows.columns and rows[key].notna().any() for key in ("id", "premise", "hypothesis", "position")}
    if match == "auto":
        if has["id"]:
            return "id"
        if has["premise"] and has["hypothesis"]:
            return "text"
        if has["position"]:
            return "position"
        raise UserInputError("the files have no example id, no premise and hypothesis and no position: name the id "
                             "column with --map id=COLUMN (or the texts with --map premise=... --map hypothesis=...)")
    needed = {"id": ["id"], "text": ["premise", "hypothesis"], "position": ["position"]}[match]
    if not all(has[k] for k in needed):
        raise UserInputError(f"match by {match}: the files have no {' / '.join(needed)} column; name it with "
                             f"--map {needed[0]}=COLUMN")
    return match


def _match_ids(rows: pd.DataFrame, known: pd.DataFrame) -> None:
    ids = known["id"].astype(str)
    if not ids.is_unique:
        raise UserInputError("the dataset repeats example ids (several splits): match by text or position")
    todo = rows["reason"].isna().to_numpy()
    no_id = todo & rows["id"].isna().to_numpy()
    fail(rows, no_id, "no id")
    present = rows["reason"].isna().to_numpy()
    unknown = present & ~rows["id"].isin(set(ids)).to_numpy()
    fail(rows, unknown, "unknown id", "id " + rows["id"].astype(str))
    good = rows["reason"].isna().to_numpy()
    rows.loc[good, "example_id"] = rows.loc[good, "id"]
    rows.loc[good, "matched_by"] = "id"
    if "premise" in rows.columns and "hypothesis" in rows.columns:
        keys = pd.Series([_key(p, h) for p, h in zip(known["premise"], known["hypothesis"])],
                         index=ids.to_numpy())
        texts = good & rows["premise"].notna().to_numpy() & rows["hypothesis"].notna().to_numpy()
        if texts.any():
            mine = [_key(p, h) for p, h in zip(rows.loc[texts, "premise"], rows.loc[texts, "hypothesis"])]
            expected = keys.reindex(rows.loc[texts, "example_id"]).to_numpy()
            differ = np.zeros(len(rows), dtype=bool)
            differ[np.flatnonzero(texts)] = np.asarray(mine, dtype=object) != expected
            if differ.any():  # the second tier: equal once punctuation lost in export is ignored
                loose = pd.Series([_key(p, h, True) for p, h in zip(known["premise"], known["hypothesis"])],
                                  index=ids.to_numpy())
                where = np.flatnonzero(differ)
                same = np.asarray([_key(p, h, True) for p, h in zip(rows["premise"].to_numpy()[where],
                                                                    rows["hypothesis"].to_numpy()[where])],
                                  dtype=object) == loose.reindex(rows["example_id"].to_numpy()[where]).to_numpy()
                rows.loc[rows.index[where[same]], "matched_by"] = LOOSE_ID
                differ[where[same]] = False
            fail(rows, differ, "text differs from the dataset's",
                  "the example with id " + rows["id"].astype(str) + " has other texts (are the ids of this dataset?)")
            rows.loc[differ, ["example_id", "matched_by"]] = None


def _match_texts(rows: pd.DataFrame, known: pd.DataFrame) -> None:
    keys: dict[str, list[str]] = {}
    premises: dict[str, list[str]] = {}
    hypotheses: dict[str, list[str]] = {}
    known_ids = list(known["id"].astype(str))
    for ident, premise, hypothesis in zip(known_ids, known["premise"], known["hypothesis"]):
        key = _key(premise, hypothesis)
        keys.setdefault(key, []).append(ident)
        first, second = key.split("\t")
        premises.setdefault(first, []).append(ident)
        hypotheses.setdefault(second, []).append(ident)
    no_text = rows["premise"].isna() | rows["hypothesis"].isna()
    fail(rows, no_text.to_numpy(), "no premise or hypothesis")
    used: dict[tuple, int] = {}
    run = [k for k in RUN_KEYS if k in rows.columns]
    key_of = {i: k for k, ids in keys.items() for i in ids}
    todo = np.flatnonzero(rows["reason"].isna().to_numpy())
    loose: dict[str, list[str]] | None = None
    reason, detail, example, by = (rows[c].to_numpy(dtype=object).copy()
                                   for c in ("reason", "detail", "example_id", "matched_by"))
    runs = list(zip(*(rows[k].to_numpy()[todo] for k in run)))
    for pos, slot_run, premise, hypothesis in zip(todo, runs, rows["premise"].to_numpy()[todo],
                                                  rows["hypothesis"].to_numpy()[todo]):
        key = _key(premise, hypothesis)
        candidates, tier = keys.get(key), "text"
        if candidates is None and loose is None:  # the second tier's keys, made when a row first needs them
            loose = {}
            for ident, known_premise, known_hypothesis in zip(known_ids, known["premise"], known["hypothesis"]):
                loose.setdefault(_key(known_premise, known_hypothesis, True), []).append(ident)
        if candidates is None and (near := loose.get(_key(premise, hypothesis, True))):
            exact = list(dict.fromkeys(key_of[i] for i in near))
            if len(exact) > 1:  # two different examples once punctuation is ignored: never guess
                reason[pos] = "ambiguous with punctuation ignored"
                detail[pos] = (f"matches {len(near)} examples when punctuation is ignored (ids "
                               + ", ".join(near[:SHOWN]) + (" ..." if len(near) > SHOWN else "") + ")")
                continue
            key, candidates, tier = exact[0], keys[exact[0]], LOOSE
        if candidates is None:
            first, second = key.split("\t")
            reason[pos] = "no example with these texts"
            detail[pos] = ("premise found, hypothesis differs" if first in premises else
                           "hypothesis found, premise differs" if second in hypotheses else "neither text found")
            continue
        k = used.get((slot_run, key), 0)
        used[(slot_run, key)] = k + 1
        if k >= len(candidates):
            reason[pos] = "duplicate"
            detail[pos] = f"the run has more rows with these texts than the dataset has examples ({len(candidates)})"
            continue
        example[pos] = candidates[k]
        by[pos] = tier if len(candidates) == 1 else f"{tier} (in order)"
    rows["reason"], rows["detail"], rows["example_id"], rows["matched_by"] = reason, detail, example, by
    _closest(rows, key_of, premises, hypotheses)


def _closest(rows: pd.DataFrame, key_of: dict[str, str], premises: dict[str, list[str]],
             hypotheses: dict[str, list[str]], limit: int = 10) -> None:
    """For the first ``limit`` rows whose texts were not found: the example with the nearest texts, if one is close.

    Candidates are the examples that share the row's premise or hypothesis, else those whose premise or hypothesis is
    close (``difflib``, ratio >= 0.8); the nearest is the candidate whose two texts together are most similar to the
    row's.
    """
    rows["closest_id"] = None
    missing = np.flatnonzero((rows["reason"] == "no example with these texts").to_numpy())[:limit]
    order = {ident: i for i, ident in enumerate(key_of)}
    for pos in missing:
        key = _key(rows["premise"].iat[pos], rows["hypothesis"].iat[pos])
        first, second = key.split("\t")
        found = set(premises.get(first, [])) | set(hypotheses.get(second, []))
        for text, index in ((first, premises), (second, hypotheses)) if not found else ():
            for near in difflib.get_close_matches(text, list(index), n=3, cutoff=0.8):
                found.update(index[near])
        if found:
            best = max(sorted(found, key=order.get),
                       key=lambda ident: difflib.SequenceMatcher(None, key, key_of[ident]).ratio())
            rows.iat[pos, rows.columns.get_loc("closest_id")] = best


def _match_positions(rows: pd.DataFrame, order_ids: np.ndarray) -> None:
    position = pd.to_numeric(rows["position"], errors="coerce")
    bad = (position.isna() | (position != np.round(position)) | (position < 0)).to_numpy()
    fail(rows, bad, "no position", "position " + rows["position"].astype(str))
    beyond = ~bad & (position.fillna(-1) >= len(order_ids)).to_numpy()
    fail(rows, beyond, "position beyond the dataset",
          "position " + rows["position"].astype(str) + f" of {len(order_ids)} examples")
    implicit = rows["_implicit_position"].to_numpy(dtype=bool)
    for file, part in rows[implicit].groupby("file", sort=False):
        if len(part) != len(order_ids):
            raise UserInputError(f"{file}: {len(part)} rows of scores, the dataset has {len(order_ids)} examples; a "
                                 "Trainer output is matched by position and must hold every example in the dataset's "
                                 "order (or give the ids in its order with --order)")
    good = rows["reason"].isna().to_numpy()
    rows.loc[good, "example_id"] = order_ids[position[good].astype(int).to_numpy()]
    rows.loc[good, "matched_by"] = "position"


def _mark_duplicates(rows: pd.DataFrame) -> None:
    run = [k for k in RUN_KEYS if k in rows.columns]
    good = rows["reason"].isna()
    dup = good & rows.duplicated(run + ["example_id"], keep="first") & rows["example_id"].notna()
    if not dup.any():
        return
    first = rows[good & ~dup].drop_duplicates(run + ["example_id"]).set_index(run + ["example_id"])
    where = first.reindex(pd.MultiIndex.from_frame(rows.loc[dup, run + ["example_id"]]))
    details = [f"another row of the run has example {e} ({Path(f).name}:{line})" for e, f, line in
               zip(rows.loc[dup, "example_id"], where["file"], where["_line"])]
    rows.loc[dup, "reason"] = "duplicate"
    rows.loc[dup, "detail"] = details
    rows.loc[dup, ["example_id", "matched_by"]] = None
