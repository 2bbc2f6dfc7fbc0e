"""Contract tests generated from the registries, in the manner of scikit-learn's common tests.

Every registered dataset, every rules file, every behavioural template file, every name a subpackage exports and
every registered language is checked against the same contracts, parametrized over what the registries list: an
item registered tomorrow is tested without anyone writing a test for it. A kind of item these tests cannot
exercise yet (a user-file format with no bundled donor to build a sample from, a language with no text to
annotate) fails with a message saying what to extend, instead of being skipped.

Column names come from the readers' column lists, labels from :mod:`diagnostics.core.schema`, categories from
:mod:`diagnostics.core.taxonomy`. The only names spelled here are those the package defines no constant for: the two
columns :func:`diagnostics.data.load` adds (``dataset``, ``split``) and the registry kinds ``rte`` / ``diagnostic``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
import textwrap

import pandas as pd
import pytest

import diagnostics
from diagnostics import annotate, behave, data
from diagnostics.annotate._cache import COLUMNS as AUTO_COLUMNS
from diagnostics.annotate._evaluation import DIAGNOSTIC_SETS as ANNOTATE_DIAGNOSTIC_SETS
from diagnostics.core.resources import annotators_dir, project_root
from diagnostics.core.schema import ENTAILMENT, LABELS
from diagnostics.core.taxonomy import COARSE, COARSE_OF, FINE
from diagnostics.data import KINDS, REGISTRY, USER_LANGUAGES, datasets_root, user_dataset
from diagnostics.data import _readers as readers
from diagnostics.finetune import LANGUAGE_DEFAULTS
from diagnostics.probe import DIAGNOSTIC_SETS as PROBE_DIAGNOSTIC_SETS, TRAIN_SETS as PROBE_TRAIN_SETS

# The readers' column lists, in the order data.load documents (id, premise, hypothesis, label, language; diagnostic
# sets add label3 where the source is 3-way, features and coarse).
ID, PREMISE, HYPOTHESIS, LABEL, LANGUAGE = readers.RTE_COLUMNS
LABEL3, FEATURES, COARSE_COLUMN = (c for c in readers.DIAGNOSTIC_COLUMNS if c not in readers.RTE_COLUMNS)
#: Columns data.load adds to every reader's table (no constant names them in the package).
LOAD_COLUMNS = ("dataset", "split")
DATASET, SPLIT = LOAD_COLUMNS
#: Columns an annotation adds: the two the annotation cache keeps, and ``feature_sides`` (feature -> side).
AUTO_COARSE, AUTO_FEATURES = AUTO_COLUMNS
#: Registry kinds: the documented arguments of ``user_dataset`` and the values of ``DatasetSpec.kind``.
RTE_KIND, DIAGNOSTIC_KIND = "rte", "diagnostic"

BUNDLED = sorted(name for name, spec in REGISTRY.items() if spec.folder is not None)
USER_SUPPLIED = sorted(name for name, spec in REGISTRY.items() if spec.folder is None)
BUNDLED_DIAGNOSTICS = [name for name in BUNDLED if REGISTRY[name].kind == DIAGNOSTIC_KIND]
RULES_LANGUAGES = annotate.available_languages()
TEMPLATE_LANGUAGES = behave.available_languages()
SUBPACKAGES = sorted(m.name for m in pkgutil.iter_modules(diagnostics.__path__) if m.ispkg)
EXPORTING = [p for p in SUBPACKAGES if hasattr(importlib.import_module(f"diagnostics.{p}"), "__all__")]
EXPORTS = [(p, n) for p in EXPORTING for n in importlib.import_module(f"diagnostics.{p}").__all__]

#: Records of a bundled file copied into a user file; annotated pairs per language.
SAMPLE_RECORDS = 12
SAMPLE_PAIRS = 12


# ------------------------------------------------------------------------------------------------------ helpers


@pytest.fixture(scope="module")
def loaded():
    """``loaded(name)``: the whole bundled dataset (every split), read once per module; do not modify it."""
    cache: dict[str, pd.DataFrame] = {}

    def get(name: str) -> pd.DataFrame:
        if name not in cache:
            cache[name] = data.load(name)
        return cache[name]

    return get


def _labelled_split(spec, frame: pd.DataFrame) -> str:
    """The first split of a bundled dataset whose records carry labels."""
    return next(s for s in spec.splits if frame.loc[frame[SPLIT] == s, LABEL].notna().all())


def _write_multinli(frame: pd.DataFrame, path) -> None:
    """Write 3-way labelled pairs in the MultiNLI JSONL format that :func:`readers.read_mnli` reads."""
    with open(path, "w", encoding="utf-8") as out:
        for row in frame.itertuples(index=False):
            record = {"pairID": getattr(row, ID), "sentence1": getattr(row, PREMISE),
                      "sentence2": getattr(row, HYPOTHESIS), "gold_label": getattr(row, LABEL3), "genre": "bundled"}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


#: Readers with no bundled dataset in their format -> a writer of that format from a bundled set of the same kind.
CONVERTERS = {readers.read_mnli: _write_multinli}


def _sample_file(spec, folder, loaded) -> tuple:
    """Write a small file in the format of user-supplied ``spec``, built from real bundled records.

    Returns
    -------
    (Path, str, list of str)
        The file, the split of the bundled donor it came from, and the ids it holds in file order.
    """
    same_reader = [REGISTRY[n] for n in BUNDLED
                   if REGISTRY[n].reader is spec.reader and REGISTRY[n].split_column is None]
    same_reader.sort(key=lambda s: s.language != spec.language)  # a donor in the spec's own language first
    if same_reader:
        donor = same_reader[0]
        frame = loaded(donor.name)
        split = _labelled_split(donor, frame)
        source = datasets_root() / donor.folder / donor.splits[split]
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        path = folder / f"{spec.name}{source.suffix}"
        path.write_text("".join(lines[:SAMPLE_RECORDS]), encoding="utf-8")
        ids = frame.loc[frame[SPLIT] == split, ID].head(SAMPLE_RECORDS).tolist()
        return path, split, ids
    writer = CONVERTERS.get(spec.reader)
    donors = [REGISTRY[n] for n in BUNDLED if REGISTRY[n].kind == spec.kind]
    if writer is None or not donors:
        pytest.fail(f"no way to build a sample file for {spec.name!r} (reader {spec.reader.__name__}): add a bundled "
                    "dataset in its format or a writer to CONVERTERS")
    frame = loaded(donors[0].name)
    split = _labelled_split(donors[0], frame)
    rows = frame[frame[SPLIT] == split].head(SAMPLE_RECORDS)
    path = folder / f"{spec.name}.jsonl"
    writer(rows, path)
    return path, split, rows[ID].tolist()


def _check_table(frame: pd.DataFrame, spec, name: str, language: str) -> None:
    """The contract of every table :func:`diagnostics.data.load` returns."""
    required = [*readers.RTE_COLUMNS, *LOAD_COLUMNS]
    if spec.kind == DIAGNOSTIC_KIND:
        required += [FEATURES, COARSE_COLUMN]
    missing = [c for c in required if c not in frame.columns]
    assert not missing, f"{name}: columns {missing} missing from {list(frame.columns)}"
    assert frame.columns.is_unique, f"{name}: duplicate columns {list(frame.columns)}"
    assert len(frame) > 0
    assert frame[ID].map(type).eq(str).all(), f"{name}: ids are not all str"
    for column in (PREMISE, HYPOTHESIS):
        texts = frame[column]
        assert texts.map(lambda t: isinstance(t, str) and bool(t.strip())).all(), f"{name}: empty {column}"
    labels = set(frame[LABEL].dropna())
    assert labels <= set(LABELS), f"{name}: labels {sorted(labels - set(LABELS))} outside {LABELS}"
    if LABEL3 in frame.columns and frame[LABEL3].notna().any():
        three = frame[frame[LABEL3].notna()]
        assert set(three[LABEL3]) <= set(readers.THREE_WAY)
        assert ((three[LABEL3] == ENTAILMENT) == (three[LABEL] == ENTAILMENT)).all(), f"{name}: {LABEL} != collapse"
    assert (frame[LANGUAGE] == language).all(), f"{name}: languages {sorted(set(frame[LANGUAGE]))} != {language!r}"
    assert (frame[DATASET] == name).all()
    for split, ids in frame.groupby(SPLIT)[ID]:
        assert ids.is_unique, f"{name} ({split}): duplicate ids {sorted(ids[ids.duplicated()])[:5]}"


# ------------------------------------------------------------------------------------------ bundled datasets


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_dataset_meets_the_table_contract(name, loaded):
    spec = REGISTRY[name]
    frame = loaded(name)
    _check_table(frame, spec, name, spec.language)
    assert list(dict.fromkeys(frame[SPLIT])) == list(spec.splits), f"{name}: splits differ from the registry's"
    labelled = frame[frame[LABEL].notna()]
    assert set(labelled[LABEL]) == set(LABELS), f"{name}: labelled records do not carry both labels"
    for split, labels in frame.groupby(SPLIT)[LABEL]:
        assert labels.notna().all() or labels.isna().all(), f"{name} ({split}): partly labelled"
    if spec.kind != RTE_KIND:
        assert frame[LABEL].notna().all(), f"{name}: {spec.kind} sets are labelled throughout"


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_split_loads_alone_as_in_the_whole(name, loaded):
    spec = REGISTRY[name]
    split = list(spec.splits)[-1]
    alone = data.load(name, split)
    whole = loaded(name)
    part = whole[whole[SPLIT] == split].reset_index(drop=True)
    assert alone[ID].tolist() == part[ID].tolist()
    with pytest.raises(KeyError, match=name):
        data.load(name, "no_such_split")


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_dataset_has_its_manifest_and_provenance(name):
    spec = REGISTRY[name]
    folder = datasets_root() / spec.folder
    manifest = data.manifest(spec)
    assert manifest["language"] == spec.language
    assert manifest["kind"] == spec.kind
    for key in ("source", "commit", "license"):
        assert str(manifest.get(key, "")).strip(), f"{name}: manifest has no {key}"
    provenance = folder / manifest["provenance"]
    assert provenance.is_file() and provenance.read_text(encoding="utf-8").strip(), f"{provenance} missing or empty"
    listed = manifest["files"]
    missing = sorted(set(spec.splits.values()) - set(listed))
    assert not missing, f"{name}: files {missing} read by the registry but not in the manifest"
    for file_name, entry in listed.items():
        assert (folder / file_name).stat().st_size == entry["bytes"], f"{name}: {file_name} size != manifest"


@pytest.mark.parametrize("name", BUNDLED_DIAGNOSTICS)
def test_bundled_diagnostic_carries_taxonomy_categories(name, loaded):
    frame = loaded(name)
    for features, coarse in zip(frame[FEATURES], frame[COARSE_COLUMN]):
        assert set(features) <= set(FINE), f"{name}: non-canonical features {sorted(set(features) - set(FINE))}"
        assert len(set(features)) == len(features), f"{name}: repeated features {features}"
        assert set(coarse) == {COARSE_OF[f] for f in features}
    seen_coarse = {c for cs in frame[COARSE_COLUMN] for c in cs}
    assert seen_coarse == set(COARSE), f"{name}: coarse categories {sorted(set(COARSE) - seen_coarse)} never occur"


# ------------------------------------------------------------------------------------- user-supplied datasets


@pytest.mark.parametrize("name", USER_SUPPLIED)
def test_user_dataset_without_its_file_names_itself_and_the_remedy(name):
    with pytest.raises(FileNotFoundError) as caught:
        data.load(name)
    message = str(caught.value)
    assert repr(name) in message and "path=" in message, message


@pytest.mark.parametrize("name", USER_SUPPLIED)
def test_user_dataset_reads_a_file_by_path(name, tmp_path, loaded):
    spec = data.get_spec(name)
    path, _, ids = _sample_file(spec, tmp_path, loaded)
    frame = data.load(name, path=path)
    _check_table(frame, spec, name, spec.language)
    assert frame[ID].tolist() == ids
    other = "zz"  # a code no registry entry uses
    assert (data.load(name, path=path, language=other)[LANGUAGE] == other).all()


@pytest.mark.parametrize("name", USER_SUPPLIED)
def test_user_dataset_file_travels_as_a_reference(name, tmp_path, loaded):
    spec = data.get_spec(name)
    path, split, ids = _sample_file(spec, tmp_path, loaded)
    before = dict(REGISTRY)
    frame = data.load(data.DataRef(name, split, str(path)))
    _check_table(frame, spec, name, spec.language)
    assert frame[ID].tolist() == ids and (frame[SPLIT] == split).all()
    assert REGISTRY == before, "reading a user file must not change the registry"
    with pytest.raises(FileNotFoundError):
        data.load(data.DataRef(name, split, str(tmp_path / "absent.jsonl")))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_file_kinds_name_registered_datasets(kind):
    assert KINDS[kind] in REGISTRY, f"--kind {kind} reads with {KINDS[kind]!r}, which is not registered"


# -------------------------------------------------------------------------------------------------- annotators


@pytest.fixture(scope="module")
def template_sets():
    """Language -> (its template set, its suite at seed 0 with 3 cases per test); generated once."""
    return {lang: (behave.load_templates(lang), behave.generate_suite(lang, seed=0, max_per_test=3))
            for lang in TEMPLATE_LANGUAGES}


def _pairs_in(lang: str, loaded, template_sets) -> pd.DataFrame:
    """Real pairs in ``lang``: spread over its bundled diagnostic set, else its behavioural MFT cases."""
    diagnostics_in = [n for n in BUNDLED_DIAGNOSTICS if REGISTRY[n].language == lang]
    if diagnostics_in:
        frame = loaded(diagnostics_in[0])
        return frame.iloc[:: max(len(frame) // SAMPLE_PAIRS, 1)].head(SAMPLE_PAIRS)
    if lang in template_sets:
        cases = [c for c in template_sets[lang][1] if c.label is not None]
        return pd.DataFrame({PREMISE: [c.premise for c in cases], HYPOTHESIS: [c.hypothesis for c in cases]},
                            index=[c.id for c in cases]).head(SAMPLE_PAIRS)
    pytest.fail(f"no text in {lang!r} to annotate: bundle a diagnostic set or behavioural templates for it")


@pytest.fixture(scope="module")
def annotated(loaded, template_sets):
    """``annotated(lang)``: (sample pairs, their annotation), computed once per language."""
    cache: dict[str, tuple] = {}

    def get(lang: str):
        if lang not in cache:
            pairs = _pairs_in(lang, loaded, template_sets)
            cache[lang] = (pairs, annotate.annotate(pairs, lang))
        return cache[lang]

    return get


@pytest.mark.parametrize("lang", RULES_LANGUAGES)
def test_rules_file_loads_for_its_language(lang):
    rules = annotate.load_rules(lang)
    assert rules.language == lang, f"{lang}.yaml declares language {rules.language!r}"
    assert rules.feature_names, f"{lang}.yaml detects no feature"
    assert set(rules.feature_names) <= set(FINE)
    assert annotate.supported_features(lang) == rules.feature_names
    assert set(annotate.get_annotator(lang).features) == set(rules.feature_names)


@pytest.mark.parametrize("lang", RULES_LANGUAGES)
def test_annotator_tags_real_pairs_with_its_taxonomy_features(lang, annotated):
    pairs, out = annotated(lang)
    supported = set(annotate.supported_features(lang))
    assert out.index.equals(pairs.index)
    assert out[pairs.columns].equals(pairs), "annotation changed the input columns"
    added = [c for c in out.columns if c not in pairs.columns]
    assert len(added) == 3 and set(AUTO_COLUMNS) <= set(added), f"{lang}: annotation added {added}"
    (sides_column,) = set(added) - set(AUTO_COLUMNS)
    for features, coarse, sides in zip(out[AUTO_FEATURES], out[AUTO_COARSE], out[sides_column]):
        assert set(features) <= supported, f"{lang}: features {sorted(set(features) - supported)} not in its rules"
        assert len(set(features)) == len(features)
        assert coarse == [c for c in COARSE if c in {COARSE_OF[f] for f in features}]
        assert set(sides) == set(features)
    assert out[AUTO_FEATURES].map(len).sum() > 0, f"{lang}: no feature found in {len(pairs)} real pairs"


@pytest.mark.parametrize("lang", RULES_LANGUAGES)
def test_annotation_is_repeatable(lang, annotated):
    pairs, out = annotated(lang)
    again = annotate.annotate(pairs, lang)
    assert again[AUTO_FEATURES].tolist() == out[AUTO_FEATURES].tolist()


# --------------------------------------------------------------------------------------- behavioural templates


@pytest.mark.parametrize("lang", TEMPLATE_LANGUAGES)
def test_templates_load_for_their_language(lang, template_sets):
    from diagnostics.behave._templates import known_capabilities

    templates, _ = template_sets[lang]
    assert templates.language == lang
    assert len(templates) > 0
    for test in templates.tests.values():
        assert test.capability in known_capabilities(), f"{lang}/{test.id}: capability {test.capability!r}"
        if test.label is not None:
            assert test.label in LABELS
        else:
            assert templates.tests[test.template].label in LABELS, f"{lang}/{test.id} perturbs no labelled test"


@pytest.mark.parametrize("lang", TEMPLATE_LANGUAGES)
def test_every_test_generates_well_formed_cases(lang, template_sets):
    templates, cases = template_sets[lang]
    produced = {c.test for c in cases}
    assert produced == set(templates.tests), f"{lang}: no case for {sorted(set(templates.tests) - produced)}"
    assert len({c.id for c in cases}) == len(cases), f"{lang}: duplicate case ids"
    for case in cases:
        test = templates.tests[case.test]
        assert (case.language, case.capability, case.type) == (lang, test.capability, test.type)
        for text in (case.premise, case.hypothesis):
            assert text.strip() and "{" not in text and "}" not in text, f"{case.id}: {text!r}"
        if test.expectation is None:
            assert case.label in LABELS and case.label == test.label, f"{case.id}: label {case.label!r}"
        else:
            assert case.label is None and case.expectation == test.expectation, case.id
            assert case.original_premise and case.original_hypothesis
            assert (case.premise, case.hypothesis) != (case.original_premise, case.original_hypothesis), case.id


@pytest.mark.parametrize("lang", TEMPLATE_LANGUAGES)
def test_generation_is_determined_by_the_seed(lang, template_sets):
    _, cases = template_sets[lang]
    again = behave.generate_suite(lang, seed=0, max_per_test=3)
    assert [c.to_dict() for c in again] == [c.to_dict() for c in cases]
    other = behave.generate_suite(lang, seed=1, max_per_test=3)
    assert [c.to_dict() for c in other] != [c.to_dict() for c in cases], f"{lang}: the seed changes nothing"


# ---------------------------------------------------------------------------------------------- exported names


@pytest.mark.parametrize("package,name", EXPORTS, ids=[f"{p}.{n}" for p, n in EXPORTS])
def test_exported_name_resolves(package, name):
    module = importlib.import_module(f"diagnostics.{package}")
    getattr(module, name)


@pytest.mark.parametrize("package", EXPORTING)
def test_dir_lists_every_export(package):
    module = importlib.import_module(f"diagnostics.{package}")
    hidden = [n for n in module.__all__ if n not in dir(module)]
    assert not hidden, f"diagnostics.{package}: dir() does not list {hidden}"


@pytest.mark.parametrize("package", EXPORTING)
def test_exports_are_unique_and_unknown_names_raise(package):
    module = importlib.import_module(f"diagnostics.{package}")
    assert len(set(module.__all__)) == len(module.__all__), f"diagnostics.{package}: repeated names in __all__"
    lazy = getattr(module, "_EXPORTS", None)
    if lazy is not None:
        assert set(lazy) == set(module.__all__), f"diagnostics.{package}: lazy table and __all__ differ"
    with pytest.raises(AttributeError, match=f"diagnostics.{package}"):
        getattr(module, "no_such_export")



@pytest.mark.parametrize("package", EXPORTING)
def test_lazy_names_are_not_hidden_by_submodules(package):
    """A lazily exported name equal to a submodule's name would be replaced by the module once that is imported."""
    module = importlib.import_module(f"diagnostics.{package}")
    lazy = getattr(module, "_EXPORTS", {})
    for name, submodule in lazy.items():
        importlib.import_module(f"diagnostics.{package}.{submodule}")
    hidden = [n for n in lazy if inspect.ismodule(getattr(module, n))]
    assert not hidden, f"diagnostics.{package}: {hidden} read as submodules; import them eagerly"


