"""Linear probes: L2-regularised logistic regression on standardised features, the strength chosen on held-out
data; control tasks (labels shuffled across pairs) and selectivity.

The L2 grid follows the study (alpha in 1e-1 ... 1e-5). ``alpha`` weighs the squared norm against the *mean*
log-loss (the convention of ``SGDClassifier`` and SentEval-style probes), so scikit-learn's
``C = 1 / (alpha * n_samples)``; with the summed loss (``C = 1 / alpha``) the whole grid would be
essentially unregularised on a few thousand standardised pairs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

ALPHAS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5)


@dataclass(frozen=True)
class ProbeFit:
    """Outcome of :func:`fit_probe`.

    Attributes
    ----------
    accuracy : float
        On the test set.
    alpha : float
        Chosen L2 strength.
    held_out_accuracy : float
        Best held-out accuracy (what chose ``alpha``).
    """

    accuracy: float
    alpha: float
    held_out_accuracy: float


def standardise(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Scale every array with a :class:`sklearn.preprocessing.StandardScaler` fit on ``train`` (float64)."""
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(np.asarray(train, dtype=np.float64))
    return [scaler.transform(np.asarray(a, dtype=np.float64)) for a in (train, *others)]


def control_labels(labels: np.ndarray, seed: int) -> np.ndarray:
    """Control task labels: the same labels shuffled across pairs (a seeded permutation).

    The label distribution is exactly preserved; any link between a pair's vector and its label is broken,
    so a probe's accuracy on it measures what the probe can fit without the property.

    Parameters
    ----------
    labels : numpy.ndarray
    seed : int

    Returns
    -------
    numpy.ndarray
    """
    labels = np.asarray(labels)
    return labels[np.random.default_rng(seed).permutation(len(labels))]


def majority_accuracy(labels: np.ndarray) -> float:
    """Accuracy of always predicting the most frequent class of ``labels`` (the chance bar on that set)."""
    labels = np.asarray(labels)
    if labels.size == 0:
        return float("nan")
    return float(np.unique(labels, return_counts=True)[1].max() / labels.size)


def held_out_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of ``range(n)`` into (fit, held-out) index arrays."""
    if not 0 < fraction < 1:
        raise ValueError(f"held-out fraction must be in (0, 1), found {fraction}")
    order = np.random.default_rng(seed).permutation(n)
    n_held = max(1, int(round(n * fraction)))
    if n - n_held < 2:
        raise ValueError(f"{n} training pairs are too few to hold {fraction:.0%} out")
    return np.sort(order[n_held:]), np.sort(order[:n_held])


def fit_probe(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *,
              alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2, seed: int = 0, max_iter: int = 300,
              split: tuple[np.ndarray, np.ndarray] | None = None,
              class_weight: str | None = "balanced") -> ProbeFit:
    """Choose the L2 strength on held-out training pairs, report the probe's accuracy on the test set.

    Features are expected standardised already (see :func:`standardise`). Alphas are tried from strongest
    to weakest; ties go to the stronger regularisation. The probe trained on the fit part
    with the chosen alpha is the one evaluated (SentEval's protocol, no refit). The solver is liblinear (primal);
    its intercept is penalised too, scaled so that the penalty on it is negligible.

    Parameters
    ----------
    x_train, y_train : numpy.ndarray
        ``[n, d]`` features and 0/1 labels.
    x_test, y_test : numpy.ndarray
    alphas : tuple of float
    held_out : float
        Fraction of the training pairs held out to choose alpha.
    seed : int
        Seeds the held-out split (when ``split`` is not given).
    max_iter : int
        Solver iterations per fit.
    split : (numpy.ndarray, numpy.ndarray), optional
        Precomputed (fit, held-out) indices, shared across tasks and layers.
    class_weight : {"balanced", None}
        ``"balanced"`` (default) weighs classes inversely to their training frequency, so the probe does not
        inherit the training prior: annotator-labelled RTE pairs and the gold-tagged diagnostic set differ a
        lot in how often a category is present (e.g. Logic in ~80% vs ~33% of pairs).

    Returns
    -------
    ProbeFit
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    y_train = np.asarray(y_train)
    y_test = np.asarray(y_test)
    if len(x_train) != len(y_train) or len(x_test) != len(y_test):
        raise ValueError("features and labels differ in length")
    if not alphas:
        raise ValueError("alphas must not be empty")
    fit_idx, held_idx = split if split is not None else held_out_split(len(y_train), held_out, seed)
    classes = np.unique(y_train[fit_idx])
    if classes.size < 2:
        # One class only: the best linear probe predicts it; nothing to regularise.
        constant = classes[0] if classes.size else 0
        return ProbeFit(float(np.mean(y_test == constant)), float("nan"),
                        float(np.mean(y_train[held_idx] == constant)))
    # liblinear's primal trust-region Newton solver: deterministic, and ~5x faster than lbfgs on these sizes
    model = LogisticRegression(solver="liblinear", max_iter=max_iter, tol=1e-4, intercept_scaling=10.0,
                               class_weight=class_weight)
    best = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for alpha in sorted(alphas, reverse=True):
            model.set_params(C=1.0 / (alpha * len(fit_idx)))
            model.fit(x_train[fit_idx], y_train[fit_idx])
            score = float(model.score(x_train[held_idx], y_train[held_idx]))
            if best is None or score > best[0]:
                best = (score, alpha, float(model.score(x_test, y_test)))
    return ProbeFit(accuracy=best[2], alpha=best[1], held_out_accuracy=best[0])
