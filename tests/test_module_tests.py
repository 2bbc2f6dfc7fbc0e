"""Every private module that holds logic has a test module of its own: ``tests/<stage>/test_<name>.py`` for
``diagnostics/<stage>/_<name>.py``, so that a maintainer changing a module knows where its tests are.

A module without one is listed below with the reason (it holds no logic); the test fails when a new private module
has neither, and when an exception is stale (the module got its own test module, or no longer exists).
"""

from __future__ import annotations

import pytest

from _paths import ROOT

#: Modules without logic: declarations only (constants, exception classes), nothing a test could exercise on its own.
NO_LOGIC = {
    "behave/_errors": "two exception classes of the template and suite files, their behaviour is DataFormatError's",
    "data/_kinds": "one constant: file-format kind -> the registered dataset whose reader reads it",
}

EXCEPTIONS = dict(NO_LOGIC)


def _private_modules() -> list[str]:
    """``<stage>/_<name>`` of every private module of a stage package."""
    return sorted(f"{path.parent.name}/{path.stem}" for path in (ROOT / "diagnostics").glob("*/_*.py")
                  if path.name != "__init__.py")


def _has_own_tests(module: str) -> bool:
    stage, name = module.split("/")
    return (ROOT / "tests" / stage / f"test{name}.py").is_file()


def test_every_private_module_has_its_own_test_module_or_a_listed_reason():
    modules = _private_modules()
    assert len(modules) > 100  # the glob found the package
    missing = [m for m in modules if not _has_own_tests(m) and m not in EXCEPTIONS]
    assert not missing, ("private modules without tests/<stage>/test_<name>.py (add one, or list the module with its "
                         "reason in tests/test_module_tests.py):\n" + "\n".join(missing))


@pytest.mark.parametrize("module", sorted(EXCEPTIONS))
def test_an_exception_is_not_stale(module):
    stage, name = module.split("/")
    assert (ROOT / "diagnostics" / stage / f"{name}.py").is_file(), f"{module} no longer exists: drop it from the list"
    assert not _has_own_tests(module), f"{module} has tests/{stage}/test{name}.py now: drop it from the exceptions"
