"""A dataset reference as a value: a registered name, a split and, for user data, the file itself.

User files travel with the reference (``path``) into :func:`diagnostics.data.load` and the statistics; the
registry itself is never changed at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class DataRef:
    """A dataset reference: a registered name, a split, and optionally a user file (``path``) in its format.

    Written in config files either as ``"rte:train"`` or as a mapping ``{name, split, path, language}``.

    Parameters
    ----------
    name : str
        Registered dataset name (see :func:`diagnostics.data.available`).
    split : str, optional
        Split to load (``None``: every split, or the one bound file).
    path : str, optional
        A user file read with the dataset's reader instead of the bundled copy.
    language : str, optional
        Language recorded for the rows (default: the dataset's).
    """

    name: str
    split: str | None = None
    path: str | None = None
    language: str | None = None

    @classmethod
    def parse(cls, value: Any) -> DataRef:
        """Build from ``"name[:split]"``, a mapping, or an existing ``DataRef``.

        Parameters
        ----------
        value : str or dict or DataRef
            ``"rte:train"``, ``{"name": ..., "split": ..., "path": ..., "language": ...}`` or a reference.

        Returns
        -------
        DataRef
            The reference (``value`` itself when it already is one).

        Raises
        ------
        ValueError
            For unknown mapping keys or another type.
        """
        if isinstance(value, DataRef):
            return value
        if isinstance(value, str):
            name, _, split = value.partition(":")
            return cls(name=name, split=split or None)
        if isinstance(value, dict):
            unknown = set(value) - {"name", "split", "path", "language"}
            if unknown:
                raise ValueError(f"unknown keys in dataset reference {value!r}: {sorted(unknown)}")
            return cls(**value)
        raise ValueError(f"cannot read a dataset reference from {value!r}")

    def load(self):
        """Load the referenced table, via :func:`diagnostics.data.load`.

        Returns
        -------
        pandas.DataFrame
            The dataset's rows (see :func:`diagnostics.data.load` for the columns).
        """
        from ._registry import load

        return load(self.name, self.split, self.path, language=self.language)

    @property
    def key(self) -> str:
        """Short name used in the predictions table's ``dataset`` column."""
        return self.name


def user_file_refs(items: list[str], option: str = "--dataset", *,
                   names: bool = False) -> dict[str, DataRef]:
    """Read ``NAME=PATH`` options naming the file of a registered dataset as ``{NAME: DataRef(NAME, "test", PATH)}``.

    With ``names``, a bare ``NAME`` is accepted too: checked (it must be registered), giving no reference. The
    files travel as values into :func:`diagnostics.data.load` and the statistics; the registry is not changed.

    Parameters
    ----------
    items : list of str
        ``NAME=PATH`` (or ``NAME``) items, as given on the command line.
    option : str
        The option's name, for messages.
    names : bool
        Accept a bare ``NAME`` as well.

    Returns
    -------
    dict of str to DataRef
        Name -> reference to its file (resolved), for the items that gave one.

    Raises
    ------
    UserInputError
        An empty name or path, an unknown dataset, or a file that does not exist.
    """
    from diagnostics.core.errors import UserInputError, one_line
    from diagnostics.settings import split_pair

    from ._registry import get_spec

    refs = {}
    for item in items:
        name, sep, path = split_pair(item)
        path = path.strip()
        if not name or sep and not path or not sep and not names:
            raise UserInputError(f"{option} {item!r}: expected NAME{' or NAME=PATH' if names else '=PATH'}")
        try:
            get_spec(name)
        except KeyError as err:
            raise UserInputError(f"{option} {item!r}: {one_line(err)}") from None
        if not sep:
            continue
        if not Path(path).is_file():
            raise UserInputError(f"{option} {item!r}: {name} (test): {path} does not exist")
        refs[name] = DataRef(name, "test", str(Path(path).resolve()))
    return refs
