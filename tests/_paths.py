"""Where the checkout's folders are, for the test modules at any depth of ``tests/``."""

from pathlib import Path

#: The checkout (the folder holding ``pyproject.toml``).
ROOT = Path(__file__).resolve().parents[1]
#: Screenshots and other files the browser tests leave for a person to look at (git-ignored).
ARTIFACTS = ROOT / "tests" / "artifacts"
