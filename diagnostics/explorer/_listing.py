"""What both notebook widgets (``_widget``, ``_compare_widget``) share: the paged listing, the outlined button."""

from __future__ import annotations


class ListingWidget:
    """What both notebook widgets share: a listing shown ``row_limit`` examples at a time, one outlined button."""

    def _add_listing(self, w, html_text: str, css_class: str, row_limit: int) -> None:
        """Create ``listing`` (showing ``html_text``) and its hidden "show more" button."""
        self.row_limit = self.limit = row_limit
        self.listing = w.HTML(html_text)
        self.listing.add_class(css_class)
        self.more = w.Button(description="show more", layout=w.Layout(display="none", width="auto"))
        self.more.add_class("dx-more")
        self.more.on_click(self._show_more)

    def _count_more(self, total: int) -> None:
        """Show "show more" while the listing holds fewer than the ``total`` examples."""
        rest = total - min(self.limit, total)
        self.more.description = f"show {min(rest, self.row_limit)} more (of {rest} not shown)"
        self.more.layout.display = "" if rest > 0 else "none"

    def _show_more(self, _button=None) -> None:
        self.limit += self.row_limit
        self._show_listing()

    def _highlight(self, key) -> None:
        """Outline the button of ``key`` (bold, black border) and clear the one outlined before."""
        if self._chosen is not None and self._chosen in self.buttons:
            old = self.buttons[self._chosen]
            old.layout.border = ""
            old.style.font_weight = ""
            old.remove_class("dx-chosen")
        self._chosen = key
        button = self.buttons.get(key)
        if button is not None:
            button.layout.border = "2px solid #000"
            button.style.font_weight = "bold"
            button.add_class("dx-chosen")
