"""Lazy exports: a name is imported on first use, and each package's ``__init__.pyi`` spells out its exports for
editors and type checkers, in step with its ``_EXPORTS``."""

import ast
import importlib

import pytest

from diagnostics.core.lazy import lazy_packages, stub_text

from _paths import ROOT

PACKAGES = lazy_packages(ROOT / "diagnostics")


def test_every_stage_package_exports_lazily():
    assert {"diagnostics.finetune", "diagnostics.stats", "diagnostics.paper", "diagnostics.pipeline"} <= set(PACKAGES)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_stub_lists_every_export_where_it_is_defined(package):
    exports = importlib.import_module(package)._EXPORTS
    stub = PACKAGES[package].with_suffix(".pyi")
    assert stub.is_file() and stub.read_text(encoding="utf-8") == stub_text(exports), \
        f"{stub.relative_to(ROOT)} is stale: python -m diagnostics.core.lazy"
    imported = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.asname == alias.name  # `x as x`: a re-export, as type checkers read stubs
                imported[alias.name] = node.module
    assert imported == exports
    for name, module in exports.items():  # each name is defined (or imported) in the module the stub names
        assert hasattr(importlib.import_module(f"{package}.{module}"), name), (package, module, name)


def test_a_stub_is_one_explicit_import_per_module():
    text = stub_text({"b": "_one", "a": "_one", "c": "_two"})
    assert "from ._one import (\n    a as a,\n    b as b,\n)\nfrom ._two import (\n    c as c,\n)\n" in text
    assert text.endswith("__all__ = [\n    'a',\n    'b',\n    'c',\n]\n")
