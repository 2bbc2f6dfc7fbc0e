"""Architecture of ``diagnostics``: the import graph has no cycles and no upward imports, and the definitions
every stage shares (labels, predictions-table columns, file kinds, MCC, atomic writes, line-aware YAML) have one
home each.

The import graph is read from the source with ``ast`` (nothing is imported): every ``import`` / ``from ... import``
anywhere in a module counts, at module level or inside a function, under ``if TYPE_CHECKING`` or not. An import of
``diagnostics.<pkg>.<mod>`` from another stage also counts as an import of the package ``diagnostics.<pkg>``, whose
``__init__`` Python runs first.

Stages, lowest first (a module may import its own stage and the ones below it, never one above):

0. foundation: the ``core`` package (``schema``, ``taxonomy``, ``hashing``, ``io_utils``, ``yaml_lines`` ...) and
   the ``settings`` package
1. ``data``
2. ``annotate``
3. ``models``
4. ``stats``: pure numpy / pandas / scipy; needs only ``data`` and the foundation
5. ``finetune``: imports the one MCC from ``stats`` (so ``stats`` sits below it and must never import it)
6. ``probe``
7. ``behave``
8. ``predictions``: importers and exporters of other tools' prediction files, and ``compare``; needs ``data`` and
   ``stats`` (only ``plots`` and the commands may import it); ``evaluate`` beside it: finished classifiers scored
   into a run store (the sweep's tokenisation, batches, predictions table and store writers; the label names of
   ``predictions``); and ``paper``, the reproduction of the reference study (every number it prints beside ours):
   needs ``stats`` and the probing feature list's name from ``probe`` (only ``plots`` and the commands may import
   it)
9. ``plots``, and ``explorer`` (the instability explorer; needs ``annotate`` and ``stats``, the report uses it):
   no stage below draws its own figures
10. commands: ``pipeline``, ``report``, ``notebooks`` (``diagnostics notebooks`` and the JupyterLab hook), and the
   command line: the ``diagnostics.cli`` package (one module per command group, ``diagnostics/cli/<group>.py``,
   each using the stages through their public names) and ``__main__``. Nothing but the command line itself and
   ``__main__`` imports ``diagnostics.cli``.

Every module sits in the stage of its package, so every import is checked in its real direction: a stage holds no
commands (only ``diagnostics.cli`` and the help format of ``diagnostics.core.cli_help`` import Typer or Click).

Besides ``__main__``, the package has no top-level modules: every other module belongs to a package of a stage or
to ``diagnostics.cli``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from _paths import ROOT

PACKAGE = ROOT / "diagnostics"

STAGES = ("foundation", "data", "annotate", "models", "stats", "finetune", "probe", "behave", "predictions", "plots",
          "commands")
_STAGE_OF_PACKAGE = {"core": 0, "settings": 0, "data": 1, "annotate": 2, "models": 3, "stats": 4, "finetune": 5,
                     "probe": 6, "behave": 7, "predictions": 8, "evaluate": 8, "paper": 8, "plots": 9,
                     "explorer": 9, "pipeline": 10, "report": 10, "notebooks": 10, "cli": 10}
_COMMAND_MODULES = {"diagnostics.__main__"}
#: The command line: the package that builds the ``diagnostics`` command.
COMMAND_LINE = "diagnostics.cli"

#: Cycles that cannot be broken now: frozenset of modules -> reason. Each must still exist (else remove it here).
ALLOWED_CYCLES: dict[frozenset, str] = {}
#: Upward imports that cannot move now: (importer, imported) -> reason. Each must still exist.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}
#: Imports of another stage's private module that cannot go through its public names now: (importer, imported) ->
#: reason. Each must still exist.
ALLOWED_PRIVATE_IMPORTS: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8"), filename=str(path)) for name, (path, _) in MODULES.items()}
#: Every node of each module, walked once (the checks below walk them again and again)
NODES = {name: list(ast.walk(tree)) for name, tree in TREES.items()}


def _known(name: str) -> str | None:
    """The module (or package) of ``diagnostics`` that ``name`` refers to, None outside the package."""
    if name != "diagnostics" and not name.startswith("diagnostics."):
        return None
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[:len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module
        # ``from pkg import name``: a submodule when ``pkg.name`` is one, else an attribute of ``pkg``
        names = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]
    return [found for found in map(_known, names) if found is not None]


def _top(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


def import_graph() -> dict[str, set[str]]:
    """Module -> the ``diagnostics`` modules it imports (see the module docstring for what counts)."""
    graph = {}
    for module, (_, is_package) in MODULES.items():
        deps = set()
        for node in NODES[module]:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for dep in _imported(module, is_package, node):
                    deps.add(dep)
                    parts = dep.split(".")
                    if len(parts) > 2 and _top(dep) != _top(module):  # the other stage's package __init__ runs
                        deps.add(".".join(parts[:2]))
        deps.discard(module)
        graph[module] = deps
    return graph


GRAPH = import_graph()


def stage_of(module: str) -> int:
    """Stage index (see :data:`STAGES`) of a ``diagnostics`` module."""
    parts = module.split(".")
    if module in _COMMAND_MODULES:
        return STAGES.index("commands")
    if len(parts) == 1:
        return STAGES.index("foundation")  # the package root
    if len(parts) == 2 and not MODULES[module][1]:
        raise KeyError(f"{module}: a top-level module; put it in a package (diagnostics.core for the foundation)")
    if parts[1] not in _STAGE_OF_PACKAGE:
        raise KeyError(f"{module}: package diagnostics.{parts[1]} has no stage; add it to tests/test_architecture.py")
    return _STAGE_OF_PACKAGE[parts[1]]


def strongly_connected(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The import cycles: strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node]):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs where the imported module sits in a higher stage."""
    return {(module, dep) for module, deps in graph.items() for dep in deps if stage_of(dep) > stage_of(module)}


