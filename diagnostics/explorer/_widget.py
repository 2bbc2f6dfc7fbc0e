"""The instability explorer in a notebook: an ipywidgets widget over :class:`~diagnostics.explorer.ExplorerModel`.

Widget stack: ipywidgets 8, core controls only (``Dropdown``, ``Checkbox``, a ``GridBox`` of ``Button`` cells as
the clickable heat map, an ``HTML`` listing). Core controls are rendered by the widget manager that every
current front end ships: JupyterLab 3 / 4 (``jupyterlab_widgets``, a prebuilt extension installed with
ipywidgets, no Node build), Notebook 7 and the classic Notebook 6 (``widgetsnbextension``), VS Code and Colab
(their own managers render core widgets without ``enable_custom_widget_manager``). A custom front end
(anywidget, or CheckList's classic-Notebook-only viewer) would add JavaScript that has to be loaded in each of
those and keep the state in the browser, where it cannot be tested from Python; here every click goes to
:class:`~diagnostics.explorer.ExplorerModel` and the listing is HTML rendered in Python. :class:`Explorer` (what
:func:`explore` returns) displays as one output holding both the widget view and the static HTML: a front end
with a widget manager renders the widget, anything else (no ipywidgets installed, papermill, nbconvert, the
report) the HTML.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from ._compare import ComparisonModel
from ._format import ROW_LIMIT, legend_html, mcc_color, two_decimals
from ._listing import ListingWidget
from ._model import ExplorerModel, build_explorer


class ExplorerWidget(ListingWidget):
    """The notebook widget (ipywidgets 8 core controls) over an :class:`ExplorerModel`.

    The heat map sits in a box of bounded height with its colour legend above it and the listing right below it,
    so the examples of a clicked cell appear where the user looks; the chosen cell is outlined, and a long
    listing shows ``row_limit`` examples at a time ("show more").

    Parameters
    ----------
    model : ExplorerModel
        The state; every click and filter change goes through it.
    row_limit : int
        Examples listed at first and added by each "show more".

    Raises
    ------
    ImportError
        When ipywidgets is not installed.
    """

    def __init__(self, model: ExplorerModel, row_limit: int = ROW_LIMIT):
        import ipywidgets as w

        self.model = model
        self._w = w
        options = model.options()
        self.dropdowns = {}
        for name in model.filters:
            choices = [("all", None)] + [(str(v), v) for v in options[name]]
            dropdown = w.Dropdown(options=choices, value=model.filters[name], description=name,
                                  layout=w.Layout(width="220px"))
            dropdown.observe(self._on_filter, names="value")
            self.dropdowns[name] = dropdown
            if len(options[name]) < 2 and name == "model":
                dropdown.layout.display = "none"
        self.flipping = w.Checkbox(value=model.flipping_only, description="flipping only", indent=False)
        self.flipping.observe(self._on_filter, names="value")
        self.grid = w.GridBox()
        # bounded: the listing below stays within a screen of any clicked cell
        self.grid_box = w.Box([self.grid], layout=w.Layout(max_height="380px", overflow="auto",
                                                           display="block"))
        self._add_listing(w, model.examples_html(limit=row_limit), "dx-listing-widget", row_limit)
        self.widget = w.VBox([w.HBox([*self.dropdowns.values(), self.flipping]), w.HTML(legend_html()),
                              self.grid_box, self.listing, self.more])
        self.widget.add_class("dx-explorer-widget")
        self.buttons: dict[tuple[int, str, str], object] = {}
        self._chosen = None
        self._draw_grid()

    def _on_filter(self, _change=None) -> None:
        self.model.set_filters(**{name: d.value for name, d in self.dropdowns.items()},
                               flipping_only=self.flipping.value)
        self._draw_grid()
        self._show_listing(reset=True)

    def _draw_grid(self) -> None:
        w, model = self._w, self.model
        frame = model.heatmap()
        columns = model.columns()
        self.buttons = {}
        self._chosen = None
        selected = model.selection
        children = [w.Label("")]
        for i, label in columns:
            children.append(w.HTML(f"<small>{html.escape(model.setting_name(i))}<br>seed {label}</small>"))
        for category, values in frame.iterrows():
            children.append(w.Label(category, layout=w.Layout(width="auto")))
            for (i, label), value in zip(columns, values.to_numpy(dtype=float)):
                finite = np.isfinite(value)
                button = w.Button(description=two_decimals(value), disabled=not finite,
                                  tooltip=f"{category} · {model.setting_name(i)} · seed {label}",
                                  layout=w.Layout(width="64px", height="22px", padding="0"))
                button.style.button_color = mcc_color(value if finite else None)
                button.add_class("dx-cell")
                button.add_class(cell_class(i, model.category_names.index(category), label))
                button.on_click(lambda _b, i=i, c=category, s=label: self.choose(i, c, s))
                self.buttons[(i, category, label)] = button
                children.append(button)
        self.grid.children = children
        self.grid.layout = w.Layout(grid_template_columns=f"minmax(180px, max-content) repeat({len(columns)}, 64px)",
                                    grid_gap="1px")
        if selected is not None:
            self._highlight((selected[0], selected[1], selected[2]))

    def _show_listing(self, reset: bool = False) -> None:
        if reset:
            self.limit = self.row_limit
        self.listing.value = self.model.examples_html(limit=self.limit)
        self._count_more(len(self.model.examples()) if self.model.selection is not None else 0)

    def choose(self, setting: int, category: str, seed: str) -> None:
        """Select a cell (what clicking its button does): outline it and list its first examples below the map.

        Parameters
        ----------
        setting : int
            Index into the model's settings.
        category : str
        seed : str
            Seed label.
        """
        self.model.select(category, seed, setting=setting)
        self._highlight((setting, category, seed))
        self._show_listing(reset=True)


def cell_class(setting: int, category_index: int, seed: str) -> str:
    """The CSS class naming one heat-map cell of the widget (``dx-cell-<setting>-<category>-<seed>``).

    Parameters
    ----------
    setting : int
        Index into the model's settings.
    category_index : int
        Index into the model's ``category_names``.
    seed : str
        Seed label (``"1/3"`` becomes ``1_3``).

    Returns
    -------
    str
        A class name a browser test (or a user's CSS) can select the cell by.
    """
    return f"dx-cell-{setting}-{category_index}-" + "".join(ch if ch.isalnum() else "_" for ch in str(seed))


class Explorer:
    """What :func:`explore` returns: displays as the widget where a widget front end runs, else static HTML.

    Parameters
    ----------
    model : ExplorerModel or ComparisonModel
        The state: one explorer (the heat map of every setting's seeds) or two settings side by side.
    static : bool
        Show the static HTML only (no widget).
    """

    def __init__(self, model: ExplorerModel | ComparisonModel, static: bool = False):
        self.model = model
        self.static = static
        self.widget = None
        if not static:
            try:
                if isinstance(model, ComparisonModel):
                    from ._compare_widget import ComparisonWidget

                    self.widget = ComparisonWidget(model)
                else:
                    self.widget = ExplorerWidget(model)
            except ImportError:  # no ipywidgets: the static tables are the explorer
                self.widget = None

    def _repr_mimebundle_(self, include=None, exclude=None):
        if isinstance(self.model, ComparisonModel):
            text = (f"two systems side by side: {self.model.names[0]} (A) vs {self.model.names[1]} (B), "
                    f"{len(self.model.category_names)} categories, {len(self.model.outcomes())} shared examples")
        else:
            text = (f"instability explorer: {len(self.model.settings)} settings, "
                    f"{len(self.model.category_names)} categories")
        bundle = {"text/plain": text, "text/html": self.model.to_html()}
        if self.widget is not None:
            view = self.widget.widget._repr_mimebundle_()
            if view and "application/vnd.jupyter.widget-view+json" in view:
                bundle["application/vnd.jupyter.widget-view+json"] = view["application/vnd.jupyter.widget-view+json"]
        return bundle


def explore(predictions: pd.DataFrame | ExplorerModel | ComparisonModel, dataset=None, *, static: bool = False,
            **options) -> Explorer:
    """Open the instability explorer on a predictions table (or an already built model, or two systems).

    Parameters
    ----------
    predictions : pandas.DataFrame, ExplorerModel or ComparisonModel
        The predictions table, the result of :func:`build_explorer`, or two settings side by side
        (:meth:`ExplorerModel.compare`, :func:`build_comparison`).
    dataset : str, DataFrame or mapping, optional
        Where texts and categories come from (see :func:`build_explorer`).
    static : bool
        Static HTML only, no widget.
    **options
        Passed to :func:`build_explorer` (``level``, ``annotations``, ``cache_dir`` ...).

    Returns
    -------
    Explorer
        Display it (last expression of a cell, or ``IPython.display.display``).
    """
    built = isinstance(predictions, (ExplorerModel, ComparisonModel))
    model = predictions if built else build_explorer(predictions, dataset, **options)
    return Explorer(model, static=static)

