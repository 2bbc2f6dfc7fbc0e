"""Two systems side by side in a notebook: an ipywidgets widget over :class:`~diagnostics.explorer.ComparisonModel`.

The same widget stack as the one-setting explorer (:mod:`diagnostics.explorer._widget`): ipywidgets 8 core
controls only, so JupyterLab, Notebook 7, the classic Notebook, VS Code and Colab render it with the widget manager
they ship. One row per category: a button with the category's name (click: list its examples) and an HTML strip of
both sides' per-seed MCC with their means, σ and outcome counts; above, the outcome filter; below, the listing of
the chosen category's examples, A's seeds beside B's, 25 at a time ("show more").
"""

from __future__ import annotations

import html

from ._compare import ComparisonModel
from ._compare_html import STYLE, legend_html, shown_number, strip_svg
from ._format import OUTCOME_FILTERS, OUTCOMES, ROW_LIMIT
from ._listing import ListingWidget


def category_class(category_index: int) -> str:
    """The CSS class of one category's button in the comparison widget: ``dx-cmp-cat-<index>``."""
    return f"dx-cmp-cat-{category_index}"


class ComparisonWidget(ListingWidget):
    """The notebook widget of two systems side by side (ipywidgets 8 core controls).

    Parameters
    ----------
    pair : ComparisonModel
        The two settings' state, which each click and change of the filter updates.
    row_limit : int
        Page size of the listing.

    Raises
    ------
    ImportError
        When ipywidgets is not installed.
    """

    def __init__(self, pair: ComparisonModel, row_limit: int = ROW_LIMIT):
        import ipywidgets as w

        self.pair = pair
        self._w = w
        choices = [("all examples", None)] + [(words, key) for key, words in OUTCOME_FILTERS.items()]
        self.outcome = w.Dropdown(options=choices, value=pair.outcome, description="examples",
                                  layout=w.Layout(width="300px"))
        self.outcome.observe(self._on_filter, names="value")
        self.buttons: dict[str, object] = {}
        children = [w.Label(""), w.HTML("<small>per-seed MCC (A above, B below) · mean ± σ · Δ mean · "
                                         + " · ".join(html.escape(v) for v in OUTCOMES.values()) + "</small>")]
        table = pair.category_table()
        mcc = pair.seed_mcc()
        for j, category in enumerate(pair.category_names):
            button = w.Button(description=category, tooltip=f"list the examples of {category}",
                              layout=w.Layout(width="auto", height="32px"))
            button.add_class("dx-cmp-cat")
            button.add_class(category_class(j))
            button.on_click(lambda _b, c=category: self.choose(c))
            self.buttons[category] = button
            row = table.loc[category]
            mine = mcc[mcc["category"] == category]
            a, b = mine[mine["side"] == "A"], mine[mine["side"] == "B"]
            strip = strip_svg(a["mcc"].to_numpy(), b["mcc"].to_numpy(), list(a["seed"]), list(b["seed"]),
                              row["mean_a"], row["mean_b"])
            numbers = _row_numbers(row)
            cell = w.HTML(f"{STYLE}<div class='dx-compare dx-cmp-strip' data-category='{html.escape(category)}' "
                          f"style='display:flex;align-items:center;gap:.8em;font-size:12px'>{strip}"
                          f"<span>{numbers}</span></div>")
            children += [button, cell]
        self.grid = w.GridBox(children, layout=w.Layout(grid_template_columns="minmax(180px, max-content) auto",
                                                         grid_gap="1px"))
        self.grid_box = w.Box([self.grid], layout=w.Layout(max_height="380px", overflow="auto", display="block"))
        self._add_listing(w, pair.examples_html(limit=row_limit), "dx-cmp-listing-widget", row_limit)
        self.example = w.Dropdown(options=[("open an example of the listing", None)], value=None,
                                  description="example", layout=w.Layout(width="420px", display="none"))
        self.example.observe(self._on_example, names="value")
        self.example_view = w.HTML("")
        self.example_view.add_class("dx-cmp-example-widget")
        self.widget = w.VBox([w.HTML(legend_html(pair)), w.HBox([self.outcome]), self.grid_box, self.listing,
                              self.more, self.example, self.example_view])
        self.widget.add_class("dx-compare-widget")
        self._chosen = None
        if pair.selection is not None:
            self._highlight(pair.selection)
            self._show_listing(reset=True)

    def _on_filter(self, _change=None) -> None:
        self.pair.set_filter(self.outcome.value)
        self._show_listing(reset=True)

    def _show_listing(self, reset: bool = False) -> None:
        if reset:
            self.limit = self.row_limit
        self.listing.value = self.pair.examples_html(limit=self.limit)
        listed = self.pair.examples() if self.pair.selection is not None else None
        total = 0 if listed is None else len(listed)
        self._count_more(total)
        shown = [] if listed is None else [str(x) for x in listed["example_id"].head(self.limit)]
        current = self.example.value
        self.example.options = [("open an example of the listing", None)] + [(x, x) for x in shown]
        self.example.value = current if current in shown else None
        self.example.layout.display = "" if shown else "none"

    def _on_example(self, _change=None) -> None:
        value = self.example.value
        self.example_view.value = "" if value is None else self.pair.example_html(value)

    def open_example(self, example_id: str) -> None:
        """Show one example of the listing in full: texts, features and every seed of A and of B.

        Parameters
        ----------
        example_id : str
            An example the listing shows (what choosing it in the "example" menu does).

        Raises
        ------
        ValueError
            For an example the listing does not show.
        """
        choices = [value for _, value in self.example.options if value is not None]
        if example_id not in choices:
            raise ValueError(f"{example_id!r} is not among the listed examples")
        self.example.value = example_id

    def choose(self, category: str) -> None:
        """Select a category (what clicking its button does): outline it and list its first examples.

        Parameters
        ----------
        category : str
        """
        self.pair.select(category)
        self._highlight(category)
        self._show_listing(reset=True)


def _row_numbers(row) -> str:
    counts = " · ".join(f"<span data-outcome='{key}' title='{html.escape(words)}'>{int(row[key])}</span>"
                        for key, words in OUTCOMES.items())
    return (f"A {shown_number(row['mean_a'])} ± {shown_number(row['sigma_a'])} · B {shown_number(row['mean_b'])} ± "
            f"{shown_number(row['sigma_b'])} · Δ {shown_number(row['delta'], sign=True)} · n {int(row['n'])}: {counts}")
