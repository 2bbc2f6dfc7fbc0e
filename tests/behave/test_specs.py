"""The parsed form of a template file: fillers, their surface, the where filter, a test's template and expectation."""

from diagnostics.behave import load_templates
from diagnostics.behave._specs import Filler, entry_matches
from diagnostics.behave._specs import TestSpec as Spec  # not a test class


def test_surface_is_the_number_the_text_or_the_first_form():
    assert Filler(None, value=0).surface == 0 and Filler("Ann", forms={"gent": "Ann's"}).surface == "Ann"
    assert Filler(None, forms={"plural": "cities", "gent": "city's"}).surface == "cities"
    assert Filler("Ann", forms={"gent": "x"}) == Filler("Ann", forms={"gent": "y"})  # forms do not make an entry


def test_entry_matches_every_condition_of_the_filter():
    bob = Filler("Bob", gender="m", tags=("short", "en"), forms={"gent": "Bob's"})
    assert entry_matches(bob, ())
    assert entry_matches(bob, (("gender", "m"), ("tag", "en"), ("gent", "Bob's")))
    assert not entry_matches(bob, (("gender", "m"), ("tag", "fr")))
    assert not entry_matches(bob, (("plural", "Bobs"),)) and not entry_matches(Filler("Ann"), (("gender", "f"),))


def test_a_perturbation_test_reads_the_template_it_perturbs():
    tests = load_templates("en").tests
    mft = next(t for t in tests.values() if t.type == "MFT")
    inv = next(t for t in tests.values() if t.type == "INV")
    dirs = next(t for t in tests.values() if t.type == "DIR")
    assert (mft.template, mft.expectation) == (mft.id, None)
    assert inv.template == inv.of and inv.of in tests and tests[inv.of].type == "MFT"
    assert (inv.expectation, dirs.expectation) == ("same_prediction", "entailment_must_not_stay")
    assert Spec("x", "x", "Negation", "DIR", "en", "t.yaml", 1, of="y").template == "y"
