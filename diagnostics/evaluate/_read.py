"""Read a store of evaluations back: the runs (which model became which seed, the label rule applied), their
predictions, and the sets they were scored on, for the statistics and notebook 12."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ._evaluate import Evaluation
from ._runs import stored_evaluation


def _rule_text(rule: Any) -> str:
    """A recorded label rule as one line: ``0=contradiction -> not_entailment, ...``."""
    if not isinstance(rule, dict):
        return str(rule)
    return ", ".join(f"{head} -> {label}" for head, label in rule.items())


def read_evaluations(store: str | Path, experiments: str | list[str] | None = None) -> Evaluation:
    """Read the finished evaluations of a run store (``diagnostics evaluate --out STORE``) for the statistics.

    Parameters
    ----------
    store : str or Path
        The run store (or one experiment folder of it).
    experiments : str or list of str, optional
        The experiments to read; ``None`` reads every one.

    Returns
    -------
    Evaluation
        ``runs``: one row per finished evaluation, ``experiment, language, model, seed, state`` (``done``),
        ``path``, ``rows``, ``seconds`` (of inference) and what the run records: ``model_given`` (the folder or hub
        id evaluated), ``source``, ``revision``, ``sets``, ``label_rule`` (as applied, one line), ``precision``,
        ``max_length``; ``predictions``: their predictions tables; ``datasets``: the sets scored, name ->
        :class:`~diagnostics.data.DataRef` (with its split, or the user's file), to pass as ``datasets`` /
        ``dataset`` to the statistics.

    Raises
    ------
    UserInputError
        When the store holds no finished evaluation (the message names the command that makes one), or when two
        of its runs scored different files or splits under one set name.
    """
    from diagnostics.core.errors import UserInputError
    from diagnostics.data import DataRef
    from diagnostics.finetune import list_runs, verify_run


    store = Path(store).expanduser()
    wanted = [experiments] if isinstance(experiments, str) else experiments
    rows, tables, sets = [], [], {}
    for run in list_runs(store, experiment=wanted, state="done"):
        record = stored_evaluation(run.path)
        if record is None:
            continue  # a trained run of the same store: not an evaluation
        problems = verify_run(run.path)
        if problems:
            raise UserInputError(f"{run.path}: {'; '.join(problems)}; delete the folder and evaluate again")
        table = run.predictions()
        metrics = run.metrics() or {}
        refs = [DataRef.parse(value) for value in record.get("datasets") or []]
        for ref in refs:
            if sets.setdefault(ref.name, ref) != ref:
                raise UserInputError(f"{store}: set {ref.name} was scored as {sets[ref.name]} and as {ref}; read "
                                     "the experiments one at a time (experiments=...)")
        rows.append({"experiment": run.experiment, "language": run.language,
                     "model": record.get("model") or run.model, "seed": run.seed,
                     "state": "done", "path": str(run.path), "rows": len(table),
                     "seconds": metrics.get("inference_s"), "model_given": record.get("model_given"),
                     "source": record.get("source"), "revision": record.get("revision"),
                     "sets": ", ".join(f"{r.name}:{r.split}" if r.split else r.name for r in refs),
                     "label_rule": _rule_text(record.get("label_rule")), "precision": record.get("precision"),
                     "max_length": record.get("max_length")})
        tables.append(table)
    if not rows:
        chosen = f" (experiments {', '.join(wanted)})" if wanted else ""
        raise UserInputError(f"{store} holds no finished evaluation{chosen}; make one with `diagnostics evaluate "
                             f"MODEL --dataset axb --out {store}` (docs/evaluate.md)")
    return Evaluation(pd.DataFrame(rows), pd.concat(tables, ignore_index=True), sets)
