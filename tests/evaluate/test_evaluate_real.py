"""``evaluate`` on the embedded real model: checkpoints a sweep saved score as the sweep scored them, and three of
them evaluated as three seeds are a setting that the statistics and ``compare`` read like trained runs."""

from __future__ import annotations

import numpy as np
import pytest

from diagnostics.evaluate import evaluate_models

pytestmark = pytest.mark.slow


def test_sweep_checkpoints_evaluated_as_seeds_give_the_sweeps_predictions(embedded_model_dir, tmp_path):
    from diagnostics.finetune import SweepConfig, collect_predictions, list_runs, run_sweep
    from diagnostics.predictions import compare_tables
    from diagnostics.stats import category_scores, stability

    # the demo recipe (top-2 layers on cached lower-layer states, one epoch), shortened; float32 states and fp32
    # compute so that the sweep's own predictions are those of the full checkpoint
    config = SweepConfig(output_dir=str(tmp_path / "runs"), experiment="demo",
                         models=[{"name": "embedded", "path": str(embedded_model_dir)}], languages=["en"],
                         seeds=[0, 1, 2], train_size=64, max_seq_length=128, batch_size=16, lr=1e-4,
                         max_epochs=1, train_top_k_layers=2, feature_dtype="float32", precision="fp32",
                         length_bucketing=True, save_checkpoint=True, selection_metric="mcc", progress=False)
    assert set(run_sweep(config)["state"]) == {"done"}
    runs = list_runs(tmp_path / "runs" / "demo")
    checkpoints = [str(run.model_folder()) for run in runs]
    evaluated = evaluate_models(checkpoints, ["axb"], out=tmp_path / "runs", progress=False)
    assert evaluated.runs["seed"].tolist() == [0, 1, 2] and set(evaluated.runs["model"]) == {"embedded"}

    table = collect_predictions(tmp_path / "runs")
    trained = table[(table["experiment"] == "demo") & (table["dataset"] == "axb")]
    ours = table[table["experiment"] == "evaluated"]
    for seed in (0, 1, 2):
        a = trained[trained["seed"] == seed].set_index("example_id")
        b = ours[ours["seed"] == seed].set_index("example_id").loc[a.index]
        assert len(b) == len(a) == 1104
        assert np.abs(a["probability"].to_numpy() - b["probability"].to_numpy()).max() < 1e-5
        assert (a["prediction"] == b["prediction"]).mean() > 0.999  # exact ties at 0.5 aside

    sigma = stability(category_scores(ours))
    assert sigma["std"].notna().any() and (sigma["n_seeds"] == 3).all()
    result = compare_tables(trained, ours, select_a={"experiment": "demo"}, select_b={"experiment": "evaluated"},
                            n_boot=50, seed=0)
    assert np.nanmax(np.abs(result.table["delta"].to_numpy())) < 1e-3
