"""Seaborn figures used by the notebooks and the HTML report (one module per stage)."""
