"""The explorer's data as JSON for the report's page: saved, read back, a cut file refused; the predictions
round-trip."""

from __future__ import annotations

import json

import pytest

from diagnostics import explorer as ex
from diagnostics.core.schema import ENTAILMENT

from _explorer_data import category_members, explorer_inputs


@pytest.fixture(scope="module")
def setup():
    return explorer_inputs()


@pytest.fixture()
def model(setup):
    predictions, datasets, annotations = setup
    return ex.build_explorer(predictions, datasets, annotations=annotations)


def test_a_saved_payload_reads_back_and_a_cut_one_is_refused_in_one_line(model, tmp_path):
    from diagnostics.core.errors import UserInputError

    path = model.save_payload(tmp_path)
    assert ex.read_payload(path) == json.loads(json.dumps(model.payload()))
    cut = tmp_path / "cut.json"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(UserInputError, match="cut short") as caught:
        ex.read_payload(cut)
    assert str(cut) in str(caught.value) and "\n" not in str(caught.value)


def test_payload_round_trips_the_predictions(model, setup, tmp_path):
    predictions, datasets, _ = setup
    path = model.save_payload(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert path.name == ex.PAYLOAD_NAME and data["categories"] == model.category_names
    for setting in data["settings"]:
        ds = data["datasets"][setting["dataset"]]
        k = len(setting["seeds"])
        rows = predictions[(predictions["language"] == setting["language"])
                           & (predictions["experiment"] == setting["experiment"])]
        for row in rows.sample(60, random_state=0).itertuples(index=False):
            r = ds["ids"].index(row.example_id)
            j = setting["seeds"].index(str(row.seed))
            assert setting["pred"][r * k + j] == ("1" if row.prediction == ENTAILMENT else "0")
            assert setting["prob"][r * k + j] == round(round(float(row.probability), 3) * 1000)  # 3 digits shown
            assert ds["texts"][ds["premise"][r]] == datasets[ds["name"]].set_index("id").at[row.example_id,
                                                                                            "premise"]
        for c, category in enumerate(data["categories"]):
            members = {ds["ids"][r] for r in ds["members"][c]}
            assert members == category_members(datasets[ds["name"]], category)
