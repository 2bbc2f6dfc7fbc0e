"""Turn a model folder (or a run directory) into ``predict(premises, hypotheses) -> list[str]``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from diagnostics.core.errors import UserInputError
from diagnostics.core.schema import ENTAILMENT, LABELS, NOT_ENTAILMENT  # noqa: F401 (LABELS re-exported)
from diagnostics.models import MODEL_CONFIG, PICKLED_WEIGHTS, SAFETENSORS_WEIGHTS

#: Class order assumed for a head without label names (``LABEL_0``, ``LABEL_1``): id 0 = entailment.
UNNAMED_HEAD_ORDER = (ENTAILMENT, NOT_ENTAILMENT)
_NOT = {NOT_ENTAILMENT, "not entailment", "non_entailment", "neutral", "contradiction"}

def resolve_model_dir(path: str | Path) -> Path:
    """Find the Hugging Face model folder inside a run directory.

    Accepts the model folder itself, a run directory ``runs/<exp>/<lang>/<model>/seed=<k>/`` (its ``checkpoint/``:
    :meth:`diagnostics.finetune.Run.model_folder`), or any folder with exactly one model folder one level
    down. Raises ``FileNotFoundError`` if no folder with ``config.json`` and weights is found (the message lists what
    was looked at).
    """
    from diagnostics.finetune import Run, seed_of_folder
    from diagnostics.models import is_model_folder, model_folders_below

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such run directory or model folder")
    if is_model_folder(path):
        return path
    if seed_of_folder(path.name) is not None:
        return Run.at(path).model_folder()
    found = model_folders_below(path, depth=1)
    if len(found) == 1:
        return found[0]
    hint = f"several candidates: {', '.join(p.name for p in found)}" if found else "none found"
    raise FileNotFoundError(f"{path}: expected a Hugging Face model folder (config.json + model.safetensors) "
                            f"here or in checkpoint/; {hint}")


def label_order(id2label: dict | None, num_labels: int) -> list[str]:
    """Map class ids to ``entailment`` / ``not_entailment``: the label of each class id, in id order.

    ``id2label`` (the model config's, int or str keys) is used when it names the classes (``entailment``,
    ``not_entailment``; 3-way ``neutral`` and ``contradiction`` collapse to ``not_entailment``); generic names
    (``LABEL_0``) fall back to the toolkit's convention, id 0 = entailment, 1 = not_entailment. ``UserInputError`` for
    label names that are neither generic nor NLI labels, or a generic head with other than 2 classes.
    """
    names = [str((id2label or {}).get(i, (id2label or {}).get(str(i), f"LABEL_{i}"))) for i in range(num_labels)]
    if all(re.fullmatch(r"LABEL_\d+", n) for n in names):
        if num_labels != 2:
            raise UserInputError(f"a classifier with {num_labels} unnamed labels; expected 2 (0 = entailment, "
                                 "1 = not_entailment) or id2label naming the classes")
        return list(UNNAMED_HEAD_ORDER)
    out = []
    for name in names:
        key = name.strip().lower().replace("-", "_")
        if key == ENTAILMENT:
            out.append(ENTAILMENT)
        elif key in _NOT or key.replace("_", " ") in _NOT:
            out.append(NOT_ENTAILMENT)
        else:
            raise UserInputError(f"cannot map label {name!r} of config.id2label {names} to entailment / "
                                 "not_entailment")
    if ENTAILMENT not in out:
        raise UserInputError(f"config.id2label {names} has no entailment class")
    return out


#: Weight files read by :class:`TransformersPredictor` (safetensors only: a pickle can run code when loaded).
SAFE_WEIGHTS = SAFETENSORS_WEIGHTS


def check_safe_weights(model_dir: str | Path) -> None:
    """Refuse a model folder whose weights are not in safetensors format.

    Raises ``UserInputError`` when the folder holds pickled weights (``pytorch_model.bin``) or none: the message says
    how to convert.
    """
    model_dir = Path(model_dir)
    if any((model_dir / name).is_file() for name in SAFE_WEIGHTS):
        return
    pickled = [name for name in PICKLED_WEIGHTS if (model_dir / name).is_file()]
    found = f"only {pickled[0]} (a pickle, which can run code when loaded)" if pickled else "no weights file"
    raise UserInputError(f"{model_dir}: expected model.safetensors, found {found}; convert it with "
                         f"`diagnostics models convert {model_dir}` (tensors only: a pickle that would run code "
                         "is refused)")


def untrained_weights(loading_info: dict) -> list[str]:
    """The weights ``from_pretrained`` initialised at random (missing from the folder or of another shape).

    ``loading_info`` is what ``from_pretrained(..., output_loading_info=True)`` returns besides the model. Returns
    sorted parameter names; empty for a fully trained classifier.
    """
    names = set(loading_info.get("missing_keys") or ())
    names |= {item[0] if isinstance(item, tuple) else item for item in loading_info.get("mismatched_keys") or ()}
    return sorted(map(str, names))


class TransformersPredictor:
    """``predict(premises, hypotheses)`` for a folder loadable by ``AutoModelForSequenceClassification``.

    Only safetensors weights are read (:func:`check_safe_weights`), and a folder without a trained
    classification head (a pretrained encoder, whose head would be random) is refused unless
    ``allow_untrained_head``.

    Parameters
    ----------
    model_dir : str or Path
        Model folder or run directory (see :func:`resolve_model_dir`).
    batch_size : int
        Pairs per forward pass.
    max_length : int
        Truncation length of the tokenised pair.
    precision : {"fp32", "bf16"}
        ``bf16``: bf16 autocast where the CPU supports it natively (see :mod:`diagnostics.models._precision`).
    allow_untrained_head : bool
        Score a folder whose classification head (or any other weight) is randomly initialised.

    Raises
    ------
    UserInputError
        Pickled weights, or an untrained head without ``allow_untrained_head``.
    FileNotFoundError
        No model folder at ``model_dir``.
    """

    def __init__(self, model_dir: str | Path, batch_size: int = 64, max_length: int = 128, precision: str = "fp32",
                 allow_untrained_head: bool = False):
        self.model_dir = resolve_model_dir(model_dir)
        check_safe_weights(self.model_dir)  # before torch is imported: a refused folder costs nothing
        from diagnostics.models import check_model_folder

        check_model_folder(self.model_dir)  # a damaged config.json or weights file: one line naming it

        import torch
        from transformers import AutoModelForSequenceClassification

        from diagnostics.models import load_tokenizer

        from diagnostics.models import is_jiant_checkpoint, load_jiant_checkpoint

        if is_jiant_checkpoint(self.model_dir):  # a sweep's classifier_head: jiant (encoder + its own head file)
            model, untrained = load_jiant_checkpoint(self.model_dir), []
        else:
            model, info = AutoModelForSequenceClassification.from_pretrained(self.model_dir, use_safetensors=True,
                                                                             output_loading_info=True)
            untrained = untrained_weights(info)
        if untrained and not allow_untrained_head:
            shown = ", ".join(untrained[:4]) + (f" and {len(untrained) - 4} more" if len(untrained) > 4 else "")
            raise UserInputError(f"{self.model_dir}: the folder has no trained classification head ({shown} would "
                                 "be random); pass a fine-tuned run (seed=<k>/ with checkpoint/), or "
                                 "--allow-untrained-head (allow_untrained_head=True) to score it anyway")
        self.model = model.eval()
        self.tokenizer = load_tokenizer(self.model_dir)
        try:
            self.labels = label_order(self.model.config.id2label, self.model.config.num_labels)
        except UserInputError as err:
            raise UserInputError(f"{self.model_dir / MODEL_CONFIG}: {err}") from None
        from diagnostics.models import effective_precision

        self.batch_size, self.max_length = batch_size, max_length
        self.precision = effective_precision(precision)
        self._torch = torch

    def __call__(self, premises: list[str], hypotheses: list[str]) -> list[str]:
        from diagnostics.models import cpu_autocast

        out: list[str] = []
        with self._torch.inference_mode(), cpu_autocast(self.precision):
            for start in range(0, len(premises), self.batch_size):
                batch = self.tokenizer(list(premises[start:start + self.batch_size]),
                                       list(hypotheses[start:start + self.batch_size]), truncation=True,
                                       max_length=self.max_length, padding=True, return_tensors="pt")
                logits = self.model(**batch).logits
                out += [self.labels[i] for i in logits.argmax(-1).tolist()]
        return out


def predict_many(predictors: Sequence[TransformersPredictor], premises: Sequence[str],
                 hypotheses: Sequence[str]) -> list[list[str]]:
    """Predict the labels of several classifiers on the same pairs, in one pass over the batches.

    The first classifier runs in full. A later one whose tokenizer gives the same input ids and whose encoder
    shares the first one's embeddings and lowest layers (:func:`diagnostics.models.shared_states`: the
    top-k fine-tuned seeds of one model) runs only its own layers above them, from the first one's hidden states,
    and its head; the others run in full. Each classifier's labels equal those of its own predictor.

    The first predictor's batch size, length and precision apply to all. Returns, per predictor, one label per pair.
    """
    import copy

    import torch

    from diagnostics.models import cpu_autocast
    from diagnostics.models import same_input_ids, shared_states, upper_part

    if not predictors:
        return []
    lead = predictors[0]
    premises, hypotheses = list(premises), list(hypotheses)

    views = {}
    for i, p in enumerate(predictors[1:], start=1):
        same_ids = same_input_ids(lead.tokenizer, p.tokenizer, premises, hypotheses, max_length=lead.max_length)
        shared = shared_states(lead.model.base_model, p.model.base_model) if same_ids else 0
        if shared:
            view = copy.copy(p.model)
            view._modules = dict(p.model._modules)
            setattr(view, p.model.base_model_prefix, upper_part(p.model.base_model, shared - 1))
            views[i] = (shared, view)
    out: list[list[str]] = [[] for _ in predictors]
    for i, p in enumerate(predictors):
        if i and i not in views:
            out[i] = p(premises, hypotheses)
    with torch.inference_mode(), cpu_autocast(lead.precision):
        for start in range(0, len(premises), lead.batch_size):
            batch = lead.tokenizer(premises[start:start + lead.batch_size], hypotheses[start:start + lead.batch_size],
                                   truncation=True, max_length=lead.max_length, padding=True, return_tensors="pt")
            result = lead.model(**batch, output_hidden_states=True)
            out[0] += [lead.labels[k] for k in result.logits.argmax(-1).tolist()]
            for i, (shared, view) in views.items():
                logits = view(inputs_embeds=result.hidden_states[shared - 1],
                              attention_mask=batch["attention_mask"]).logits
                out[i] += [predictors[i].labels[k] for k in logits.argmax(-1).tolist()]
    return out


def run_coordinates(path: str | Path) -> dict:
    """Read the coordinates of a run directory ``.../<exp>/<lang>/<model>/seed=<k>[/checkpoint]``.

    ``path`` may also be a path inside one, or a plain model folder. Returns ``experiment, language, model, seed``
    (:func:`diagnostics.finetune.run_coordinates`); a plain model folder gives ``model`` = its name and ``None`` for the
    rest.
    """
    from diagnostics.finetune import run_coordinates as store_coordinates
    from diagnostics.finetune import run_folder

    path = Path(path)
    if run_folder(path) is None:
        return {"experiment": None, "language": None, "model": path.name, "seed": None}
    return store_coordinates(path)
