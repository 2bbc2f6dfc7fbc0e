"""Every private module that holds logic has a test module of its own: ``tests/<stage>/test_<name>.py`` for
``diagnostics/<stage>/_<name>.py``, so that a maintainer changing a module knows where its tests are.

A module without one is listed below, with the reason, in one of the exceptions; the test fails when a new private
module has neither, and when an exception is stale (the module got its own test module, or no longer exists), so the
lists only shrink.
"""

from __future__ import annotations

import pytest

from _paths import ROOT

#: Modules without logic: declarations only (constants, exception classes), nothing a test could exercise on its own.
NO_LOGIC = {
    "behave/_errors": "two exception classes of the template and suite files, their behaviour is DataFormatError's",
    "data/_kinds": "one constant: file-format kind -> the registered dataset whose reader reads it",
}

#: Modules whose tests live in behaviour-named modules of stages being reworked now; they get their own test modules
#: when those stages' tests are split.
NOT_YET_SPLIT = {
    **dict.fromkeys([
        "finetune/_config_values", "finetune/_executors", "finetune/_grouping", "finetune/_inputs", "finetune/_loop",
        "finetune/_modeling", "finetune/_pool", "finetune/_predict", "finetune/_preflight", "finetune/_quality",
        "finetune/_recipe_epoch", "finetune/_recipe_jiant", "finetune/_recipe_trainer", "finetune/_run_spec",
        "finetune/_run_writer", "finetune/_stacked_optim", "finetune/_store_checks",
    ], "tested from the behaviour-named modules of tests/finetune"),
}

#: Modules with logic still tested only from behaviour-named modules of their own stage: to move.
TO_MOVE: dict[str, str] = {}

EXCEPTIONS = {**NO_LOGIC, **NOT_YET_SPLIT, **TO_MOVE}


def _private_modules() -> list[str]:
    """``<stage>/_<name>`` of every private module of a stage package."""
    return sorted(f"{path.parent.name}/{path.stem}" for path in (ROOT / "diagnostics").glob("*/_*.py")
                  if path.name != "__init__.py")


def _has_own_tests(module: str) -> bool:
    stage, name = module.split("/")
    return (ROOT / "tests" / stage / f"test{name}.py").is_file()


def test_the_exception_lists_do_not_overlap():
    assert sum(map(len, (NO_LOGIC, NOT_YET_SPLIT, TO_MOVE))) == len(EXCEPTIONS)


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
