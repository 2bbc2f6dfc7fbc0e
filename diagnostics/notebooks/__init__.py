"""The notebook tooling: ``diagnostics notebooks copy`` and the JupyterLab hook of ``bash scripts/lab.sh``.

``copy_notebooks`` writes editable copies of the analysis notebooks (its command is in ``diagnostics/cli/notebooks.py``,
with every command). :mod:`diagnostics.notebooks.lab` is what JupyterLab loads from the toolkit: the kernel metadata
every committed notebook carries and the save hooks that ``scripts/lab.sh`` passes to ``jupyter lab``
(``--ContentsManager.pre_save_hook=diagnostics.notebooks.lab.pre_save_hook``).
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {"copy_notebooks": "_copy"}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