def _strings(module: str) -> list[ast.Constant]:
    return [n for n in NODES[module] if isinstance(n, ast.Constant) and isinstance(n.value, str)]


# --- the import graph -------------------------------------------------------------------------------------------


def test_the_graph_sees_module_and_function_level_imports():
    assert "diagnostics.finetune._config" in GRAPH["diagnostics.finetune._sweep"]  # module level, relative
    assert "diagnostics.finetune._unpadding" in GRAPH["diagnostics.finetune._train"]  # inside a function
    assert "diagnostics.data" in GRAPH["diagnostics.annotate._io"]  # ``from .. import data`` inside a function
    assert "diagnostics.stats" in GRAPH["diagnostics.finetune._train"]  # ``from diagnostics.stats import mcc``


def test_every_module_has_a_stage():
    for module in MODULES:
        stage_of(module)


def test_no_import_cycles():
    cycles = set(strongly_connected(GRAPH))
    unexpected = [sorted(c) for c in cycles - set(ALLOWED_CYCLES)]
    assert not unexpected, f"import cycles: {unexpected}"
    stale = [sorted(c) for c in set(ALLOWED_CYCLES) - cycles]
    assert not stale, f"allowed cycles that no longer exist (remove them from ALLOWED_CYCLES): {stale}"


def test_no_upward_imports():
    upward = upward_imports(GRAPH)
    unexpected = sorted(f"{a} ({STAGES[stage_of(a)]}) imports {b} ({STAGES[stage_of(b)]})"
                        for a, b in upward - set(ALLOWED_UPWARD))
    assert not unexpected, "imports of a higher stage:\n" + "\n".join(unexpected)
    stale = sorted(set(ALLOWED_UPWARD) - upward)
    assert not stale, f"allowed upward imports that no longer exist (remove them from ALLOWED_UPWARD): {stale}"


