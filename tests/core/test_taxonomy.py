import pytest

from diagnostics.core import taxonomy as tx


def test_sizes_and_uniqueness():
    assert len(tx.COARSE) == 4 and len(tx.FINE) == 33 and len(set(tx.FINE)) == 33
    assert sum(len(v) for v in tx.TAXONOMY.values()) == 33


@pytest.mark.parametrize("alias, canonical", [("active_passive", "Active/Passive"), ("NAMED ENTITIES", "Named entities"),
                                              ("non-monotone", "Non-monotone"), ("Anaphora / Coreference", "Anaphora/Coreference")])
def test_fine_aliases(alias, canonical):
    assert tx.canonical_fine(alias) == canonical


@pytest.mark.parametrize("source, key", [("superglue_jsonl", "predicate-argument-structure"),
                                         ("swediagnostics_meta", "predicate_argument_structure"),
                                         ("glue_tsv", "Predicate-Argument Structure")])
def test_coarse_aliases_per_source(source, key):
    assert tx.COARSE_ALIASES[source][key] == "Predicate-Argument Structure"
    assert tx.canonical_coarse(key) == "Predicate-Argument Structure"


def test_unknown_names_get_suggestions():
    with pytest.raises(tx.UnknownCategoryError, match="did you mean 'Quantifiers'"):
        tx.canonical_fine("Quantifers")
    with pytest.raises(tx.UnknownCategoryError) as info:
        tx.canonical_fine("zzz")
    assert info.value.suggestions == []


def test_coarse_of_and_slug():
    assert tx.coarse_of("datives") == "Predicate-Argument Structure"
    assert tx.slug("Symmetry/Collectivity") == "symmetry_collectivity"
    assert len({tx.slug(f) for f in tx.FINE}) == 33
