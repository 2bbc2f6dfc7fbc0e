"""Export a registered dataset to Hugging Face ``datasets``."""

from __future__ import annotations

from ._registry import get_spec, load


def to_hf(name: str, **load_kwargs):
    """Return a :class:`datasets.DatasetDict` with one ``Dataset`` per split of ``name``.

    Parameters
    ----------
    name : str
        Registered dataset name.
    **load_kwargs
        Passed to :func:`diagnostics.data.load` (``path``, ``language``, ``normalise_quotes``).

    Returns
    -------
    datasets.DatasetDict
        Split name -> ``datasets.Dataset`` of that split's rows (with ``path``: one per ``split`` value found).
    """
    import datasets  # optional heavy import, kept local

    frame = load(name, **load_kwargs)
    splits = list(get_spec(name).splits) if "path" not in load_kwargs else list(frame["split"].unique())
    out = {}
    for split in splits:
        part = frame[frame["split"] == split].reset_index(drop=True)
        out[split] = datasets.Dataset.from_pandas(part, preserve_index=False)
    return datasets.DatasetDict(out)
