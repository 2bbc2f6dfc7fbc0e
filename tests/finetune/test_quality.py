"""The per-run learning check of ``_quality``: a diagnostic set's per-category size, MCC and constant predictions,
computed from P(entailment) per row, with MCC checked against scikit-learn's."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef

from diagnostics.finetune._quality import category_summary

E, N = "entailment", "not_entailment"


def _frame():
    # rows 0-3 in Negation, rows 2-5 in Quantifiers (2 and 3 in both), row 6 in no category
    return pd.DataFrame({"label": [E, N, E, N, E, N, E],
                         "features": [["Negation"], ["Negation"], ["Negation", "Quantifiers"],
                                      ["Negation", "Quantifiers"], ["Quantifiers"], ["Quantifiers"], []]})


def test_each_category_gets_its_rows_mcc_and_a_constant_flag():
    proba = np.array([0.9, 0.2, 0.4, 0.1, 0.6, 0.7, 0.5])  # 0.5 counts as entailment
    pred = (proba >= 0.5).astype(int)
    gold = np.array([1, 0, 1, 0, 1, 0, 1])
    summary = category_summary(_frame(), proba)
    assert summary["categories"] == 2
    assert summary["overall_mcc"] == pytest.approx(matthews_corrcoef(gold, pred))
    negation = matthews_corrcoef(gold[:4], pred[:4])
    quantifiers = matthews_corrcoef(gold[2:6], pred[2:6])
    assert summary["mean_category_mcc"] == pytest.approx((negation + quantifiers) / 2)
    assert summary["constant_categories"] == 0 and summary["constant"] == []


def test_a_category_predicted_as_one_class_is_named_constant():
    proba = np.array([0.9, 0.8, 0.7, 0.6, 0.1, 0.9, 0.0])  # Negation: all entailment; Quantifiers: mixed
    summary = category_summary(_frame(), proba)
    assert summary["constant"] == ["Negation"] and summary["constant_categories"] == 1


def test_a_set_without_labels_or_categories_has_no_summary():
    frame = _frame()
    assert category_summary(frame.drop(columns="features"), np.full(len(frame), 0.7)) == {}
    frame.loc[3, "label"] = None
    assert category_summary(frame, np.full(len(frame), 0.7)) == {}
