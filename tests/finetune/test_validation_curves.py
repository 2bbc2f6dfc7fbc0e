"""``sweep status DIR --plot [PATH]``: each run's validation curve from its ``metrics.json`` history, one line per
seed and a panel per experiment and language, written as a PNG (never inside a run folder)."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from _cli import invoke_cli
from diagnostics.finetune import list_runs, run_dir
from diagnostics.plots import validation_curves


def _run(root, experiment, language, seed, scores, metric="mcc"):
    folder = run_dir(root, experiment, language, "m", seed)
    folder.mkdir(parents=True)
    history = [{"epoch": i, "step": 10 * (i + 1), "train_loss": 0.5, f"validation_{metric}": s,
                "validation_accuracy": 0.5} for i, s in enumerate(scores)]
    (folder / "metrics.json").write_text(json.dumps({"selection_metric": metric, "history": history}))
    return folder


@pytest.fixture
def store(tmp_path):
    root = tmp_path / "runs"
    for seed in (0, 1, 2):
        _run(root, "e", "en", seed, [0.1, 0.3 + seed / 10, 0.35])
    _run(root, "e", "ru", 0, [0.2, 0.25], metric="accuracy")
    run_dir(root, "e", "ru", "m", 1).mkdir(parents=True)  # pending: no metrics.json, no line
    return root


def test_a_line_per_seed_and_a_panel_per_experiment_and_language(store):
    fig = validation_curves(store)
    panels = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["e / en", "e / ru"]
    assert [line.get_label() for line in panels[0].lines] == ["seed=0", "seed=1", "seed=2"]
    assert [line.get_label() for line in panels[1].lines] == ["seed=0"]
    assert list(panels[0].lines[1].get_xdata()) == [10, 20, 30] and panels[0].lines[1].get_ydata()[1] == 0.4
    assert panels[0].get_ylabel() == "validation mcc" and panels[1].get_ylabel() == "validation accuracy"
    assert len(validation_curves(list_runs(store, language="ru")).axes) == 1
    with pytest.raises(ValueError, match="no run has a validation history"):
        validation_curves(list_runs(store, language="ru", state="pending"))


def test_status_plot_writes_the_png_by_default_in_dir_or_at_path(store, tmp_path):
    result = invoke_cli("sweep", "status", store, "--plot")
    assert result.returncode == 0, result.stderr
    with Image.open(store / "validation_curves.png") as image:
        assert image.format == "PNG"
    assert "seed" in result.stdout and str(store / "validation_curves.png") in result.stdout
    one = run_dir(store, "e", "en", "m", 0)
    assert invoke_cli("sweep", "status", one, "--plot").returncode == 0
    assert (one.parent / "validation_curves.png").is_file() and not (one / "validation_curves.png").exists()
    chosen = tmp_path / "figs" / "curves.png"
    assert invoke_cli("sweep", "status", store, "--plot", chosen).returncode == 0 and chosen.is_file()
    inside = invoke_cli("sweep", "status", store, "--plot", one / "x.png")
    assert inside.returncode == 2 and "inside a run folder" in inside.stderr and not (one / "x.png").exists()
    assert invoke_cli("sweep", "status", store).returncode == 0  # no --plot: the table only


def test_status_plot_without_any_history_exits_1(tmp_path):
    root = tmp_path / "runs"
    run_dir(root, "e", "en", "m", 0).mkdir(parents=True)
    result = invoke_cli("sweep", "status", root, "--plot")
    assert result.returncode == 1 and "no figure written" in result.stderr
    assert not (root / "validation_curves.png").exists()
