"""``save`` (``diagnostics/plots/_save.py``): a figure written as ``<folder>/<name>.png``, the folder made, one file
and nothing else left beside it, never through a link planted at its name."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402

from diagnostics.plots import save  # noqa: E402


def _figure(width: float = 2.0, height: float = 1.0) -> Figure:
    fig = Figure(figsize=(width, height))
    fig.subplots().plot([0, 1], [0, 1])
    return fig


def test_save_writes_one_png_in_a_new_folder(tmp_path):
    out = tmp_path / "a" / "b"
    path = save(_figure(), out, "curve")
    assert path == out / "curve.png"
    assert sorted(p.name for p in out.iterdir()) == ["curve.png"]  # no temporary file, no other format
    with Image.open(path) as image:
        assert image.format == "PNG"


def test_the_resolution_follows_dpi(tmp_path):
    small, large = save(_figure(), tmp_path, "small", dpi=50), save(_figure(), tmp_path, "large", dpi=100)
    with Image.open(small) as a, Image.open(large) as b:
        assert abs(b.size[0] / a.size[0] - 2) < 0.1 and abs(b.size[1] / a.size[1] - 2) < 0.15


def test_save_replaces_a_file_and_never_writes_through_a_link(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me", encoding="utf-8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "fig.png").symlink_to(target)
    path = save(_figure(), tmp_path / "out", "fig")
    assert target.read_text(encoding="utf-8") == "keep me"
    assert not path.is_symlink() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    save(_figure(4, 1), tmp_path / "out", "fig")  # written again: replaced in place
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fig.png"]