def _stage_package(module: str) -> str | None:
    """The stage package (``data``, ``stats``, ``settings`` ...) a module belongs to, None for a top-level module."""
    parts = module.split(".")
    if len(parts) < 2 or not MODULES.get(".".join(parts[:2]), (None, False))[1]:
        return None
    return parts[1]


def private_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importer, imported) pairs where a module imports a private module of another stage package."""
    return {(module, dep) for module, deps in graph.items() for dep in deps
            if len(dep.split(".")) > 2 and dep.split(".")[2].startswith("_")
            and _stage_package(dep) is not None and _stage_package(module) != _stage_package(dep)}


def test_other_stages_are_used_through_their_public_names():
    found = private_imports(GRAPH)
    unexpected = sorted(f"{a} imports {b}: import the name from diagnostics.{_stage_package(b)} (add it to its "
                        f"_EXPORTS if missing)" for a, b in found - set(ALLOWED_PRIVATE_IMPORTS))
    assert not unexpected, "imports of another stage's private module:\n" + "\n".join(unexpected)
    stale = sorted(set(ALLOWED_PRIVATE_IMPORTS) - found)
    assert not stale, ("allowed private imports that no longer exist (remove them from ALLOWED_PRIVATE_IMPORTS): "
                       f"{stale}")


def test_the_private_import_check_sees_a_private_import():
    graph = {"diagnostics.finetune._train": {"diagnostics.models._precision", "diagnostics.finetune._store",
                                             "diagnostics.models", "diagnostics.core.schema"},
             "diagnostics.finetune": {"diagnostics.finetune._store"},
             "diagnostics.pipeline._plan": {"diagnostics.settings._fields"},
             "diagnostics.settings._docs": {"diagnostics.settings._fields"},
             "diagnostics.cli.stats": {"diagnostics.stats", "diagnostics.stats._report"}}
    assert private_imports(graph) == {("diagnostics.finetune._train", "diagnostics.models._precision"),
                                      ("diagnostics.pipeline._plan", "diagnostics.settings._fields"),
                                      ("diagnostics.cli.stats", "diagnostics.stats._report")}


def test_the_checks_catch_a_cycle_and_an_upward_import():
    graph = {"diagnostics.stats.x": {"diagnostics.finetune.y"}, "diagnostics.finetune.y": {"diagnostics.stats.x"}}
    assert strongly_connected(graph) == [frozenset(graph)]
    assert upward_imports(graph) == {("diagnostics.stats.x", "diagnostics.finetune.y")}


def test_a_stage_module_that_imports_a_command_or_a_figure_points_up():
    """No module is a command for its name: a stage's module importing the command line or plots is upward."""
    graph = {"diagnostics.stats._cli": {"diagnostics.plots", "diagnostics.cli"}, "diagnostics.cli.stats": set(),
             "diagnostics.settings._cli": {"diagnostics.finetune", "diagnostics.pipeline"}}
    assert stage_of("diagnostics.cli.stats") == STAGES.index("commands") > stage_of("diagnostics.plots")
    assert upward_imports(graph) == {("diagnostics.stats._cli", "diagnostics.plots"),
                                     ("diagnostics.stats._cli", "diagnostics.cli"),
                                     ("diagnostics.settings._cli", "diagnostics.finetune"),
                                     ("diagnostics.settings._cli", "diagnostics.pipeline")}


def _in_command_line(module: str) -> bool:
    return module == COMMAND_LINE or module.startswith(COMMAND_LINE + ".")


def test_only_the_command_line_and_main_import_the_command_line():
    found = sorted(f"{module} imports {dep}" for module, deps in GRAPH.items() for dep in deps
                   if _in_command_line(dep) and not _in_command_line(module) and module not in _COMMAND_MODULES)
    assert not found, "the command line is the top: nothing of the package imports it:\n" + "\n".join(found)


def test_no_stage_below_plots_imports_plots():
    below = [m for m in GRAPH if stage_of(m) < STAGES.index("plots")]
    found = sorted(f"{m} imports {dep}" for m in below for dep in GRAPH[m] if _top(dep) == "plots")
    assert not found, "a figure is drawn by plots, above the stage it shows:\n" + "\n".join(found)


