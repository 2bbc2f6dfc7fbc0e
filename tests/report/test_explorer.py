"""The report's explorer page written without a browser: the data embedded so that no text closes its element (the
page's behaviour in a browser is tests/report/test_explorer_page.py)."""

from __future__ import annotations

import json
import re

from diagnostics.explorer import ROW_LIMIT
from diagnostics.report._explorer import embed_json, render_explorer


def test_embedded_json_is_the_same_data_and_cannot_close_its_script_element():
    payload = {"text": "</script><script>alert(1)</script> <!-- x -->", "π": [1.5, None], "nested": {"a": "</b>"}}
    embedded = embed_json(payload)
    assert "</" not in embedded and "<!--" not in embedded
    assert json.loads(embedded) == payload  # the escapes are still the same JSON


def test_the_page_embeds_its_data_once_and_escapes_the_title(tmp_path):
    payload = {"settings": [], "categories": [], "datasets": [], "keys": [], "text": "</script>"}
    out = render_explorer(payload, tmp_path / "site" / "explorer.html", title="Seeds <&> runs")
    page = out.read_text(encoding="utf-8")
    assert out.parent.is_dir() and "<title>Seeds &lt;&amp;&gt; runs</title>" in page
    (data,) = re.findall(r"<script type='application/json' id='explorer-data'>(.*?)</script>", page, re.S)
    assert json.loads(data) == {**payload, "rows": ROW_LIMIT}  # the examples listed at first, the explorer's
    assert page.index("id='lead'") < page.index("id='compare'")  # without a pair the comparison comes last
    paired = render_explorer({**payload, "pair": {"a": 0, "b": 1, "names": ["A", "B"]}}, tmp_path / "pair.html")
    text = paired.read_text(encoding="utf-8")
    assert text.index("id='compare'") < text.index("id='lead'")  # a page written for a pair leads with it