def _deferred_targets(function) -> list[tuple[str, str]]:
    """``(module, name)`` of each relative ``from .module import name`` inside a wrapper function's body."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    package = function.__module__
    return [(f"{package}.{node.module}", alias.name) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module for alias in node.names]


# Functions defined in a package's ``__init__`` that import their implementation when called (read from the module's
# namespace, so collecting them resolves no lazy name).
WRAPPERS = [(p, n) for p, n in EXPORTS
            if inspect.isfunction(obj := vars(importlib.import_module(f"diagnostics.{p}")).get(n))
            and obj.__module__ == f"diagnostics.{p}" and _deferred_targets(obj)]


@pytest.mark.parametrize("package,name", WRAPPERS, ids=[f"{p}.{n}" for p, n in WRAPPERS])
def test_deferred_export_wrapper_reaches_its_target(package, name):
    wrapper = getattr(importlib.import_module(f"diagnostics.{package}"), name)
    for module_name, target in _deferred_targets(wrapper):
        module = importlib.import_module(module_name)
        assert callable(getattr(module, target, None)), \
            f"diagnostics.{package}.{name} calls {module_name}.{target}, which does not exist"


# --------------------------------------------------------------------------------------------------- languages


@pytest.mark.parametrize("lang", USER_LANGUAGES)
def test_registered_language_has_rules_and_templates(lang):
    assert lang in RULES_LANGUAGES, f"no annotators/{lang}.yaml"
    assert lang in TEMPLATE_LANGUAGES, f"no annotators/behave/{lang}.yaml"


@pytest.mark.parametrize("lang", USER_LANGUAGES)
def test_registered_language_has_its_user_dataset_names(lang):
    for kind in (RTE_KIND, DIAGNOSTIC_KIND):
        name = user_dataset(lang, kind)
        assert name in REGISTRY, f"{name} is not registered"
        spec = REGISTRY[name]
        assert (spec.language, spec.kind, spec.folder) == (lang, kind, None)


@pytest.mark.parametrize("lang", USER_LANGUAGES)
def test_language_defaults_name_registered_datasets_of_that_language(lang):
    assert lang in LANGUAGE_DEFAULTS, f"finetune.LANGUAGE_DEFAULTS has no {lang!r}"
    defaults = LANGUAGE_DEFAULTS[lang]
    for ref in (defaults["train"], defaults["validation"]):
        if ref is None:
            continue
        name, _, split = ref.partition(":")
        spec = REGISTRY[name]
        assert (spec.language, spec.kind) == (lang, RTE_KIND), ref
        assert split in spec.splits, ref
    for name in defaults["diagnostics"]:
        spec = REGISTRY[name]
        assert (spec.language, spec.kind) == (lang, DIAGNOSTIC_KIND), name
        assert spec.folder is not None, f"{name}: a default diagnostic set must be bundled"


def test_stages_agree_on_each_languages_datasets():
    defaults_diagnostic = {lang: d["diagnostics"][0] for lang, d in LANGUAGE_DEFAULTS.items() if d["diagnostics"]}
    defaults_train = {lang: d["train"].partition(":")[0] for lang, d in LANGUAGE_DEFAULTS.items() if d["train"]}
    assert ANNOTATE_DIAGNOSTIC_SETS == PROBE_DIAGNOSTIC_SETS == defaults_diagnostic
    assert PROBE_TRAIN_SETS == defaults_train
    bundled_languages = {REGISTRY[n].language for n in BUNDLED_DIAGNOSTICS}
    assert bundled_languages == set(defaults_diagnostic), "a language with a bundled diagnostic set has no default"
    assert {REGISTRY[n].language for n in BUNDLED} <= set(USER_LANGUAGES)
    assert set(LANGUAGE_DEFAULTS) == set(USER_LANGUAGES)


def _doc(path) -> str:
    return path.read_text(encoding="utf-8")


def test_docs_name_the_shipped_languages():
    rules_doc = _doc(annotators_dir() / "README.md")
    named_rules = set(re.findall(r"`([a-z]{2})\.yaml`", rules_doc))
    assert named_rules == set(RULES_LANGUAGES), f"annotators/README.md names {sorted(named_rules)}"
    behave_doc = _doc(annotators_dir() / "behave" / "README.md")
    listed = re.search(r"One file per language \(([^)]*)\)", behave_doc)
    assert listed, "annotators/behave/README.md no longer lists its languages"
    assert set(re.findall(r"[a-z]{2}", listed.group(1))) == set(TEMPLATE_LANGUAGES)


def test_contributing_guide_names_each_languages_datasets():
    guide = _doc(project_root() / "CONTRIBUTING.md")
    section = re.search(r"\*\*Datasets per language\.\*\*(.*?)(?:\n\* |\Z)", guide, re.S)
    assert section, "CONTRIBUTING.md has no 'Datasets per language' entry"
    text = " ".join(section.group(1).split())
    diagnostic = re.search(r"Diagnostic set:(.*?)\(", text)
    train = re.search(r"RTE-style train / validation:(.*?)\(", text)
    assert diagnostic and train, text
    pairs = re.compile(r"([a-z]{2}) → `(\w+)`")
    assert dict(pairs.findall(diagnostic.group(1))) == ANNOTATE_DIAGNOSTIC_SETS
    assert dict(pairs.findall(train.group(1))) == PROBE_TRAIN_SETS