def test_commands_live_in_the_command_line():
    """A stage holds no commands: outside ``diagnostics.cli`` only the help format (``core.cli_help``) imports
    Typer or Click, and no module is called ``_cli``."""
    def imports_typer(module: str) -> bool:
        return any(name.split(".")[0] in ("typer", "click") for node in NODES[module]
                   for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []))

    outside = sorted(m for m in MODULES if not _in_command_line(m) and m != "diagnostics.core.cli_help"
                     and imports_typer(m))
    assert not outside, f"commands outside diagnostics/cli/ (move them to diagnostics/cli/<group>.py): {outside}"
    assert imports_typer("diagnostics.cli") and imports_typer("diagnostics.cli.stats")
    assert not [m for m in MODULES if m.rsplit(".", 1)[-1] == "_cli"]


# --- one home per shared definition -----------------------------------------------------------------------------


def test_labels_and_columns_are_the_schema_objects():
    from diagnostics import stats
    from diagnostics.behave import _predictors as predictors
    from diagnostics.behave import _templates as templates
    from diagnostics.core import schema
    from diagnostics.data import _readers as readers
    from diagnostics.finetune import _mixtures as mixtures
    from diagnostics.finetune import _store as store
    from diagnostics.stats import _bootstrap as bootstrap
    from diagnostics.stats import _table as table

    assert schema.LABELS == ("entailment", "not_entailment")
    assert schema.CLASS_LABELS == ("not_entailment", "entailment")  # class 1 = entailment = ``probability``
    for alias in (table.LABELS, stats.LABELS, templates.LABELS, predictors.LABELS, readers.BINARY, bootstrap.LABELS):
        assert alias is schema.LABELS
    assert mixtures.LABELS is schema.CLASS_LABELS
    assert table.REQUIRED is stats.REQUIRED is schema.PREDICTION_REQUIRED
    assert table.OPTIONAL is schema.PREDICTION_OPTIONAL
    assert schema.TRAINER_COLUMNS == schema.PREDICTION_REQUIRED + ("probability",)
    assert set(schema.TRAINER_COLUMNS) <= set(schema.PREDICTION_REQUIRED + schema.PREDICTION_OPTIONAL)
    assert store.PREDICTION_COLUMNS == list(schema.TRAINER_COLUMNS)


def test_label_names_are_written_only_in_the_schema():
    found = sorted(f"{m}:{n.lineno}" for m in MODULES if m != "diagnostics.core.schema"
                   for n in _strings(m) if n.value in ("entailment", "not_entailment"))
    assert not found, f"label names spelled out (import them from diagnostics.core.schema): {found}"


def test_prediction_columns_are_listed_only_in_the_schema():
    found = []
    for module in MODULES:
        if module == "diagnostics.core.schema":
            continue
        for node in NODES[module]:
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
                if {"example_id", "prediction"} <= values:
                    found.append(f"{module}:{node.lineno}")
    assert not found, f"predictions-table columns listed again (use diagnostics.core.schema): {found}"


def _assigned(name: str) -> list[str]:
    return sorted(m for m in MODULES for n in NODES[m] if isinstance(n, (ast.Assign, ast.AnnAssign))
                  for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                  if isinstance(t, ast.Name) and t.id == name)


def test_file_kinds_are_defined_once():
    from diagnostics.annotate import _io as annotate_io
    from diagnostics.cli import data as data_cli
    from diagnostics.data import _registry as registry

    assert _assigned("KINDS") == ["diagnostics.data._kinds"]
    assert annotate_io.KINDS is registry.KINDS and data_cli.KINDS is registry.KINDS


