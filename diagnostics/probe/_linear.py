"""Linear probes: L2-regularised logistic regression on standardised features, the strength chosen on a
selection set (the study's: the language's annotated RTE-style test split; or pairs held out of the training set);
control tasks (labels shuffled across pairs), selectivity, and the test metrics (accuracy, balanced accuracy,
macro-F1).

The L2 grid follows the study (alpha in 1e-1 ... 1e-5). ``alpha`` weighs the squared norm against the *mean*
log-loss (the convention of ``SGDClassifier`` and SentEval-style probes), so scikit-learn's
``C = 1 / (alpha * n_samples)``; with the summed loss (``C = 1 / alpha``) the whole grid would be
essentially unregularised on a few thousand standardised pairs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

ALPHAS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5)


@dataclass(frozen=True)
class ProbeFit:
    """Outcome of :func:`fit_probe`.

    Parameters
    ----------
    accuracy : float
        On the test set.
    alpha : float
        Chosen L2 strength (NaN when the training labels hold one class).
    selection_accuracy : float
        Best accuracy on the selection set (what chose ``alpha``): the given selection set, or the pairs held out
        of the training set.
    balanced_accuracy : float
        Mean per-class recall on the test set (:func:`sklearn.metrics.balanced_accuracy_score`); 0.5 for any
        constant prediction, whatever the class prior.
    macro_f1 : float
        Unweighted mean of the per-class F1 on the test set (:func:`sklearn.metrics.f1_score`, ``average="macro"``).
    predictions : numpy.ndarray
        The chosen probe's test-set predictions.
    """

    accuracy: float
    alpha: float
    selection_accuracy: float
    balanced_accuracy: float = float("nan")
    macro_f1: float = float("nan")
    predictions: np.ndarray | None = field(default=None, repr=False, compare=False)


def probe_metrics(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """Accuracy, balanced accuracy and macro-F1 of predictions (scikit-learn's definitions).

    Parameters
    ----------
    y_true, y_pred : numpy.ndarray
        0/1 labels and predictions.

    Returns
    -------
    dict
        ``accuracy``, ``balanced_accuracy``, ``macro_f1`` (NaN each when ``y_true`` is empty). Macro-F1 averages
        over the classes present in either array; a class that is never predicted has F1 0.
    """
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score

    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.size == 0:
        return {"accuracy": float("nan"), "balanced_accuracy": float("nan"), "macro_f1": float("nan")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one class in y_true: balanced accuracy is its recall
        balanced = balanced_accuracy_score(y_true, y_pred)
    return {"accuracy": float(accuracy_score(y_true, y_pred)), "balanced_accuracy": float(balanced),
            "macro_f1": float(f1_score(y_true, y_pred, average="macro", zero_division=0))}


def chance_level(metric: str, majority: float) -> float:
    """What a constant prediction of the majority class scores on ``metric`` (the bar a probe must clear).

    Parameters
    ----------
    metric : str
        ``accuracy`` / ``control`` (the majority share itself), ``balanced_accuracy`` /
        ``control_balanced_accuracy`` (0.5), ``macro_f1`` (``p / (1 + p)`` for majority share ``p`` < 1),
        ``selectivity`` and ``mdl_selectivity`` (0), ``compression`` / ``control_compression`` (``1 / H(p)``, the
        MDL compression of a code that knows the binary labels' class balance and nothing else; NaN for ``p`` = 1).
    majority : float
        Majority-class share of the test labels (of the coded labels for the MDL metrics).

    Returns
    -------
    float
        NaN for a metric without a chance level (e.g. ``alpha``).
    """
    if metric in ("accuracy", "control"):
        return float(majority)
    if metric in ("balanced_accuracy", "control_balanced_accuracy"):
        return 0.5
    if metric == "macro_f1":
        return 1.0 if majority >= 1 else float(majority / (1 + majority))
    if metric in ("selectivity", "mdl_selectivity"):
        return 0.0
    if metric in ("compression", "control_compression"):
        if not 0 < majority < 1:
            return float("nan")
        entropy = -(majority * np.log2(majority) + (1 - majority) * np.log2(1 - majority))
        return float(1.0 / entropy)
    return float("nan")


def standardise(train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Scale every array with a :class:`sklearn.preprocessing.StandardScaler` fit on ``train`` (float64).

    Parameters
    ----------
    train : numpy.ndarray
        ``[n, d]`` features the scaler is fit on.
    *others : numpy.ndarray
        Further ``[m, d]`` arrays scaled with the same statistics.

    Returns
    -------
    list of numpy.ndarray
        ``train`` and then each of ``others``, standardised, as float64.
    """
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
        The task's labels.
    seed : int
        Seed of the permutation.

    Returns
    -------
    numpy.ndarray
        The same labels in permuted order.
    """
    labels = np.asarray(labels)
    return labels[np.random.default_rng(seed).permutation(len(labels))]


def majority_accuracy(labels: np.ndarray) -> float:
    """Score always predicting the most frequent class of ``labels`` (the chance bar on that set).

    Parameters
    ----------
    labels : numpy.ndarray
        Labels of a set.

    Returns
    -------
    float
        The majority class's share; NaN for no labels.
    """
    labels = np.asarray(labels)
    if labels.size == 0:
        return float("nan")
    return float(np.unique(labels, return_counts=True)[1].max() / labels.size)


def held_out_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Split ``range(n)`` into seeded (fit, held-out) arrays of sorted indices.

    ``fraction`` is the share held out, in (0, 1); at least one pair is held out. ``ValueError`` when ``fraction`` is
    outside (0, 1) or fewer than two pairs would remain to fit on.
    """
    if not 0 < fraction < 1:
        raise ValueError(f"held-out fraction must be in (0, 1), found {fraction}")
    order = np.random.default_rng(seed).permutation(n)
    n_held = max(1, int(round(n * fraction)))
    if n - n_held < 2:
        raise ValueError(f"{n} training pairs are too few to hold {fraction:.0%} out")
    return np.sort(order[n_held:]), np.sort(order[:n_held])


def fit_probe(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *,
              x_select: np.ndarray | None = None, y_select: np.ndarray | None = None,
              alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2, seed: int = 0, max_iter: int = 300,
              split: tuple[np.ndarray, np.ndarray] | None = None,
              class_weight: str | None = None) -> ProbeFit:
    """Choose the L2 strength on a selection set, report the chosen probe on the test set.

    With ``x_select`` / ``y_select`` (the study's protocol: the language's annotated RTE-style test split) every
    alpha is fit on all training pairs and scored on the selection set. Without them a seeded ``held_out``
    fraction of the training pairs is the selection set and the probe is fit on the rest. Alphas are tried from
    strongest to weakest and scored by accuracy; ties go to the stronger regularisation. The probe fit with the
    chosen alpha is the one evaluated (SentEval's protocol; it is deterministic, so a refit on the same pairs
    would be identical). Features are expected standardised already (see :func:`standardise`). The solver is
    liblinear (primal); its intercept is penalised too, scaled so that the penalty on it is negligible.

    Parameters
    ----------
    x_train, y_train : numpy.ndarray
        ``[n, d]`` features and 0/1 labels.
    x_test, y_test : numpy.ndarray
        Test features and labels.
    x_select, y_select : numpy.ndarray, optional
        Selection set (both or neither); when given, ``held_out``, ``seed`` and ``split`` are unused.
    alphas : tuple of float
        L2 strengths tried.
    held_out : float
        Fraction of the training pairs held out to choose alpha (without a selection set).
    seed : int
        Seeds the held-out split (when ``split`` is not given).
    max_iter : int
    split : (numpy.ndarray, numpy.ndarray), optional
        Precomputed (fit, held-out) indices, shared across tasks and layers.
    class_weight : {None, "balanced"}
        ``None`` (the study's protocol) fits the plain log-loss; ``"balanced"`` weighs classes inversely to
        their training frequency, so the probe does not inherit the training prior: annotator-labelled RTE pairs
        and the gold-tagged diagnostic set differ a lot in how often a category is present (e.g. Logic in ~80%
        vs ~33% of pairs).

    Returns
    -------
    ProbeFit
        The chosen alpha, its selection accuracy, and the test metrics and predictions.
    """
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    if len(x_train) != len(y_train) or len(x_test) != len(y_test):
        raise ValueError("features and labels differ in length")
    if not alphas:
        raise ValueError("alphas must not be empty")
    if class_weight not in (None, "balanced"):
        raise ValueError(f"class_weight must be None or 'balanced', found {class_weight!r}")
    if (x_select is None) != (y_select is None):
        raise ValueError("give both x_select and y_select, or neither")
    if x_select is not None:
        y_select = np.asarray(y_select)
        if len(x_select) != len(y_select) or len(y_select) == 0:
            raise ValueError("selection features and labels differ in length or are empty")
        x_fit, y_fit, x_sel = x_train, y_train, x_select
    else:
        fit_idx, held_idx = split if split is not None else held_out_split(len(y_train), held_out, seed)
        x_fit, y_fit, x_sel, y_select = x_train[fit_idx], y_train[fit_idx], x_train[held_idx], y_train[held_idx]
    return _select_alpha(x_fit, y_fit, x_sel, y_select, x_test, y_test, alphas=alphas, max_iter=max_iter,
                         class_weight=class_weight)


def probe_estimator(alpha: float, n_fit: int, *, class_weight: str | None = None, max_iter: int = 300):
    """The logistic regression of a probe with L2 strength ``alpha`` on ``n_fit`` pairs.

    Parameters
    ----------
    alpha : float
        Weight of the squared norm against the mean log-loss (``C = 1 / (alpha * n_fit)``).
    n_fit : int
        Pairs the probe is fit on.
    class_weight : {None, "balanced"}
        See :func:`fit_probe`.
    max_iter : int
        Solver iterations.

    Returns
    -------
    sklearn.linear_model.LogisticRegression
        Unfitted; liblinear (deterministic, ~5x faster than lbfgs on these sizes).
    """
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(solver="liblinear", C=1.0 / (alpha * n_fit), max_iter=max_iter, tol=1e-4,
                              intercept_scaling=10.0, class_weight=class_weight)


def _select_alpha(x_fit, y_fit, x_sel, y_sel, x_test, y_test, *, alphas, max_iter, class_weight) -> ProbeFit:
    from sklearn.exceptions import ConvergenceWarning

    classes = np.unique(y_fit)
    if classes.size < 2:
        # One class only: the best linear probe predicts it; nothing to regularise.
        constant = classes[0] if classes.size else 0
        predictions = np.full(len(y_test), constant, dtype=np.asarray(y_test).dtype)
        return ProbeFit(alpha=float("nan"), selection_accuracy=float(np.mean(y_sel == constant)),
                        predictions=predictions, **probe_metrics(y_test, predictions))
    best = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for alpha in sorted(alphas, reverse=True):
            model = probe_estimator(alpha, len(y_fit), class_weight=class_weight, max_iter=max_iter)
            model.fit(x_fit, y_fit)
            score = float(model.score(x_sel, y_sel))
            if best is None or score > best[0]:
                best = (score, alpha, model.predict(x_test))
    score, alpha, predictions = best
    return ProbeFit(alpha=alpha, selection_accuracy=score, predictions=predictions,
                    **probe_metrics(y_test, predictions))
