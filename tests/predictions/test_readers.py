"""Other tools' prediction files read: lm-evaluation-harness samples (filters, generated answers, choices, both log
layouts), SuperGLUE submissions, Trainer outputs, separators, float ids, logit columns."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from _cli import assert_user_error, invoke_cli
from _predictions_tables import N, import_options, predictions_table, refused_import
from pandas.testing import assert_frame_equal

from diagnostics import data
from diagnostics.core.errors import UserInputError
from diagnostics.core.tables import sniff_separator
from diagnostics.predictions import import_predictions, import_with_report, to_lm_eval, to_trainer


def test_lm_eval_samples_with_several_filters_and_generated_answers(tmp_path):
    known = data.load("axb")
    lines = []
    for i, row in known.iterrows():
        gold = "True" if row["label"] == "entailment" else "False"
        for name, answer in (("strict", gold), ("loose", "True")):
            lines.append(json.dumps({"doc_id": i, "doc": {"sentence1": row["premise"], "sentence2": row["hypothesis"]},
                                     "target": gold, "resps": [[answer + "."]], "filtered_resps": [answer],
                                     "filter": name}))
    path = tmp_path / "samples_axb_2024.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserInputError, match="2 filters"):
        import_predictions(path, "axb")
    got = import_predictions(path, "axb", lm_eval_filter="strict", label_map="True=entailment,False=not_entailment")
    assert (got["prediction"] == known["label"]).all()
    loose = import_predictions(path, "axb", lm_eval_filter="loose", label_map="True=entailment,False=not_entailment")
    assert (loose["prediction"] == "entailment").all()


def test_lm_eval_choices_map_by_index_or_by_their_text(tmp_path):
    table = predictions_table("axb", seeds=[0])
    (path,) = to_lm_eval(table, tmp_path)
    by_text = import_predictions(path, "axb", label_map="True=entailment,False=not_entailment", **import_options("axb"))
    assert_frame_equal(by_text, table)
    swapped = refused_import(path, "axb", label_map="1=entailment,0=not_entailment")
    assert len(swapped.label_disagreements) == N


def test_lm_eval_samples_in_the_newer_log_layout(tmp_path):
    """Newer harness versions write scores as strings, arguments as a dict, and hashes beside them."""
    table = predictions_table("swediagnostics", seeds=[0])
    (path,) = to_lm_eval(table, tmp_path)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["filtered_resps"] = [[str(ll), str(greedy)] for ll, greedy in record["filtered_resps"]]
        record["resps"] = [[[str(ll), str(greedy)]] for (ll, greedy), in record["resps"]]
        record["arguments"] = {f"gen_args_{i}": {"arg_0": ctx, "arg_1": cont}
                               for i, (ctx, cont) in enumerate(record["arguments"])}
        record.update(doc_hash="d", prompt_hash="p", target_hash="t")
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    result = import_with_report(path, "swediagnostics", **import_options("swediagnostics"))
    assert_frame_equal(result.table, table)
    assert any("0 (' True') -> entailment" in note for note in result.notes)


@pytest.mark.parametrize("dataset", ["axb", "lidirus"])
def test_a_superglue_submission_file(dataset, tmp_path):
    """A SuperGLUE / jiant submission (``AX-b.jsonl``: idx and the *predicted* label) maps its label as prediction."""
    table = predictions_table(dataset, seeds=[0], probability=False)
    path = tmp_path / "AX-b.jsonl"
    path.write_text("".join(json.dumps({"idx": int(i), "label": p}) + "\n"
                            for i, p in zip(table["example_id"], table["prediction"])), encoding="utf-8")
    assert_frame_equal(import_predictions(path, dataset, columns={"prediction": "label"}, **import_options(dataset)),
                       table)


def test_a_trainer_output_must_cover_the_dataset_in_its_order(tmp_path):
    table = predictions_table("axb", seeds=[0])
    (path,) = to_trainer(table, tmp_path, fmt="npz")
    with np.load(path) as bundle:
        np.save(tmp_path / "short.npy", bundle["predictions"][:-1])
        np.save(tmp_path / "three.npy", np.column_stack([bundle["predictions"], bundle["predictions"][:, :1]]))
    with pytest.raises(UserInputError, match="1103 rows of scores, the dataset has 1104"):
        import_predictions(tmp_path / "short.npy", "axb")
    with pytest.raises(UserInputError, match="3 scores per row and no label map"):
        import_predictions(tmp_path / "three.npy", "axb")
    ids = list(reversed(table["example_id"]))
    with np.load(path) as bundle:
        np.save(tmp_path / "reversed.npy", bundle["predictions"][::-1])
    (tmp_path / "order.txt").write_text("\n".join(ids) + "\n", encoding="utf-8")
    assert_frame_equal(import_predictions(tmp_path / "reversed.npy", "axb", order=tmp_path / "order.txt",
                                          **import_options("axb")), table)


def test_the_separator_is_sniffed(tmp_path):
    for sep in (",", "\t", ";", "|"):
        path = tmp_path / "s.txt"
        path.write_text(f'id{sep}prediction\n1{sep}"a, b; c"\n2{sep}x\n', encoding="utf-8")
        assert sniff_separator(path) == sep


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_a_float_id_matches_in_every_format(tmp_path, suffix):
    table = predictions_table("axb", seeds=[0], probability=False)
    frame = pd.DataFrame({"id": table["example_id"].astype(float), "prediction": table["prediction"]})
    path = tmp_path / f"p{suffix}"
    {".csv": lambda: frame.to_csv(path, index=False), ".parquet": lambda: frame.to_parquet(path),
     ".jsonl": lambda: frame.to_json(path, orient="records", lines=True)}[suffix]()
    if suffix == ".csv":
        assert "3.0" in path.read_text()
    got = import_predictions(path, "axb", **import_options("axb"))
    assert_frame_equal(got, table.drop(columns="probability", errors="ignore"))


def test_a_parquet_prediction_column_of_logits_is_read_as_logits(tmp_path):
    table = predictions_table("axb", seeds=[0], probability=False)
    rng = np.random.default_rng(0)
    logits = [np.array([0.0, 1.0 + x]) if p == "entailment" else np.array([1.0 + x, 0.0])
              for p, x in zip(table["prediction"], rng.random(len(table)))]
    pd.DataFrame({"id": table["example_id"], "prediction": logits}).to_parquet(tmp_path / "p.parquet")
    out = tmp_path / "t.parquet"
    done = invoke_cli("predictions", "import", tmp_path / "p.parquet", "--dataset", "axb", "--experiment", "base",
                   "--model", "m", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "column prediction holds a score vector per row: read as logits" in done.stdout
    assert "logits 0 -> not_entailment, 1 -> entailment" in done.stdout
    assert_frame_equal(pd.read_parquet(out).drop(columns="probability"), table.drop(columns="probability",
                                                                                    errors="ignore"))
    three = pd.DataFrame({"id": table["example_id"], "prediction": [np.zeros(3)] * len(table)})
    three.to_parquet(tmp_path / "three.parquet")
    refused = invoke_cli("predictions", "import", tmp_path / "three.parquet", "--dataset", "axb", "--out",
                      tmp_path / "u.parquet", cwd=tmp_path)
    assert_user_error(refused, "3 scores per row and no label map")
