"""Two systems side by side: per category both settings' per-seed MCC, per example who flips where.

A :class:`ComparisonModel` holds two settings A and B of one explorer (:class:`~diagnostics.explorer.ExplorerModel`)
on the same diagnostic set: two experiments or models of one run store (:meth:`ExplorerModel.compare
<diagnostics.explorer.ExplorerModel.compare>`), or two systems' prediction tables
(:func:`~diagnostics.explorer.build_comparison`). Per category it shows both sides' per-seed MCC (a strip of points
per side, with mean and σ); per example it puts A's seeds beside B's and names the **outcome** (:data:`OUTCOMES`):

* ``correct_both``, *stable-correct in both*: every seed of A and every seed of B is right;
* ``fixed``, *fixed by B*: every seed of A is wrong, every seed of B right;
* ``broken``, *broken by B*: every seed of A is right, every seed of B wrong;
* ``unstable``, *unstable in either*: the seeds of A, or those of B, disagree (``flips`` says which side:
  ``A``, ``B`` or ``A and B``; it is empty for the other outcomes);
* ``wrong_both``, *stable-wrong in both*: every seed of both sides is wrong.

Only the seeds that predict an example count; an example that one side does not predict at all is left out. With
one run per side ``fixed`` and ``broken`` are McNemar's discordant pairs (``b_only`` and ``a_only`` of
:func:`diagnostics.predictions.compare_tables`) and nothing is unstable.

The same model draws the notebook widget (:mod:`diagnostics.explorer._compare_widget`), the static tables
(:mod:`diagnostics.explorer._compare_html`) and, as the ``pair`` of the explorer's data, the two-system section of
the report's ``explorer.html``, which computes the same outcomes from the same predictions in the page.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from . import _compare_html as _html
from . import _payload as _payload
from ._format import OUTCOME_FILTERS, OUTCOMES, display_round, run_label

_UNSET = object()


def side_names(setting_a: Mapping, setting_b: Mapping) -> tuple[str, str]:
    """Name the two sides by the setting values that differ (``"base"`` and ``"extra-1000"``), else A and B.

    Parameters
    ----------
    setting_a, setting_b : mapping
        The setting keys of each side.

    Returns
    -------
    tuple of str
        The names shown for A and B (the report's page names a pair it is given the same way).
    """
    differing = [k for k in setting_a if k != "dataset" and setting_a[k] != setting_b.get(k)]
    if not differing:
        return "A", "B"
    return tuple(" · ".join(str(s[k]) for k in differing) for s in (setting_a, setting_b))  # type: ignore


def _correct(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per example: seeds predicting it, seeds right, and the predictions as an (examples x seeds) object array."""
    k = len(rows["predictions"].iat[0]) if len(rows) else 0
    predicted = np.array(list(rows["predictions"]), dtype=object).reshape(len(rows), k)
    present = predicted != None  # noqa: E711 - elementwise over an object array
    right = present & (predicted == rows["label"].to_numpy(dtype=object)[:, None])
    return present.sum(axis=1), right.sum(axis=1), predicted


class ComparisonModel(_payload.StaticPage):
    """Two settings of one explorer side by side: per-seed MCC per category, and who flips where per example.

    Parameters
    ----------
    explorer : ExplorerModel
        The explorer holding both settings (:class:`~diagnostics.explorer.ExplorerModel`).
    a, b : int
        Indices into ``explorer.settings`` of the baseline A and of B.
    names : tuple of str, optional
        How the sides are called (default: :func:`side_names`).

    Raises
    ------
    ValueError
        When A and B are the same setting, or settings of different datasets.
    UserInputError
        When A and B give a shared example different gold labels.

    Notes
    -----
    Build it with :meth:`ExplorerModel.compare <diagnostics.explorer.ExplorerModel.compare>` or
    :func:`~diagnostics.explorer.build_comparison`; open it with :func:`~diagnostics.explorer.explore`.
    """

    _views = _html

    def __init__(self, explorer, a: int, b: int, names: tuple[str, str] | None = None):
        for side in (a, b):
            if not 0 <= side < len(explorer.settings):
                raise ValueError(f"no setting {side}; the explorer has {len(explorer.settings)}")
        if a == b:
            raise ValueError("A and B are the same setting: choose two different settings")
        dataset_a, dataset_b = (str(explorer.settings[s]["dataset"]) for s in (a, b))
        if dataset_a != dataset_b:
            raise ValueError(f"A is on {dataset_a} and B on {dataset_b}: compare two settings of one diagnostic set")
        self.explorer, self.a, self.b = explorer, a, b
        self.dataset = dataset_a
        self.setting_a, self.setting_b = dict(explorer.settings[a]), dict(explorer.settings[b])
        self.names = tuple(names) if names is not None else side_names(self.setting_a, self.setting_b)
        if len(self.names) != 2 or self.names[0] == self.names[1]:
            raise ValueError(f"names: expected two different names, found {self.names!r}")
        self.labels_a = [run_label(r) for r in explorer.runs[a]]
        self.labels_b = [run_label(r) for r in explorer.runs[b]]
        self._rows_a, self._rows_b = explorer.instance_rows(a), explorer.instance_rows(b)
        self._outcomes = self._compute_outcomes()
        self.category_names = [c for c in explorer.category_names
                               if explorer.delta_sigma(a, c) is not None and explorer.delta_sigma(b, c) is not None]
        self._categories = self._compute_categories()
        self.outcome: str | None = None
        self.selection: str | None = None

    # --- computed once ------------------------------------------------------------------------------------------

    def _compute_outcomes(self) -> pd.DataFrame:
        n_a, right_a, _ = _correct(self._rows_a)
        n_b, right_b, _ = _correct(self._rows_b)
        side_a = pd.DataFrame({"n_a": n_a, "correct_a": right_a, "label": self._rows_a["label"].to_numpy()},
                              index=self._rows_a.index)
        side_b = pd.DataFrame({"n_b": n_b, "correct_b": right_b, "label_b": self._rows_b["label"].to_numpy()},
                              index=self._rows_b.index)
        texts = self.explorer.texts[self.dataset]
        order = [i for i in texts["id"] if i in side_a.index and i in side_b.index]
        frame = side_a.loc[order].join(side_b.loc[order])
        frame = frame[(frame["n_a"] > 0) & (frame["n_b"] > 0)]
        differ = frame.index[frame["label"] != frame["label_b"]]
        if len(differ):
            raise UserInputError(f"A and B give {len(differ)} shared examples different gold labels (first: "
                                 f"{differ[0]}); compare predictions of the same dataset version")
        #: examples that one side predicts and the other does not (left out of the comparison)
        self.only_one_side = len(set(side_a.index[side_a["n_a"] > 0]) ^ set(side_b.index[side_b["n_b"] > 0]))
        unstable_a = (frame["correct_a"] > 0) & (frame["correct_a"] < frame["n_a"])
        unstable_b = (frame["correct_b"] > 0) & (frame["correct_b"] < frame["n_b"])
        right_a, right_b = frame["correct_a"] == frame["n_a"], frame["correct_b"] == frame["n_b"]
        outcome = np.select([unstable_a | unstable_b, right_a & right_b, ~right_a & right_b, right_a & ~right_b],
                            ["unstable", "correct_both", "fixed", "broken"], "wrong_both")
        flips = np.select([unstable_a & unstable_b, unstable_a, unstable_b], ["A and B", "A", "B"], "")
        out = pd.DataFrame({"example_id": frame.index.to_numpy(), "label": frame["label"].to_numpy(),
                            "n_a": frame["n_a"].to_numpy(dtype=np.int64),
                            "correct_a": frame["correct_a"].to_numpy(dtype=np.int64),
                            "n_b": frame["n_b"].to_numpy(dtype=np.int64),
                            "correct_b": frame["correct_b"].to_numpy(dtype=np.int64),
                            "outcome": outcome, "flips": flips})
        return out.set_index("example_id", drop=False)

    def _compute_categories(self) -> pd.DataFrame:
        table_a, table_b = self.explorer.category_table(self.a), self.explorer.category_table(self.b)
        rows = []
        for c in self.category_names:
            members = self.members(c)
            outcomes = self._outcomes.loc[members]
            counts = outcomes["outcome"].value_counts()
            mean_a, mean_b = display_round(table_a.at[c, "mean"], 3), display_round(table_b.at[c, "mean"], 3)
            rows.append({"category": c, "n": len(members),
                         "mean_a": mean_a, "sigma_a": display_round(table_a.at[c, "sigma"], 3),
                         "mean_b": mean_b, "sigma_b": display_round(table_b.at[c, "sigma"], 3),
                         # the difference of the means as shown, so every view prints the same digits
                         "delta": None if mean_a is None or mean_b is None else round(mean_b - mean_a, 3),
                         **{name: int(counts.get(name, 0)) for name in OUTCOMES},
                         "flips_a": int(outcomes["flips"].isin(["A", "A and B"]).sum()),
                         "flips_b": int(outcomes["flips"].isin(["B", "A and B"]).sum())})
        columns = ["category", "n", "mean_a", "sigma_a", "mean_b", "sigma_b", "delta", *OUTCOMES, "flips_a",
                   "flips_b"]
        return pd.DataFrame(rows, columns=columns).set_index("category")

    # --- tables -------------------------------------------------------------------------------------------------

    def members(self, category: str) -> list[str]:
        """List the shared examples of a category, in the dataset's order.

        Parameters
        ----------
        category : str

        Returns
        -------
        list of str
            Example ids that both sides predict.
        """
        delta = self.explorer.delta_sigma(self.a, category)
        if delta is None:
            return []
        mine = set(delta.index)
        return [i for i in self._outcomes.index if i in mine]

    def outcomes(self) -> pd.DataFrame:
        """Tabulate every shared example's outcome.

        Returns
        -------
        pandas.DataFrame
            In the dataset's order, indexed by ``example_id``: ``example_id, label``, ``n_a`` / ``n_b`` (seeds of
            each side predicting it), ``correct_a`` / ``correct_b`` (seeds that are right), ``outcome`` (a key of
            :data:`OUTCOMES`) and ``flips`` (``A``, ``B``, ``A and B``; empty when both sides' seeds agree).
        """
        return self._outcomes

    def category_table(self) -> pd.DataFrame:
        """Tabulate each category: both sides' mean and σ of per-seed MCC, the difference, the outcome counts.

        Returns
        -------
        pandas.DataFrame
            Indexed by category (taxonomy order): ``n`` (shared examples), ``mean_a, sigma_a, mean_b, sigma_b``
            (rounded to 3 decimals, as shown), ``delta`` (``mean_b - mean_a`` of the shown means), one count per
            outcome (:data:`OUTCOMES`), ``flips_a`` and ``flips_b`` (examples whose seeds disagree on each side).
        """
        return self._categories

    def counts(self, category: str | None = None) -> dict[str, int]:
        """Count the examples of each outcome, in a category or over all shared examples.

        Parameters
        ----------
        category : str, optional
            Category (default: every shared example).

        Returns
        -------
        dict of str to int
            Outcome -> examples, in :data:`OUTCOMES` order.
        """
        frame = self._outcomes if category is None else self._outcomes.loc[self.members(category)]
        found = frame["outcome"].value_counts()
        return {name: int(found.get(name, 0)) for name in OUTCOMES}

    def seed_mcc(self, category: str | None = None) -> pd.DataFrame:
        """Tabulate both sides' per-seed MCC (what the strips show).

        Parameters
        ----------
        category : str, optional
            One category (default: all of :attr:`category_names`).

        Returns
        -------
        pandas.DataFrame
            Long format: ``category, side`` (``A`` / ``B``), ``seed`` (label), ``mcc`` (NaN where undefined).
        """
        rows = []
        for c in ([category] if category is not None else self.category_names):
            for side, setting, labels in (("A", self.a, self.labels_a), ("B", self.b, self.labels_b)):
                wide = self.explorer.seed_mcc(setting)
                for label in labels:
                    value = wide.at[c, label] if c in wide.index and label in wide.columns else np.nan
                    rows.append({"category": c, "side": side, "seed": label, "mcc": float(value)})
        return pd.DataFrame(rows, columns=["category", "side", "seed", "mcc"])

    # --- filter and selection -----------------------------------------------------------------------------------

    def set_filter(self, outcome: str | None) -> None:
        """List only the examples of one outcome (or whose seeds flip on one side); None lists all.

        Parameters
        ----------
        outcome : str or None
            A key of :data:`OUTCOME_FILTERS` (``fixed``, ``broken``, ``unstable``, ``flips_a`` ...).

        Raises
        ------
        ValueError
            For another value.
        """
        if outcome is not None and outcome not in OUTCOME_FILTERS:
            raise ValueError(f"outcome must be one of {list(OUTCOME_FILTERS)} or None, found {outcome!r}")
        self.outcome = outcome

    def select(self, category: str) -> None:
        """Choose a category: its examples are listed (what clicking its row does).

        Parameters
        ----------
        category : str

        Raises
        ------
        ValueError
            For a category that A or B has no example of.
        """
        if category not in self.category_names:
            raise ValueError(f"{category!r} is not a category both sides have examples of")
        self.selection = category

    def examples(self, category: str | None = None, outcome=_UNSET) -> pd.DataFrame:
        """List a category's shared examples with A's and B's seeds, by default the chosen one under the filter.

        Parameters
        ----------
        category : str, optional
            Category (default: the selection).
        outcome : str or None, optional
            Filter (a key of :data:`OUTCOME_FILTERS`, None for all; default: :attr:`outcome`).

        Returns
        -------
        pandas.DataFrame
            One row per example, in :data:`OUTCOMES` order, then the largest change of the share of right seeds
            first, then the dataset's order: ``example_id, premise, hypothesis, label``,
            ``prediction_a_<seed>`` / ``probability_a_<seed>`` for A's seeds, the same for B's, ``correct_a, n_a,
            correct_b, n_b, outcome, flips, features, auto_features``. Empty before a choice.
        """
        category = self.selection if category is None else category
        if category is None:
            return pd.DataFrame(columns=["example_id", "premise", "hypothesis", "label", "outcome"])
        outcome = self.outcome if outcome is _UNSET else outcome
        if outcome is not None and outcome not in OUTCOME_FILTERS:
            raise ValueError(f"outcome must be one of {list(OUTCOME_FILTERS)} or None, found {outcome!r}")
        rows = self._outcomes.loc[self.members(category)]
        if outcome == "flips_a":
            rows = rows[rows["flips"].isin(["A", "A and B"])]
        elif outcome == "flips_b":
            rows = rows[rows["flips"].isin(["B", "A and B"])]
        elif outcome is not None:
            rows = rows[rows["outcome"] == outcome]
        rank = {name: j for j, name in enumerate(OUTCOMES)}
        change = np.abs(rows["correct_b"] / rows["n_b"] - rows["correct_a"] / rows["n_a"]).to_numpy()
        order = np.lexsort((np.arange(len(rows)), -change, rows["outcome"].map(rank).to_numpy()))
        rows = rows.iloc[order]
        ids = rows["example_id"].to_numpy()
        texts = self.explorer.texts[self.dataset].loc[ids]
        out = pd.DataFrame({"example_id": ids, "premise": texts["premise"].to_numpy(),
                            "hypothesis": texts["hypothesis"].to_numpy(), "label": rows["label"].to_numpy()})
        for side, source, labels in (("a", self._rows_a, self.labels_a), ("b", self._rows_b, self.labels_b)):
            mine = source.loc[ids]
            predicted = np.array(list(mine["predictions"]), dtype=object).reshape(len(mine), len(labels))
            probs = (np.array(list(mine["probabilities"]), dtype=float).reshape(len(mine), len(labels))
                     if "probabilities" in mine else None)
            for j, label in enumerate(labels):
                out[f"prediction_{side}_{label}"] = predicted[:, j]
                if probs is not None:
                    out[f"probability_{side}_{label}"] = probs[:, j]
        for column in ("correct_a", "n_a", "correct_b", "n_b", "outcome", "flips"):
            out[column] = rows[column].to_numpy()
        out["features"] = texts["features"].to_numpy()
        out["auto_features"] = texts["auto_features"].to_numpy()
        return out

    def example(self, example_id: str) -> dict:
        """Open one shared example: its texts, features and outcome, and every seed of A and of B.

        Parameters
        ----------
        example_id : str

        Returns
        -------
        dict
            ``example_id, premise, hypothesis, label, outcome, flips, features, auto_features, categories`` (the
            compared categories it belongs to) and ``seeds``: a DataFrame with one row per seed of A then of B
            (``side, seed, prediction, probability`` (NaN without probabilities), ``correct``).

        Raises
        ------
        KeyError
            For an id that is not a shared example.
        """
        if example_id not in self._outcomes.index:
            raise KeyError(f"{example_id!r} is not an example both sides predict")
        row = self._outcomes.loc[example_id]
        texts = self.explorer.texts[self.dataset].loc[example_id]
        seeds = []
        for side, source, labels in (("A", self._rows_a, self.labels_a), ("B", self._rows_b, self.labels_b)):
            mine = source.loc[example_id]
            probs = mine["probabilities"] if "probabilities" in source.columns else [np.nan] * len(labels)
            for label, pred, prob in zip(labels, mine["predictions"], probs):
                seeds.append({"side": side, "seed": label, "prediction": pred, "probability": float(prob),
                              "correct": None if pred is None else bool(pred == row["label"])})
        return {"example_id": example_id, "premise": texts["premise"], "hypothesis": texts["hypothesis"],
                "label": row["label"], "outcome": row["outcome"], "flips": row["flips"],
                "features": list(texts["features"]), "auto_features": texts["auto_features"],
                "categories": [c for c in self.category_names if example_id in set(self.members(c))],
                "seeds": pd.DataFrame(seeds, columns=["side", "seed", "prediction", "probability", "correct"])}

    # --- views --------------------------------------------------------------------------------------------------

    def example_html(self, example_id: str) -> str:
        """Render :meth:`example` as HTML: the full texts, and A's and B's seeds one row each.

        Parameters
        ----------
        example_id : str

        Returns
        -------
        str
            An HTML fragment (``div.dx-cmp-example[data-id]``).
        """
        return _html.example_html(self, example_id)

    def side_label(self, side: str) -> str:
        """Name a side as the views do: ``"A: base (en · base)"``.

        Parameters
        ----------
        side : {"A", "B"}

        Returns
        -------
        str
            The side's letter, name and setting.
        """
        setting = self.a if side == "A" else self.b
        name = self.names[0] if side == "A" else self.names[1]
        full = self.explorer.setting_name(setting)
        return f"{side}: {name}" + (f" ({full})" if full != name else "")

    def categories_html(self) -> str:
        """Render every category's strips of per-seed MCC and outcome counts (a static HTML table).

        Returns
        -------
        str
            An HTML fragment.
        """
        return _html.categories_html(self)

    def examples_html(self, category: str | None = None, outcome=_UNSET, limit: int | None = None) -> str:
        """Render :meth:`examples` as an HTML table: A's seeds, then B's, right or wrong, and the outcome.

        Parameters
        ----------
        category : str, optional
            Category (default: the selection).
        outcome : str or None, optional
            Filter (default: :attr:`outcome`).
        limit : int, optional
            Show at most this many rows (a line counts the rest).

        Returns
        -------
        str
            An HTML fragment.
        """
        return _html.examples_html(self, category, self.outcome if outcome is _UNSET else outcome, limit)

    def payload(self, n: int = 5) -> dict:
        """Pack the explorer's page data with this pair (the report's ``explorer.html`` opens on it).

        Parameters
        ----------
        n : int
            As in :meth:`ExplorerModel.payload <diagnostics.explorer.ExplorerModel.payload>`.

        Returns
        -------
        dict
            :func:`~diagnostics.explorer.build_payload` of the explorer with ``pair``: ``{"a", "b", "names"}``.
        """
        return {**_payload.build_payload(self.explorer, n), "pair": self.pair_spec()}

    def pair_spec(self) -> dict:
        """The pair as the page's data names it.

        Returns
        -------
        dict
            ``{"a": index of A, "b": index of B, "names": [name of A, name of B]}``.
        """
        return {"a": int(self.a), "b": int(self.b), "names": [str(x) for x in self.names]}
