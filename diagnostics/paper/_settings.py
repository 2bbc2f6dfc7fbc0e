"""Whether a run store's numbers can stand beside the reference study's: model, recipe, data and diagnostic sets.

The study (Tikhonova et al., 2022) fine-tuned mBERT (``bert-base-multilingual-cased``) with jiant v1's SuperGLUE
trainer at batch 4 and learning rate 1e-5, trained every layer, on the whole RTE / TERRa training set (§5.1, §5.2),
plus MNLI pairs (§5.3, §5.4), and scored AX-b (en), LiDiRus (ru) and its own French, German and Swedish
translations. A run differs from that when its recorded config (``config.json`` of the run store, read with
:meth:`diagnostics.finetune.Run.config`) names another model or recipe, another classifier head than jiant's
(``classifier_head``: jiant v1 fixes it), a training subset, another extra data source, or when its language was
scored on another diagnostic set (SweDiagnostics is not the study's Swedish translation; a user's fr / de file is not
known to be the study's). A config written before the head was recorded is not comparable: what it ran is not
known. Probing numbers are comparable only when the probes used the study's feature list
(:data:`diagnostics.probe.STUDY_FEATURES_NAME`).

What the paper leaves open is not a reason: the validation schedule (``val_schedule``: it prints none) and the
order of a mixture's file (``mixture_order``: it does not say) are assumptions, which :func:`run_settings` reads
for every setting and "against the paper" names on every row (:data:`OPEN_READINGS`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import PurePath

import pandas as pd

from diagnostics.probe import STUDY_FEATURES_NAME

#: Model names (or final folder names of a local copy) taken for the study's model.
MBERT_NAMES = frozenset({"bert-base-multilingual-cased", "google-bert/bert-base-multilingual-cased", "mbert"})
#: The study's recipe: ``recipe`` (jiant v1's trainer), batch size, learning rate, every layer trained.
STUDY_RECIPE = {"recipe": "jiant", "batch_size": 4, "lr": 1e-5, "train_top_k_layers": None}
#: The study's classifier head (``classifier_head`` of a run config).
STUDY_CLASSIFIER_HEAD = "jiant"
#: Settings the paper leaves open, shown with every row as the assumptions its runs made rather than refused.
OPEN_READINGS = ("val_schedule", "mixture_order")
#: The mixture order of runs stored before ``mixture_order`` was recorded (the only one there was).
EARLIER_MIXTURE_ORDER = "train_first"
#: Language -> the diagnostic sets that are the study's own for that language.
STUDY_DIAGNOSTICS: Mapping[str, frozenset] = {"en": frozenset({"axb", "axb_superglue"}),
                                              "ru": frozenset({"lidirus"})}
#: What a setting is called in the reasons when the store used it.
_DIAGNOSTIC_NAMES = {"swediagnostics": "SweDiagnostics"}
SETTING_COLUMNS = ["experiment", "language", "model", "model_path", "recipe", "val_schedule", "mixture_order",
                   "classifier_head",
                   "batch_size", "lr", "dropout", "max_epochs", "train_top_k_layers", "train_size", "extra_name",
                   "extra_size", "presence_within", "n_seeds"]


def run_settings(configs: Iterable[Mapping]) -> pd.DataFrame:
    """The settings of each (experiment, language, model) of a run store, from its runs' recorded configs.

    ``configs`` are the ``config.json`` of each run (``{"run": {...}, "sweep": {...}}``, as
    :meth:`diagnostics.finetune.Run.config` returns it; ``ValueError`` without those sections). A sweep without a
    ``recipe`` key ran the ``epoch`` recipe (written before that setting existed). ``val_schedule``,
    ``mixture_order`` and ``classifier_head`` are read from the run section, else the sweep section; ``None`` when
    neither records them (``mixture_order``: :data:`EARLIER_MIXTURE_ORDER`, what runs made before it trained).

    Returns one row per (experiment, language, model) with the columns of :data:`SETTING_COLUMNS`: the model's local
    ``model_path`` (``None`` when loaded by name), the recipe, its schedule reading, classifier head and
    hyperparameters, ``train_size`` (``None``: the
    whole training set), the extra data's ``extra_name`` / ``extra_size`` (``None`` / 0 when none), the presence
    design's ``presence_within`` and the number of runs (``n_seeds``).
    """
    rows = {}
    for config in configs:
        run, sweep = config.get("run"), config.get("sweep")
        if not isinstance(run, Mapping) or not isinstance(sweep, Mapping):
            raise ValueError("expected a run config with 'run' and 'sweep' sections (config.json of a run store), "
                             f"found keys {sorted(config)}")
        key = (run.get("experiment"), run.get("language"), run.get("model"))
        if key in rows:
            rows[key]["n_seeds"] += 1
            continue
        model = next((m for m in sweep.get("models") or [] if isinstance(m, Mapping) and m.get("name") == key[2]), {})
        extra = sweep.get("extra_data") or {}
        presence = sweep.get("presence") or {}
        rows[key] = {"experiment": key[0], "language": key[1], "model": key[2], "model_path": model.get("path"),
                     "recipe": sweep.get("recipe") or "epoch",
                     "val_schedule": _recorded(run, sweep, "val_schedule"),
                     "mixture_order": _recorded(run, sweep, "mixture_order") or EARLIER_MIXTURE_ORDER,
                     "classifier_head": _recorded(run, sweep, "classifier_head"), "batch_size": sweep.get("batch_size"),
                     "lr": sweep.get("lr"), "dropout": sweep.get("dropout"), "max_epochs": sweep.get("max_epochs"),
                     "train_top_k_layers": sweep.get("train_top_k_layers"), "train_size": sweep.get("train_size"),
                     "extra_name": extra.get("name"), "extra_size": int(extra.get("size") or 0),
                     "presence_within": presence.get("within"), "n_seeds": 1}
    return pd.DataFrame(list(rows.values()), columns=SETTING_COLUMNS)


def _recorded(run: Mapping, sweep: Mapping, key: str):
    """A setting as the run records it (the resolved value), else as the sweep does; ``None`` when neither does."""
    value = run.get(key)
    return sweep.get(key) if value is None else value


def is_mbert(name: str | None, path: str | None = None) -> bool:
    """Tell whether a model is the study's mBERT, by its name or the last folder of its local path.

    ``name`` is the model's name in the run store (``bert-base-multilingual-cased``, ``mbert``, ``embedded`` ...),
    ``path`` its local folder when the sweep named one. True for a name or folder name in :data:`MBERT_NAMES`
    (case-insensitive).
    """
    names = {str(name or "").strip("/").lower()}
    if path:
        names.add(PurePath(str(path)).name.lower())
    return bool(names & MBERT_NAMES)


def _model_reason(setting: Mapping) -> str | None:
    if is_mbert(setting.get("model"), setting.get("model_path")):
        return None
    return f"{setting.get('model')} model"


def _same(value, wanted) -> bool:
    if wanted is None or value is None or (isinstance(value, float) and math.isnan(value)):
        return (value is None or (isinstance(value, float) and math.isnan(value))) == (wanted is None)
    return math.isclose(float(value), float(wanted), rel_tol=1e-9)


def _recipe_reason(setting: Mapping) -> str | None:
    hyper = [k for k in ("batch_size", "lr", "train_top_k_layers") if not _same(setting.get(k), STUDY_RECIPE[k])]
    if not hyper and setting.get("recipe") == STUDY_RECIPE["recipe"]:
        return None
    # the study's hyperparameters with the epoch trainer is a recipe of its own; anything cheaper is the demo's kind
    return "demo recipe" if hyper else f"{setting.get('recipe')} recipe"


def _head_reasons(setting: Mapping) -> list[str]:
    """The classifier head, when not jiant's (or not recorded)."""
    head = setting.get("classifier_head")
    if _missing(head):
        return ["classifier head not recorded"]
    return [] if head == STUDY_CLASSIFIER_HEAD else [f"{head} classifier head instead of jiant's"]


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def probe_reason(probes: pd.DataFrame | None) -> str | None:
    """Say why probing results are not the study's probes, or ``None`` when they are.

    ``probes`` is the probing table of :func:`diagnostics.probe.probe_models`; it is the study's when every row's
    ``feature_list`` is :data:`diagnostics.probe.STUDY_FEATURES_NAME`. A table without that column (written before
    it was recorded) or with another list gives ``"probing feature list not the study's"``.
    """
    if probes is None or probes.empty:
        return None
    if "feature_list" not in probes.columns or not (probes["feature_list"] == STUDY_FEATURES_NAME).all():
        return "probing feature list not the study's"
    return None


