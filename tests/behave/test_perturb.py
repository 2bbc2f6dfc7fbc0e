"""The perturbations of INV / DIR tests: a typo swaps two inner letters of a word, punctuation stripped at the end."""

from diagnostics.behave._perturb import add_typo, strip_punctuation


def test_typo_and_punctuation_perturbations():
    import random

    rng = random.Random(0)
    typo = add_typo("Anna bought a ticket.", rng)
    assert typo != "Anna bought a ticket." and sorted(typo) == sorted("Anna bought a ticket.")
    assert typo[0] == "A" and len(typo) == len("Anna bought a ticket.")
    assert add_typo("a b c.", rng) is None
    assert strip_punctuation("Anna left.") == "Anna left"
    assert strip_punctuation("Anna left") is None
