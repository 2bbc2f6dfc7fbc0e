"""Turn model names, model folders and fine-tuned run folders into the ``label -> folder`` mapping probed."""

from __future__ import annotations

from pathlib import Path

from diagnostics.models import has_model_config

from ._extract import find_model_folder


def discover_runs(folder: str | Path, *, require_done: bool = True) -> dict[str, Path]:
    """Fine-tuned seeds below ``folder``: every ``seed=<k>`` folder holding a model, labelled ``seed=<k>``.

    Parameters
    ----------
    folder : str or Path
        A run store level such as ``runs/<exp>/<lang>/<model>`` (searched recursively).
    require_done : bool
        Skip runs without their ``DONE`` marker (unfinished or failed).

    Returns
    -------
    dict
        ``"seed=<k>"`` -> model folder, sorted by seed. Two runs with the same seed (from different
        experiments) are labelled by their path relative to ``folder`` instead.
    """
    from diagnostics.finetune import list_runs

    folder = Path(folder)
    runs = sorted(list_runs(folder, state="done" if require_done else None), key=lambda r: (r.seed, str(r.path)))
    found: dict[str, Path] = {}
    names = [r.path.name for r in runs]
    for run in runs:
        if not run.has_checkpoint:
            continue
        label = run.path.name if names.count(run.path.name) == 1 else str(run.path.relative_to(folder.parent))
        found[label] = run.model_folder()
    return found


def resolve_models(specs: list[str]) -> dict[str, Path]:
    """Resolve ``--model`` arguments: a run store folder expands to its seeds, a model folder is itself,
    anything else is a model name for :func:`diagnostics.models.resolve_model` (``"embedded"``).

    Parameters
    ----------
    specs : list of str

    Returns
    -------
    dict
        Label -> model folder. Names keep their name as label, folders their folder name (``seed=<k>``
        for a run).

    Raises
    ------
    FileNotFoundError
        When a folder holds no model and no finished run.
    """
    models: dict[str, Path] = {}
    for spec in specs:
        path = Path(spec).expanduser()
        if path.exists():
            if not path.name.startswith("seed=") and has_model_config(path):
                models[path.name] = find_model_folder(path)
                continue
            runs = discover_runs(path)
            if runs:
                models.update(runs)
                continue
            models[path.name] = find_model_folder(path)
            continue
        try:
            from diagnostics.models import resolve_model
        except ImportError as err:
            raise FileNotFoundError(f"{spec!r} is not a folder and model names cannot be resolved "
                                    f"(diagnostics.models unavailable: {err})") from err
        ref = resolve_model(spec)
        models[spec] = find_model_folder(getattr(ref, "path", ref))
    return models
