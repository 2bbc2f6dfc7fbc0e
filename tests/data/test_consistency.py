"""The aligned diagnostic sets agree on labels and categories except where their sources differ."""

from diagnostics import data
from diagnostics.data import compare_diagnostics


def test_diagnostics_share_tags_except_documented_differences():
    axb, axb_sg, lidirus, swe = (data.load(n) for n in ("axb", "axb_superglue", "lidirus", "swediagnostics"))
    assert list(axb["id"]) == [str(i) for i in range(1104)] == list(lidirus["id"]) == list(swe["id"])
    assert (axb["features"] == axb_sg["features"]).all()
    assert (axb["features"] == swe["features"]).all()
    assert (axb["label3"] == swe["label3"]).all()
    differences = compare_diagnostics()
    assert differences[["dataset", "id", "field"]].values.tolist() == [
        ["lidirus", "233", "label"], ["lidirus", "832", "missing categories"]]
    assert differences["reference"].tolist() == ["entailment", ["Redundancy"]]
