"""The ``diagnostics`` command line: one Typer app, one sub-command group per stage.

Each stage module ``diagnostics/<stage>/cli.py`` exposes ``register(app)``; imports of heavy libraries
(torch, spaCy) stay inside the command functions so that ``diagnostics --help`` is instant.
"""

from __future__ import annotations

import importlib
import os

import typer

# Quiet per-load reports of transformers (set before it is imported; the user's own setting wins).
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

app = typer.Typer(help="Multilingual NLI diagnostics and fine-tuning stability.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)

STAGES = ("data", "annotate", "models", "finetune", "stats", "probe", "behave", "report", "pipeline")

for _stage in STAGES:
    try:
        _module = importlib.import_module(f"diagnostics.{_stage}.cli")
    except ModuleNotFoundError as _err:
        if _err.name not in (f"diagnostics.{_stage}", f"diagnostics.{_stage}.cli"):
            raise
        continue
    _module.register(app)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
