"""Write a figure as a PNG file (the one writer of every figure of the notebooks and the report)."""

from __future__ import annotations

from pathlib import Path

from ..core.io_utils import atomic_path


def save(fig, output_dir: str | Path, name: str, dpi: int = 110) -> Path:
    """Write ``fig`` as ``<output_dir>/<name>.png`` (folder created) and return the path.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    output_dir : str or Path
        Folder of the file.
    name : str
        File name without the ``.png`` suffix.
    dpi : int
        Resolution.

    Returns
    -------
    Path
        The written file.
    """
    path = Path(output_dir) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:  # never through a link planted at the figure's name
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format="png")
    return path
