"""What both notebook widgets share: a listing shown a page of examples at a time, and one outlined button."""

from __future__ import annotations

import pytest

from diagnostics.explorer._listing import ListingWidget

w = pytest.importorskip("ipywidgets")


class _Listing(ListingWidget):
    """The smallest widget on the mixin: ``total`` examples, three buttons."""

    def __init__(self, total: int, row_limit: int):
        self.total, self.shown = total, []
        self.buttons = {key: w.Button(description=key) for key in ("a", "b", "c")}
        self._chosen = None
        self._add_listing(w, "<table></table>", "dx-listing", row_limit)

    def _show_listing(self):
        self.shown.append(min(self.limit, self.total))
        self._count_more(self.total)


def test_show_more_pages_through_the_listing_until_all_are_shown():
    listing = _Listing(total=12, row_limit=5)
    assert "dx-listing" in listing.listing._dom_classes and listing.more.layout.display == "none"
    listing._show_listing()
    assert listing.more.description == "show 5 more (of 7 not shown)" and listing.more.layout.display == ""
    listing.more.click()
    assert listing.more.description == "show 2 more (of 2 not shown)"
    listing.more.click()
    assert listing.shown == [5, 10, 12] and listing.more.layout.display == "none"


def test_one_button_is_outlined_at_a_time():
    listing = _Listing(total=3, row_limit=5)
    listing._highlight("a")
    listing._highlight("b")
    a, b = listing.buttons["a"], listing.buttons["b"]
    assert b.layout.border == "2px solid #000" and b.style.font_weight == "bold" and "dx-chosen" in b._dom_classes
    assert a.layout.border == "" and "dx-chosen" not in a._dom_classes
    listing._highlight("gone")  # a key without a button: the old one is cleared, nothing else outlined
    assert "dx-chosen" not in b._dom_classes and listing._chosen == "gone"
