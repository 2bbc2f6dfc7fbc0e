"""Lazily exported names of a package: a submodule is imported when one of its names is first used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str],
                 namespace: MutableMapping[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Make a package's module-level ``__getattr__`` and ``__dir__`` for names living in its submodules.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : Mapping of str to str
        Exported name -> the submodule (relative to ``package``) that defines it.
    namespace : MutableMapping of str to object
        The package's ``globals()``: each name is stored there once imported, and listed by :func:`dir`.

    Returns
    -------
    tuple of callable
        ``(__getattr__, __dir__)``, to assign at the package's top level.

    Notes
    -----
    An exported name must not be the name of one of the package's submodules: importing that submodule binds its
    name in the package, which would hide the lazily exported object. Import such a name eagerly instead.
    """

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(f"{package}.{exports[name]}"), name)
            namespace[name] = value  # later lookups find it without calling this function
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
