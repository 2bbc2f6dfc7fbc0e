"""``validation_curves`` (``diagnostics/plots/_sweep.py``): per (experiment, language) a panel, per run a line of
its selection metric (``validation_<metric>`` of its ``metrics.json`` history) against the step; runs without a
readable history left out."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from dataclasses import dataclass, field  # noqa: E402

import pytest  # noqa: E402

from diagnostics.plots import validation_curves  # noqa: E402


@dataclass
class FakeRun:
    """What the figure reads of a :class:`~diagnostics.finetune.Run`: its coordinates and ``metrics()``."""

    experiment: str
    language: str
    model: str
    seed: int
    scores: list = field(default_factory=list)
    metric: str = "mcc"
    problem: type | None = None

    def metrics(self) -> dict:
        if self.problem is not None:
            raise self.problem("no metrics.json")
        history = [{"step": 10 * (i + 1), f"validation_{self.metric}": s, "validation_loss": 9.0}
                   for i, s in enumerate(self.scores)]
        return {"selection_metric": self.metric, "history": history}


def _panels(fig):
    return [ax for ax in fig.axes if ax.axison]


def test_a_panel_per_experiment_and_language_a_line_per_seed():
    runs = [FakeRun("rte", "en", "m", 0, [0.1, 0.3, 0.35]), FakeRun("rte", "en", "m", 1, [0.2, 0.25]),
            FakeRun("rte", "ru", "m", 0, [0.5, 0.6], metric="accuracy")]
    fig = validation_curves(runs)
    en, ru = _panels(fig)
    assert en.get_title() == "rte / en" and ru.get_title() == "rte / ru"
    assert [line.get_label() for line in en.lines] == ["seed=0", "seed=1"]
    assert list(en.lines[0].get_xdata()) == [10, 20, 30] and list(en.lines[0].get_ydata()) == [0.1, 0.3, 0.35]
    assert list(en.lines[1].get_ydata()) == [0.2, 0.25]
    assert en.get_ylabel() == "validation mcc" and ru.get_ylabel() == "validation accuracy"  # its own metric
    assert en.get_xlabel() == "training step"
    assert [t.get_text() for t in en.get_legend().get_texts()] == ["seed=0", "seed=1"]
    assert fig.get_suptitle() == "Validation curves per run (the selection metric at each check)"


def test_lines_name_the_model_when_a_panel_holds_several():
    runs = [FakeRun("rte", "en", "mbert", 0, [0.1]), FakeRun("rte", "en", "xlmr", 0, [0.2])]
    (ax,) = _panels(validation_curves(runs))
    assert [line.get_label() for line in ax.lines] == ["mbert seed=0", "xlmr seed=0"]


def test_runs_without_a_history_are_left_out():
    runs = [FakeRun("rte", "en", "m", 0, [0.4]), FakeRun("rte", "en", "m", 1, problem=FileNotFoundError),
            FakeRun("rte", "en", "m", 2, problem=ValueError), FakeRun("rte", "de", "m", 0, [])]
    (ax,) = _panels(validation_curves(runs))  # no panel for de: no check recorded
    assert [line.get_label() for line in ax.lines] == ["seed=0"]


def test_no_history_at_all_is_refused():
    with pytest.raises(ValueError, match=r"no run has a validation history \(metrics.json\) yet"):
        validation_curves([FakeRun("rte", "en", "m", 0, problem=FileNotFoundError)])
    with pytest.raises(ValueError, match="no run has a validation history"):
        validation_curves([])


def test_four_panels_wrap_into_rows_of_three():
    runs = [FakeRun("rte", lang, "m", 0, [0.1, 0.2]) for lang in ("en", "ru", "de", "fr")]
    fig = validation_curves(runs)
    assert len(fig.axes) == 6 and [ax.get_title() for ax in _panels(fig)] == ["rte / en", "rte / ru", "rte / de",
                                                                              "rte / fr"]
