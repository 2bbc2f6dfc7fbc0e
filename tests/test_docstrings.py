"""Every public function, class and method of ``diagnostics`` has a complete numpy-style docstring.

In the manner of scikit-learn's common docstring test: the objects are enumerated, each is validated with
``numpydoc.validate.validate(qualified_name)``, and only a chosen subset of numpydoc's error codes counts.

What is checked
    The public API, as in scikit-learn: a module with a private part in its path (``diagnostics.stats._mcc``,
    ``diagnostics._resources``; a package's ``__init__`` is not private) is not walked. In every other module of
    the package (``pkgutil.walk_packages``: ``diagnostics.cli``, the public modules of ``diagnostics.core`` and
    ``diagnostics.notebooks``, and each package's ``__init__`` once the stage packages' modules are private),
    every function and class whose name has no leading underscore and whose ``__module__`` is that module; and
    every function and class a stage package lists in ``__all__``, resolved through the package and checked under
    its public name (``diagnostics.stats.compare_settings``, wherever it is defined). For each class, every public
    method, static method, class method and property defined in its body.

The codes, and why these
    - ``GL08``: no docstring at all.
    - ``GL06``, ``GL07``: an unknown section (``Args:``, ``Return``, ``Example``) is not parsed as numpy style,
      so its parameters would silently count as undocumented; sections in numpydoc's order.
    - ``SS01``, ``SS02``, ``SS03``, ``SS05``: a one-sentence summary that starts with a capital letter, ends with
      a period and, for functions, uses the imperative ("Compute", not "Computes"); the summary is what
      ``help()``, IDEs and the command line's ``--help`` show first.
    - ``PR01``, ``PR02``, ``PR03``: every parameter of the signature documented, none that does not exist, in the
      order of the signature (the docstring cannot drift from the code unnoticed).
    - ``PR04``, ``PR06``, ``PR10``: every parameter has a type, written ``name : type`` with ``int`` / ``bool`` /
      ``str`` spelled as Python spells them (a missing space before the colon makes numpydoc read ``name:type``
      as a name without a type).
    - ``RT01``, ``YD01``: a function that returns a value has a ``Returns`` section, a generator a ``Yields``
      section (numpydoc decides from the source: bare ``return`` and ``return None`` need none).

    Left out on purpose, because meeting them would add noise rather than information: ``ES01`` (extended
    summary: many functions are fully described by their summary), ``EX01`` (examples: the tests are the
    examples), ``SA01`` (see also), ``PR07``-``PR09`` and ``RT02``-``RT05`` (wording of descriptions: a parameter
    whose name and type say it all needs no sentence), ``SS06`` (a summary over two lines is still a summary)
    and ``GL01``-``GL03`` (layout of the quotes, left to the linter).

Typer command callbacks
    The functions registered as ``diagnostics ...`` commands (found by walking the Typer app of
    ``diagnostics.cli``, so whatever its command modules register) are checked too, under the name of the
    module that defines them (private or not), with two differences. Their
    docstring is the command's ``--help`` text, printed whole by Click, so a numpy ``Parameters`` section would
    appear in every ``--help`` and repeat, in a second place that drifts, the help each option already has.
    Their parameters are therefore checked where users read them: every parameter must be a ``typer.Argument`` /
    ``typer.Option`` with a non-empty ``help`` (reported as ``CLI01``); the summary and section codes above apply
    to their docstrings as to any other; ``PR*`` and ``RT01`` do not (commands return nothing).

The ignore list
    ``tests/docstring_ignore.txt`` holds, one per line and sorted, the qualified names that do not pass yet. The
    test fails when an object outside the list has errors (fix its docstring) and when an object in the list now
    passes or no longer exists (remove it from the list), so the list can only shrink. Inline
    ``# numpydoc ignore`` comments are not used: the list is the one place for exceptions.
    ``python tests/test_docstrings.py --update`` rewrites the list from the current state (after a module is split
    or renamed; review the diff: it should only lose lines).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from functools import cache
from pathlib import Path

from numpydoc.validate import validate

from _paths import ROOT

PACKAGE = "diagnostics"
IGNORE_FILE = Path(__file__).with_name("docstring_ignore.txt")

CODES = frozenset({"GL06", "GL07", "GL08", "SS01", "SS02", "SS03", "SS05", "PR01", "PR02", "PR03", "PR04", "PR06",
                   "PR10", "RT01", "YD01"})
COMMAND_CODES = frozenset({"GL06", "GL07", "GL08", "SS01", "SS02", "SS03", "SS05", "CLI01"})


def _is_private(module_name: str) -> bool:
    """Whether a part of the dotted path after the package name starts with ``_`` (private module or package)."""
    return any(part.startswith("_") for part in module_name.split(".")[1:])


def _module_names() -> list[str]:
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
        if not _is_private(info.name):
            names.append(info.name)
    return sorted(names)


def _stage_packages() -> list[str]:
    """The subpackages of the package that declare their public names in ``__all__``."""
    package = importlib.import_module(PACKAGE)
    names = (f"{PACKAGE}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
             if info.ispkg and not info.name.startswith("_"))
    return sorted(name for name in names if hasattr(importlib.import_module(name), "__all__"))


def _command_callbacks() -> set:
    from diagnostics.cli import app

    callbacks = set()

    def walk(typer_app) -> None:
        callbacks.update(command.callback for command in typer_app.registered_commands)
        if typer_app.registered_callback is not None:
            callbacks.add(typer_app.registered_callback.callback)
        for group in typer_app.registered_groups:
            walk(group.typer_instance)

    walk(app)
    callbacks.discard(None)
    return {inspect.unwrap(callback) for callback in callbacks}  # the app may wrap them (error reporting)


def _is_routine(obj) -> bool:
    return inspect.isfunction(inspect.unwrap(obj))


def _members(cls) -> list[str]:
    """Public methods and properties written in the body of ``cls``."""
    names = []
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if isinstance(attr, property) or (_is_routine(attr) and attr.__qualname__ == f"{cls.__qualname__}.{name}"):
            names.append(name)
    return names


def _add(out: dict[str, object], name: str, obj) -> None:
    """Put ``obj`` (a class with its public members, or a function) into ``out`` under the qualified ``name``."""
    if inspect.isclass(obj):
        out[name] = obj
        for member in _members(obj):
            out[f"{name}.{member}"] = vars(obj)[member]
    elif _is_routine(obj):
        out[name] = obj


@cache
def public_objects() -> dict[str, object]:
    """Qualified name -> object, for every public function, class, method and property of the package."""
    out = {}
    for module_name in _module_names():
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module_name:
                continue
            _add(out, f"{module_name}.{name}", obj)
    for package_name in _stage_packages():
        package = importlib.import_module(package_name)
        for name in package.__all__:
            _add(out, f"{package_name}.{name}", getattr(package, name))  # resolves lazily exported names
    for callback in _command_callbacks():  # defined in the command modules of ``diagnostics.cli``
        _add(out, f"{callback.__module__}.{callback.__qualname__}", callback)
    return dict(sorted(out.items()))


def _command_errors(func) -> list[tuple[str, str]]:
    import typer.models

    errors = []
    for name, param in inspect.signature(func).parameters.items():
        info = param.default
        if not isinstance(info, typer.models.ParameterInfo) or not (info.help or "").strip():
            errors.append(("CLI01", f"Parameter {name!r} has no help text (typer.Argument / typer.Option help=...)"))
    return errors


@cache
def docstring_errors() -> dict[str, list[tuple[str, str]]]:
    """Qualified name -> its errors among the chosen codes (empty when the docstring is complete)."""
    commands = _command_callbacks()
    out = {}
    for name, obj in public_objects().items():
        found = [(code, message) for code, message in validate(name)["errors"]]
        if obj in commands:
            found += _command_errors(obj)
            codes = COMMAND_CODES
        else:
            codes = CODES
        out[name] = [(code, message) for code, message in found if code in codes]
    return out


def read_ignore_list() -> list[str]:
    """Names in the ignore list (blank lines and ``#`` comments skipped)."""
    if not IGNORE_FILE.exists():
        return []
    lines = (line.strip() for line in IGNORE_FILE.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def write_ignore_list() -> list[str]:
    """Rewrite the ignore list with every object that has errors now; return its names."""
    failing = sorted(name for name, errors in docstring_errors().items() if errors)
    IGNORE_FILE.write_text("".join(f"{name}\n" for name in failing), encoding="utf-8")
    return failing


# --- tests ------------------------------------------------------------------------------------------------------


def test_the_walk_finds_functions_classes_methods_and_commands():
    objects = public_objects()
    assert "diagnostics.stats.mcc" in objects  # exported by the package, defined in the private diagnostics.stats._mcc
    assert "diagnostics.core.tables.read_table" in objects  # a foundation module is walked
    assert any(inspect.isclass(obj) for obj in objects.values())
    assert any(name.count(".") > 2 and inspect.isclass(objects[name.rsplit(".", 1)[0]]) for name in objects)
    commands = _command_callbacks()
    assert commands and all(obj in objects.values() for obj in commands), "every command callback is checked"


def test_private_modules_are_skipped_and_public_names_covered():
    objects = public_objects()
    commands = _command_callbacks()
    private = sorted(name for name, obj in objects.items() if _is_private(name.rsplit(".", 1)[0])
                     and obj not in commands and not any(name.startswith(f"{c.__module__}.{c.__qualname__}.")
                                                         for c in commands))
    assert not private, f"objects of private modules checked: {private[:10]}"
    assert _is_private("diagnostics.stats._mcc") and _is_private("diagnostics._resources.x")
    assert not _is_private("diagnostics.stats") and not _is_private("diagnostics.core.tables")
    for package_name in _stage_packages():
        package = importlib.import_module(package_name)
        for name in package.__all__:
            obj = getattr(package, name)
            if inspect.isclass(obj) or _is_routine(obj):
                assert f"{package_name}.{name}" in objects, f"{package_name}.{name} (in __all__) is not checked"


def test_ignore_list_is_sorted_and_unique():
    names = read_ignore_list()
    assert names == sorted(set(names)), f"keep {IGNORE_FILE.name} sorted, one name per line"


def test_public_docstrings_are_complete():
    ignored = set(read_ignore_list())
    problems = []
    for name, errors in docstring_errors().items():
        if errors and name not in ignored:
            problems.append(name + "\n" + "\n".join(f"    {code}: {message}" for code, message in errors))
    assert not problems, (f"{len(problems)} public object(s) without a complete numpy-style docstring "
                          "(fix the docstring; see this test's module docstring for the codes):\n"
                          + "\n".join(problems))


def test_ignore_list_only_shrinks():
    errors = docstring_errors()
    stale = [name for name in read_ignore_list() if not errors.get(name)]
    assert not stale, ("remove from " + IGNORE_FILE.name + " (the docstring is complete now, or the object no longer "
                       "exists): " + ", ".join(stale))


def test_no_inline_numpydoc_ignores():
    hits = [str(path.relative_to(ROOT)) for path in sorted((ROOT / PACKAGE).rglob("*.py"))
            if "numpydoc ignore" in path.read_text(encoding="utf-8")]
    assert not hits, f"use {IGNORE_FILE.name}, not inline '# numpydoc ignore' comments: {hits}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_docstrings.py --update   (rewrite tests/docstring_ignore.txt)")
    sys.path.insert(0, str(ROOT))
    failing = write_ignore_list()
    total = len(public_objects())
    print(f"{IGNORE_FILE.name}: {len(failing)} of {total} public objects listed ({total - len(failing)} complete)")