def _data_reasons(setting: Mapping) -> list[str]:
    reasons = []
    experiment = str(setting.get("experiment") or "")
    if setting.get("train_size") not in (None, "") and not pd.isna(setting.get("train_size")):
        reasons.append(f"a {int(setting['train_size'])}-pair training subset")
    extra, size = setting.get("extra_name"), int(setting.get("extra_size") or 0)
    if experiment.startswith(("extra-", "presence-")):
        if size and str(extra).lower() != "mnli":
            reasons.append(f"extra data from {str(extra).upper()} instead of MNLI")
    elif size:
        reasons.append(f"{size} {str(extra).upper()} pairs added to the language's own data")
    if experiment.startswith("presence-") and setting.get("presence_within") not in (None, "extra"):
        reasons.append("the feature share set within the language's own data instead of 10k MNLI pairs")
    return reasons


def diagnostic_reason(language: str, dataset: str,
                      study_diagnostics: Mapping[str, Iterable[str]] | None = None) -> str | None:
    """Say why a language's diagnostic set is not the study's, or ``None`` when it is.

    ``dataset`` is the set the language was scored on (the predictions table's ``dataset``). ``study_diagnostics`` maps
    language -> names of the sets taken for the study's own, e.g. ``{"fr": ["diagnostic_fr"]}`` for a user's set that is
    the study's translation; other languages keep :data:`STUDY_DIAGNOSTICS` (AX-b for English, LiDiRus for Russian). A
    reason reads ``"sv scored on SweDiagnostics instead of the study's sv set"``.
    """
    known = {**STUDY_DIAGNOSTICS, **{k: frozenset(v) for k, v in (study_diagnostics or {}).items()}}
    if dataset in known.get(language, ()):
        return None
    return f"{language} scored on {_DIAGNOSTIC_NAMES.get(dataset, dataset)} instead of the study's {language} set"


def setting_reasons(setting: Mapping) -> list[str]:
    """Every way one (experiment, language, model) setting differs from the study's, most important first.

    ``setting`` is one row of :func:`run_settings`. Reasons read ``"embedded model"``, ``"demo recipe"``,
    ``"classifier head not recorded"``, ``"transformers classifier head instead of jiant's"``,
    ``"a 1000-pair training subset"`` ...; empty when the setting is the study's.
    """
    first = [_model_reason(setting), _recipe_reason(setting)]
    return [r for r in first if r] + _head_reasons(setting) + _data_reasons(setting)
