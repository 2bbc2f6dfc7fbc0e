"""The instability explorer's figure (``diagnostics/plots/_flips.py``): one category's flipping examples, a cell per
seed with its prediction and P(entailment), the gold label, flip rate and Δσ; and :func:`focus`, which cuts a
premise and hypothesis at the words where they differ."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from diagnostics.core.schema import ENTAILMENT  # noqa: E402
from diagnostics.plots import flipping_figure, focus  # noqa: E402

NOT = "not_entailment"
E_COLOUR, N_COLOUR = "#9ecae1", "#fdae6b"


class FakeExplorer:
    """What the figure reads of an :class:`~diagnostics.explorer.ExplorerModel`, for one setting of seeds 0 and 1."""

    runs = [[0, 1]]

    def __init__(self, examples: pd.DataFrame):
        self._examples = examples

    def examples(self, setting, category, flipping_only=False):
        assert (setting, category, flipping_only) == (0, "Negation", True)
        return self._examples

    def category_table(self, setting):
        return pd.DataFrame({"sigma": [0.123], "n_flipping": [2], "n": [10]}, index=["Negation"])

    def seed_mcc(self, setting):
        return pd.DataFrame({"0": [0.25], "1": [-0.1]}, index=["Negation"])

    def setting_name(self, setting):
        return "rte / en"


def _examples():
    return pd.DataFrame({
        "example_id": [7, 12],
        "premise": ["The cat is on the mat.", "Nobody came."],
        "hypothesis": ["The cat isn't on the mat.", "Somebody came."],
        "label": [NOT, ENTAILMENT],
        "prediction_0": [ENTAILMENT, NOT], "probability_0": [0.91, 0.2],
        "prediction_1": [NOT, ENTAILMENT], "probability_1": [0.3, float("nan")],
        "flip_rate": [1.0, 0.5], "delta_sigma": [-0.012, 0.004],
    })


def test_a_row_per_example_and_a_cell_per_seed_and_gold():
    ax = flipping_figure(FakeExplorer(_examples()), 0, "Negation").axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts[:3] == ["seed 0", "seed 1", "gold"]
    cells = [to_hex(p.get_facecolor()) for p in ax.patches]
    # per example, seed 0, seed 1, gold
    assert cells == [E_COLOUR, N_COLOUR, N_COLOUR, N_COLOUR, E_COLOUR, E_COLOUR]
    for expected in ("E 0.91", "N 0.30", "N 0.20", "flip rate 1.00\nΔσ -0.012", "flip rate 0.50\nΔσ +0.004"):
        assert expected in texts
    assert texts.count("N") == 1 and texts.count("E") == 2  # the gold labels, and a seed without a probability
    assert "#7  P: The cat is on the mat." in texts and any(t.endswith("H: The cat isn't on the mat.") for t in texts)
    title = ax.get_title(loc="left")
    assert title.startswith("Negation (rte / en): σ of MCC over seeds = 0.123; per-seed MCC +0.25, -0.10\n"
                            "2 of 10 examples flip between seeds")


def test_max_examples_keeps_the_first_rows_and_none_says_so():
    ax = flipping_figure(FakeExplorer(_examples()), 0, "Negation", max_examples=1).axes[0]
    assert len(ax.patches) == 3 and not any("#12" in t.get_text() for t in ax.texts)
    ax = flipping_figure(FakeExplorer(_examples().iloc[:0]), 0, "Negation").axes[0]
    assert len(ax.patches) == 0 and "no flipping examples" in [t.get_text() for t in ax.texts]


def test_focus_cuts_both_sides_at_the_first_differing_word():
    assert focus("a b c d e f is g", "a b c d e f isn't g", width=40, context=2) == ("… e f is g", "… e f isn't g")
    assert focus("same start here", "same start there", context=5) == ("same start here", "same start there")
    assert focus("x y", "z y") == ("x y", "z y")  # differing from the first word: nothing cut


def test_focus_shortens_to_the_width():
    premise, hypothesis = focus("a b c d is " + "x " * 40, "a b c d isn't " + "x " * 40, width=20, context=1)
    assert len(premise) == len(hypothesis) == 20 and premise.endswith("…") and hypothesis.endswith("…")
    assert premise.startswith("… d is x") and hypothesis.startswith("… d isn't x")
    assert focus("a  b\n c", "a b c", width=10) == ("a b c", "a b c")  # whitespace made single


@pytest.mark.parametrize("width", [5, 12])
def test_focus_never_exceeds_the_width(width):
    assert all(len(side) <= width for side in focus("one two three four five", "one two tree four five", width))
