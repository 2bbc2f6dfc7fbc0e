"""One protocol measurement of the tiny model, made once per process for the tests that read its figures."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def tiny_measurement(folder: Path):
    """``measure_model`` of ``folder``: 40 English records, batches of 16, 3 repetitions, quality 0.7."""
    from diagnostics.models import measure_model

    return measure_model(folder, language="en", records=40, batch_size=16, repeats=3, quality=0.7)