def test_mcc_is_defined_once():
    defined = sorted(f"{m}.{n.name}" for m in MODULES for n in NODES[m]
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in ("mcc", "mcc_from_counts"))
    assert defined == ["diagnostics.stats._mcc.mcc", "diagnostics.stats._mcc.mcc_from_counts"]
    from diagnostics.finetune import _quality as quality
    from diagnostics.stats import _mcc as mcc
    from diagnostics.stats import _reference as reference

    assert reference.mcc is mcc.mcc and quality._mcc is mcc.mcc


def test_atomic_writes_go_through_io_utils():
    calls = sorted(m for m in MODULES for n in NODES[m]
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "replace"
                   and isinstance(n.func.value, ast.Name) and n.func.value.id == "os")
    assert sorted(set(calls)) == ["diagnostics.core.io_utils"]
    assert _assigned("write_json_atomic") == [] and len([m for m in MODULES for n in NODES[m]
                                                          if isinstance(n, ast.FunctionDef)
                                                          and n.name == "write_json_atomic"]) == 1
    from diagnostics.core import io_utils
    from diagnostics.finetune import _store as store

    assert store.write_json_atomic is io_utils.write_json_atomic


def test_line_aware_yaml_loader_is_defined_once():
    loaders = sorted(m for m in MODULES for n in NODES[m] if isinstance(n, ast.ClassDef)
                     for b in n.bases if isinstance(b, ast.Attribute) and b.attr.endswith("Loader"))
    assert loaders == ["diagnostics.core.yaml_lines"]
    from diagnostics.behave import _yamllines as yamllines
    from diagnostics.core import yaml_lines

    assert yamllines.LineDict is yaml_lines.LineDict and yamllines.line_of is yaml_lines.line_of


@pytest.mark.parametrize("module", ["diagnostics.core.schema", "diagnostics.core.io_utils",
                                    "diagnostics.core.errors"])
def test_foundation_modules_import_nothing_of_the_package(module):
    assert GRAPH[module] == set()


def test_the_yaml_loader_needs_only_the_error_types():
    assert GRAPH["diagnostics.core.yaml_lines"] == {"diagnostics.core.errors"}


def test_the_command_line_starts_without_the_heavy_libraries():
    """``diagnostics --help`` and every command's argument errors need none of them: they load inside commands."""
    import subprocess
    import sys

    heavy = ("scipy", "torch", "transformers", "sklearn", "matplotlib", "seaborn", "spacy", "nbformat", "papermill")
    code = f"import sys, diagnostics.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded


# --- small modules, one settings system -------------------------------------------------------------------------

#: The most lines a module of ``diagnostics`` may have.
MAX_MODULE_LINES = 700


