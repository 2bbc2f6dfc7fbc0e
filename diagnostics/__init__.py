"""Multilingual NLI diagnostics and fine-tuning stability toolkit."""

__version__ = "0.1.0"
