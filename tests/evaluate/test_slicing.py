"""Slices by feature of evaluated runs: the annotator's features of a user's set, the same numbers from the command
line and from Python; one split of a set whose ids repeat across splits."""

from __future__ import annotations

import pandas as pd
import pytest

from _cli import invoke_cli
from _nli_heads import PAIRS, classifier, write_pairs

from diagnostics.core.errors import UserInputError
from diagnostics.data import DataRef
from diagnostics.evaluate import evaluate_models, feature_categories, one_split, slice_by_feature


def test_feature_slices_of_three_seeds_from_python_and_the_command_line(tiny_model_dir, tmp_path):
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    models = [classifier(tiny_model_dir, tmp_path / f"seed{s}", ["entailment", "not_entailment"], seed=s)
              for s in (0, 1, 2)]
    evaluated = evaluate_models([str(m) for m in models], [f"rte_en={pairs}"], out=tmp_path / "runs",
                                name="tiny", seed_pattern=r"seed(\d+)", progress=False)
    table = evaluated.predictions
    cache = tmp_path / "annotations"
    slices = slice_by_feature(table, {"rte_en": DataRef("rte_en", "test", str(pairs))}, cache_dir=cache)
    assert set(slices.table["source"]) == {"annotator"} and len(slices.table) > 0
    assert (slices.table["n_with"] + slices.table["n_without"] == len(PAIRS)).all()
    assert (slices.table["n_seeds"] == 3).all()
    assert any(cache.iterdir())  # annotated once, kept

    path = tmp_path / "table.parquet"
    table.to_parquet(path)
    result = invoke_cli("stats", path, "--by", "feature", "--dataset", f"rte_en={pairs}", "--cache", cache,
                        "--out", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    written = pd.read_csv(tmp_path / "out" / "feature_slices.csv")
    ours = slices.table.sort_values("feature").reset_index(drop=True)
    theirs = written.sort_values("feature").reset_index(drop=True)
    assert list(theirs["feature"]) == list(ours["feature"])
    for column in ("mcc_with", "mcc_with_sd", "mcc_without", "accuracy_with", "flipping_with"):
        assert theirs[column].to_numpy() == pytest.approx(ours[column].to_numpy(), nan_ok=True)
    assert "# Slices by feature" in result.stdout
    assert (tmp_path / "out" / "feature_slices.png").stat().st_size > 0

    # the annotator's features as categories: the category statistics and the explorer read the set like a
    # diagnostic set (annotations from the cache)
    from diagnostics.explorer import build_explorer
    from diagnostics.stats import category_scores

    sets = feature_categories(table, {"rte_en": DataRef("rte_en", "test", str(pairs))}, cache_dir=cache)
    scores = category_scores(table, sets, levels=("fine",))
    assert set(scores["category"]) >= set(slices.table["feature"])
    explorer = build_explorer(table, sets, annotations=False)
    assert set(explorer.category_names) >= set(slices.table["feature"])


def test_a_set_whose_ids_repeat_across_splits_is_read_from_one_split():
    from diagnostics.stats import dataset_frame

    rte = dataset_frame("rte")
    assert not rte["id"].is_unique
    assert set(one_split(rte, {"0", "1"}, "rte")["split"]) == {"validation"}
    assert set(one_split(rte, {"0", "2000"}, "rte")["split"]) == {"train"}
    assert set(one_split(rte, {"0"}, "rte", "train")["split"]) == {"train"}
    with pytest.raises(UserInputError, match="--split rte=SPLIT"):
        one_split(rte, {"99999"}, "rte")