def _lines(module: str) -> int:
    return len(MODULES[module][0].read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_the_line_limit():
    long = sorted(f"{m} ({_lines(m)} lines)" for m in MODULES if _lines(m) > MAX_MODULE_LINES)
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"


def _defined(name: str) -> list[str]:
    return sorted(m for m in MODULES for n in NODES[m]
                  if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)


def test_settings_are_read_and_parsed_in_one_place():
    for name in ("split_override", "split_pair", "apply_overrides", "override_key", "read_settings", "read_document"):
        assert _defined(name) == ["diagnostics.settings._input"], name
    for name in ("ConfigError", "ConfigSource"):
        assert _defined(name) == ["diagnostics.settings._errors"], name
    for name in ("Settings", "Expected", "convert", "convert_fields", "field_problems"):
        assert _defined(name) == ["diagnostics.settings._fields"], name
    # ranges and choices live in each field's metadata (``setting(check=..., choices=...)``), not in side tables
    assert _assigned("_RANGES") == [] and _assigned("_CHOICES") == []
    # every KEY=VALUE option is split by ``split_pair`` (a label map's VALUE=LABEL items split at the last ``=``)
    split = sorted(f"{m}:{n.lineno}" for m in MODULES if m != "diagnostics.settings._input" for n in NODES[m]
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "partition"
                   and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == "=")
    assert not split, f"KEY=VALUE split by hand (use diagnostics.settings.split_pair): {split}"


def test_executors_are_named_once():
    assert _assigned("EXECUTOR_NAMES") == ["diagnostics.finetune._config"]
    assert _assigned("EXECUTORS") == ["diagnostics.finetune._executors"]
    spelled = sorted(f"{m}:{n.lineno}" for m in MODULES for n in NODES[m] if isinstance(n, ast.Tuple)
                     and {"inprocess", "pool", "submitit"} <= {e.value for e in n.elts if isinstance(e, ast.Constant)})
    assert len(spelled) == 1 and spelled[0].startswith("diagnostics.finetune._config:"), spelled
    from diagnostics.finetune import _config as config

    assert config.EXECUTOR_NAMES == ("inprocess", "pool", "submitit")


def _is_registry(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "REGISTRY" or isinstance(node, ast.Attribute) \
        and node.attr == "REGISTRY"


def test_the_dataset_registry_is_changed_only_by_its_module():
    mutators = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}
    found = []
    for module in MODULES:
        if module == "diagnostics.data._registry":
            continue
        for node in NODES[module]:
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            if any(isinstance(t, ast.Subscript) and _is_registry(t.value) for t in targets) \
                    or any(_is_registry(t) for t in targets) \
                    or isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in mutators and _is_registry(node.func.value):
                found.append(f"{module}:{node.lineno}")
    assert not found, f"the dataset registry changed outside diagnostics.data._registry: {found}"
    assert _defined("bind_files") == [], "user files travel as DataRef values; nothing binds them to a name"
    checks = ast.parse("from diagnostics.data import REGISTRY\nREGISTRY['x'] = 1\nREGISTRY.pop('x')\n")
    assert sum(isinstance(n, ast.Assign) and _is_registry(n.targets[0].value) for n in ast.walk(checks)) == 1


STAGE_PACKAGES = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))


@pytest.mark.parametrize("package", STAGE_PACKAGES)
def test_every_stage_package_declares_its_public_names(package):
    tree = ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8"))
    assigned = {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(target, ast.Name)}
    assert "__all__" in assigned, f"diagnostics/{package}/__init__.py defines no __all__"


@pytest.mark.parametrize("package", STAGE_PACKAGES)
def test_no_stage_package_wraps_a_function_in_a_pass_through(package):
    """Public names are exported (eagerly or through the lazy table), never re-wrapped as ``f(*args, **kwargs)``."""
    tree = ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8"))
    wrappers = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                and (node.args.vararg is not None or node.args.kwarg is not None)]
    assert not wrappers, f"diagnostics/{package}/__init__.py: pass-through wrappers {wrappers}"


#: File names of a Hugging Face model folder: written once, in ``diagnostics/models/_folders.py``.
MODEL_FILE_NAMES = {"config.json", "model.safetensors", "model.safetensors.index.json", "pytorch_model.bin"}
#: The run store's own record of a run is also called ``config.json``: that one is not a model's.
RUN_RECORD_MODULES = {"diagnostics.finetune._store"}


def test_model_file_names_are_spelled_only_in_the_models_package():
    offenders = sorted(f"{module}:{node.lineno} {node.value!r}" for module in MODULES
                       if not module.startswith("diagnostics.models")
                       for node in _strings(module) if node.value in MODEL_FILE_NAMES
                       and not (module in RUN_RECORD_MODULES and node.value == "config.json"))
    assert not offenders, f"model file names outside diagnostics/models: {offenders}"


# --- the tests mirror the package ---------------------------------------------------------------------------------

TESTS = ROOT / "tests"


