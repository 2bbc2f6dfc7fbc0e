"""Names shared by every stage: the entailment labels, the class-index order and the predictions-table columns.

This is the one place these are defined; the stages import them from here (``diagnostics.stats._table.LABELS``,
``diagnostics.finetune._mixtures.LABELS``, ``diagnostics.finetune._store.PREDICTION_COLUMNS`` ... are these objects).
The module imports nothing, so any stage may use it.

>>> from diagnostics.core.schema import CLASS_LABELS, LABELS
>>> LABELS
('entailment', 'not_entailment')
>>> CLASS_LABELS.index("entailment")
1
"""

from __future__ import annotations

ENTAILMENT = "entailment"
NOT_ENTAILMENT = "not_entailment"

#: The binary label set: the values of ``label`` and ``prediction`` in every table (entailment first).
LABELS = (ENTAILMENT, NOT_ENTAILMENT)

#: Class index -> label of the classifiers the toolkit trains: class 0 is not_entailment, class 1 is entailment,
#: so ``probability`` (the softmax of class 1) is P(entailment).
CLASS_LABELS = (NOT_ENTAILMENT, ENTAILMENT)

#: Columns every predictions table has.
PREDICTION_REQUIRED = ("experiment", "language", "model", "seed", "dataset", "example_id", "label", "prediction")

#: Columns a predictions table may add: P(entailment), and the pre-training seed of nested designs.
PREDICTION_OPTIONAL = ("probability", "pretrain_seed")

#: Columns of every table the trainer writes: the required ones and ``probability``. The optional
#: ``pretrain_seed`` follows them only for models that name one.
TRAINER_COLUMNS = PREDICTION_REQUIRED + PREDICTION_OPTIONAL[:1]

__all__ = ["CLASS_LABELS", "ENTAILMENT", "LABELS", "NOT_ENTAILMENT", "PREDICTION_OPTIONAL", "PREDICTION_REQUIRED",
           "TRAINER_COLUMNS"]
