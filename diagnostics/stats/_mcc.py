"""Matthews correlation from (weighted) binary confusion counts, vectorised over any leading axes."""

from __future__ import annotations

import numpy as np


def mcc_from_counts(tp, fp, fn, tn) -> tuple[np.ndarray, np.ndarray]:
    """Compute the Matthews correlation coefficient from binary confusion counts.

    Parameters
    ----------
    tp, fp, fn, tn : array_like
        True/false positives/negatives of identical shape (counts or non-negative weights).

    Returns
    -------
    mcc : numpy.ndarray of float64
        Same shape as the inputs. Where any margin is zero (a single predicted class, a single gold class,
        or no examples) the MCC is undefined; it is set to 0, as ``sklearn.metrics.matthews_corrcoef`` does.
    degenerate : numpy.ndarray of bool
        True where that convention was applied.
    """
    tp, fp, fn, tn = (np.asarray(x, dtype=np.float64) for x in (tp, fp, fn, tn))
    # sklearn's multiclass form specialised to two classes: cov(y, p) / sqrt(cov(y, y) cov(p, p))
    n = tp + fp + fn + tn
    true_pos, pred_pos = tp + fn, tp + fp
    true_neg, pred_neg = n - true_pos, n - pred_pos
    cov_yp = (tp + tn) * n - (true_pos * pred_pos + true_neg * pred_neg)
    cov_yy = n * n - (true_pos * true_pos + true_neg * true_neg)
    cov_pp = n * n - (pred_pos * pred_pos + pred_neg * pred_neg)
    denom = cov_yy * cov_pp
    degenerate = denom <= 0
    with np.errstate(invalid="ignore", divide="ignore"):
        mcc = np.where(degenerate, 0.0, cov_yp / np.sqrt(np.where(degenerate, 1.0, denom)))
    return mcc, degenerate


def binary_counts(y_true: np.ndarray, y_pred: np.ndarray, members: np.ndarray,
                  valid: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Confusion counts of many runs in many categories with matrix products (no loop over either).

    Parameters
    ----------
    y_true : numpy.ndarray, shape (n_examples,) or (n_examples, n_runs)
        Gold labels, 1 = positive (entailment), 0 = negative.
    y_pred : numpy.ndarray, shape (n_examples, n_runs)
        Predictions of every run, 1/0.
    members : numpy.ndarray, shape (n_examples, n_categories)
        Weight of each example in each category: boolean indicators, or resampling counts.
    valid : numpy.ndarray of bool, shape (n_examples, n_runs), optional
        False where a run has no prediction for an example (its entries are ignored).

    Returns
    -------
    dict
        ``tp, fp, fn, tn`` each of shape (n_categories, n_runs).
    """
    p = np.asarray(y_pred, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"y_pred must be (n_examples, n_runs), found shape {p.shape}")
    y = np.broadcast_to(np.asarray(y_true, dtype=np.float64).reshape(len(p), -1), p.shape)
    v = np.ones_like(p) if valid is None else np.asarray(valid, dtype=np.float64)
    m = np.asarray(members, dtype=np.float64)
    n = m.T @ v
    pos = m.T @ (v * y)
    pred_pos = m.T @ (v * p)
    tp = m.T @ (v * p * y)
    fp = pred_pos - tp
    fn = pos - tp
    return {"tp": tp, "fp": fp, "fn": fn, "tn": n - tp - fp - fn}


def mcc(y_true, y_pred) -> float:
    """MCC of one binary prediction vector (0.0 when undefined, as ``sklearn.metrics.matthews_corrcoef``).

    The one scalar MCC of the toolkit: the trainer's validation and per-category scores and the loop reference
    of Multi-Bootstrap use it.

    Parameters
    ----------
    y_true, y_pred : array_like
        Gold labels and predictions of equal length: 1 (or True) = positive (entailment), 0 (or False) = negative.
        Positions where either holds another value (e.g. -1 for a missing label) are left out.

    Returns
    -------
    float
        In [-1, 1]; 0.0 when a margin is empty (see :func:`mcc_from_counts`).

    Raises
    ------
    ValueError
        For labels that are not numbers or booleans (text labels such as ``"entailment"``).
    """
    y, p = np.asarray(y_true), np.asarray(y_pred)
    for name, values in (("y_true", y), ("y_pred", p)):
        if values.dtype.kind not in "biuf":  # text labels would all be left out, and the MCC read 0
            example = next(iter(values.ravel()), None)
            raise ValueError(f"mcc: {name} must hold 1/0 (or True/False), found {values.dtype} values such as "
                             f"{example!r}; compare text labels with 'entailment' first")
    y1, y0, p1, p0 = y == 1, y == 0, p == 1, p == 0
    count = np.count_nonzero
    value, _ = mcc_from_counts(count(y1 & p1), count(y0 & p1), count(y1 & p0), count(y0 & p0))
    return float(value)