def _imported(path: Path) -> set[str]:
    """Modules ``path`` imports, ``from diagnostics import x`` counted as ``diagnostics.x``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _tests_its_stage(path: Path, stage: str) -> bool:
    """A module of ``tests/<stage>/`` imports that stage; its ``test_cli.py`` may drive it through the command line."""
    imported = _imported(path)
    return (any(m == f"diagnostics.{stage}" or m.startswith(f"diagnostics.{stage}.") for m in imported)
            or (path.name == "test_cli.py" and "diagnostics.cli" in imported))


def test_the_tests_of_a_stage_package_live_in_its_folder():
    """``tests/<stage>/test_*.py`` test ``diagnostics.<stage>`` (``tests/core/`` the foundation's modules); the top
    level holds the whole package's tests, none named for a stage (``test_cli_*.py`` test the command line of every
    stage)."""
    folders = sorted(p.name for p in TESTS.iterdir()
                     if p.is_dir() and p.name not in {"artifacts", "__pycache__"} and not p.name.startswith("."))
    assert set(folders) <= set(STAGE_PACKAGES), f"test folders that are no stage package: {folders}"
    strays = [f"{folder}/{path.name}" for folder in folders for path in sorted((TESTS / folder).glob("*.py"))
              if not path.name.startswith("test_") or not _tests_its_stage(path, folder)]
    assert not strays, f"test modules that do not import the stage of their folder: {strays}"
    stages = set(STAGE_PACKAGES) - {COMMAND_LINE.split(".")[1]}
    stage_named = [path.name for path in TESTS.glob("test_*.py") if path.stem.split("_")[1] in stages]
    assert not stage_named, f"move them to tests/<stage>/: {stage_named}"


# --- one training engine ------------------------------------------------------------------------------------------

def test_one_module_takes_the_run_lock_and_one_training_step_exists():
    """The run lifecycle (lock, done, failed) lives in one module; one function of the engine takes a training step
    (calls ``backward``: the step's device work, run eagerly or captured), one function prepares each step around it,
    and one loop (:func:`fit_runs`) drives it for both recipes."""
    takers = sorted({module for module in MODULES if module != "diagnostics.finetune._run_lock"
                     for node in NODES[module] if isinstance(node, ast.Call)
                     and getattr(node.func, "id", getattr(node.func, "attr", None)) == "RunLock"})
    assert takers == ["diagnostics.finetune._train"], f"modules that take the run lock: {takers}"
    optimizers = sorted(f"{module}.{node.name}" for module in MODULES for node in NODES[module]
                        if isinstance(node, ast.ClassDef) and any(getattr(b, "attr", getattr(b, "id", "")) ==
                                                                  "Optimizer" for b in node.bases))
    assert not optimizers, f"torch optimizers beside the engine's stacked ones: {optimizers}"
    functions = [(module, node) for module in MODULES if module.startswith("diagnostics.finetune")
                 for node in NODES[module] if isinstance(node, ast.FunctionDef)]
    steps = sorted(f"{module}.{node.name}" for module, node in functions
                   if any(isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "backward"
                          for call in ast.walk(node)))
    assert steps == ["diagnostics.finetune._fused._device_step"], f"functions that take a training step: {steps}"
    callers = sorted(f"{module}.{node.name}" for module, node in functions
                     if any(isinstance(call, ast.Call) and getattr(call.func, "id", None) == "_train_step"
                            for call in ast.walk(node)))
    assert callers == ["diagnostics.finetune._fused.fit_runs"], f"training loops: {callers}"


def test_checking_a_plans_runs_needs_no_torch(tmp_path):
    """The notebooks that only read finished runs check the plan first (``require_finished``); that takes no torch
    (a second of start-up per notebook), nor do the run coordinates the executors send to workers."""
    import subprocess
    import sys

    code = ("import sys\nfrom diagnostics.pipeline import ScalePlan\n"
            "from diagnostics.pipeline._runner import unfinished_runs\n"
            f"missing, total = unfinished_runs(ScalePlan.resolve('tiny', {str(tmp_path)!r}))\n"
            "import diagnostics.finetune._run_spec\n"
            "print(len(missing), total, 'torch' in sys.modules)")
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert printed[0] == printed[1] != "0" and printed[2] == "False", printed
