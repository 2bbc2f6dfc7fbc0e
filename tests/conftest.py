"""Shared fixtures (models built once per worker) and the collection order: ``runs_first`` modules first."""

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def embedded_model_dir(tmp_path_factory):
    """The converted multilingual-e5-small (built once, ~6 s)."""
    from diagnostics.models import prepare_embedded

    return prepare_embedded(tmp_path_factory.mktemp("cache")).path


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A 2-layer random BERT with the real XLM-R tokenizer (deterministic)."""
    from diagnostics.models import tiny_random_model

    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "tiny-bert", seed=0)


def pytest_collection_modifyitems(items):
    """Move the tests of ``runs_first`` modules to the front, keeping every other test's order.

    ``--dist loadfile`` hands whole modules to the workers in collection order: a module whose fixture takes minutes
    (the tiny main job) then starts at once rather than as the last module of a worker.
    """
    items.sort(key=lambda item: item.get_closest_marker("runs_first") is None)
