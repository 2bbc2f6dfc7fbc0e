"""Plan before work: the paper scale's dry run holds the study's design and run counts, says which datasets stand in
for the study's, names what stops it, and `sweep run --dry-run` says what a real run would do."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from _paper_inputs import STUDY_SIZES, data_options, write_language_files, write_mnli_tsv
from diagnostics.cli import app
from diagnostics.pipeline._inputs import PipelineInputs
from diagnostics.pipeline import ScalePlan
from diagnostics.finetune import expected_stop
from diagnostics.pipeline._plan import ASSUMED_BEST_CHECK, PLAN_RATES, check_plan

@pytest.fixture(scope="module")
def tiny_model_option(tiny_model_dir):
    return ["--set", f"models=[{{name: tiny, path: {tiny_model_dir}}}]"]


@pytest.fixture(scope="module")
def language_files(tmp_path_factory):
    return write_language_files(tmp_path_factory.mktemp("languages"))


def dry_run(args, runs):
    return CliRunner().invoke(app, ["pipeline", "--scale", "paper", "--runs", str(runs), "--dry-run", *args])


def test_paper_dry_run_without_mnli_names_mnli_and_data_option(tmp_path, tiny_model_option):
    result = dry_run(tiny_model_option, tmp_path / "runs")
    assert result.exit_code == 2
    problems = [line for line in result.output.splitlines() if line.startswith("problem:")]
    assert len(problems) == 1 and "mnli" in problems[0] and "--data mnli=" in problems[0]
    assert "Traceback" not in result.output
    notices = [line for line in result.output.splitlines() if line.startswith("notice:")]
    assert sorted(n.split()[1] for n in notices) == ["de:", "fr:", "sv:"]  # no training data: skipped, said so


def test_paper_dry_run_without_local_model_names_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    result = dry_run([], tmp_path / "runs")
    assert result.exit_code == 2
    assert any("bert-base-multilingual-cased" in line and "not available locally" in line
               for line in result.output.splitlines() if line.startswith("problem:"))


def test_paper_plan_with_full_size_mnli_holds_the_study_counts(tmp_path, tiny_model_option, language_files):
    from diagnostics.finetune import total_steps
    from diagnostics.pipeline import experiment_configs

    mnli = write_mnli_tsv(tmp_path / "train.tsv", 392702)  # MNLI train's size
    result = dry_run([*tiny_model_option, "--data", f"mnli={mnli}", *data_options(language_files), "--json"],
                     tmp_path / "runs")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["problems"] == []
    # sv is scored on SweDiagnostics, not on the study's own Swedish translation: said, and recorded per language
    assert len(plan["notices"]) == 1 and plan["notices"][0].startswith("sv: scored on SweDiagnostics (SuperLim 2)")
    assert "'sv (SweDiagnostics)'" in plan["notices"][0]
    assert [e["label"] for e in plan["substitutions"]["sv"]] == ["sv (SweDiagnostics)"]
    assert set(plan["substitutions"]) == {"sv"}
    counts = {name: entry["runs"] for name, entry in plan["counts"].items()}
    languages, seeds = 5, 6
    assert counts["base"] == seeds * languages
    assert sorted(int(n.split("-")[1]) for n in counts if n.startswith("extra-")) == list(STUDY_SIZES)
    # §5.3: the eight sizes for English and Russian (Fig. 4), RTE + 374k MNLI for every language (Table 4, Fig. 3)
    extra_languages = {n: {r["language"] for r in plan["runs"] if r["experiment"] == n} for n in counts
                       if n.startswith("extra-")}
    assert extra_languages.pop("extra-374000") == {"en", "ru", "fr", "de", "sv"}
    assert all(found == {"en", "ru"} for found in extra_languages.values())
    assert sum(v for n, v in counts.items() if n.startswith("extra-")) == (8 * 2 + 3) * seeds == 114
    assert sum(v for n, v in counts.items() if n.startswith("presence-")) == 2 * 4 * 3 * seeds == 144
    runs = plan["runs"]
    assert len(runs) == 30 + 114 + 144 == 288
    assert {r["language"] for r in runs if r["experiment"].startswith("presence-")} == {"en", "ru"}
    # the cost is the training loop's own step budget times the batch size, not a sum of its own
    inputs = PipelineInputs({**language_files, "mnli": str(mnli)}, tiny_model_option[1:])
    configs = experiment_configs(ScalePlan.resolve("paper", tmp_path / "runs", inputs))
    for run in (runs[0], next(r for r in runs if r["experiment"] == "extra-374000")):
        config = configs[run["experiment"]]
        assert run["max_steps"] == total_steps(config, run["train_pairs"])
        assert run["max_pair_epochs"] == run["max_steps"] * config.batch_size
    assert plan["cost"]["max_pair_epochs"] == sum(r["max_pair_epochs"] for r in runs)
    fr = next(r for r in runs if r["experiment"] == "extra-374000" and r["language"] == "fr")
    assert fr["mixture"] == [{"source": "rte_fr", "size": 80}, {"source": "mnli", "size": 374000}]
    conj = next(r for r in runs if r["experiment"] == "presence-conjunction-0.5" and r["language"] == "ru")
    assert conj["mixture"][0] == {"source": "terra:train", "size": 2616}  # the whole TERRa train set
    assert conj["mixture"][1] == {"source": "mnli", "size": 10000, "feature": "Conjunction", "feature_share": 0.5}
    assert all(set(r) >= {"experiment", "language", "seed", "model", "mixture", "state"} for r in runs)
    assert plan["cost"]["runs_to_train"] == 288 and plan["cost"]["max_pair_epochs"] > 0
    # each reading of the validation schedule priced from the same step budget; the config's own is marked
    schedules = plan["schedules"]
    assert list(schedules) == ["russiansuperglue", "jiant_superglue", "per_epoch"]
    assert [name for name, entry in schedules.items() if entry["chosen"]] == ["russiansuperglue"]
    assert schedules["russiansuperglue"]["max_pairs"] == plan["cost"]["max_pair_epochs"]
    for name, entry in schedules.items():
        pairs = sum(total_steps(configs[r["experiment"]], r["train_pairs"], name) * 4 for r in runs)
        assert entry["runs"] == 288 and entry["max_pairs"] == pairs
        assert entry["hours"] == {str(rate): round(pairs / rate / 3600, 1) for rate in PLAN_RATES}
    # 625-step checks capped at ten end every run by 25,000 pairs; the other readings train the MNLI mixtures whole
    assert schedules["russiansuperglue"]["max_pairs"] <= 288 * 25_000
    assert schedules["jiant_superglue"]["max_pairs"] > 20 * schedules["russiansuperglue"]["max_pairs"]
    # with early stopping: the stopping rules run from the assumed best check (no finished runs in this store)
    assert plan["best_check"]["check"] == ASSUMED_BEST_CHECK and "assumed" in plan["best_check"]["source"]
    for name, entry in schedules.items():
        expected = sum(expected_stop(configs[r["experiment"]], r["train_pairs"], name, ASSUMED_BEST_CHECK) * 4
                       for r in runs)
        assert entry["expected_pairs"] == expected <= entry["max_pairs"]
    assert schedules["russiansuperglue"]["expected_pairs"] == schedules["russiansuperglue"]["max_pairs"]
    # patience ends the long MNLI runs: the gap between the readings shrinks from over 20x to a few times
    gap = schedules["jiant_superglue"]["expected_pairs"] / schedules["russiansuperglue"]["expected_pairs"]
    assert 1 < gap < 5
    # what runs train on: 625-step checks capped at ten read the first 25,000 pairs of every large mixture, all of
    # RTE / TERRa when it comes first, its share of the mixture when the mixture is shuffled
    rows = [row for row in plan["exposure"] if row["reading"] == "russiansuperglue" and row["total"] > 50_000]
    assert len(rows) == 5 * 2 + 3 and all(row["pairs"] == 25_000 and row["chosen"] for row in rows)
    assert all(row["own_pairs"]["train_first"] == row["own"] for row in rows)
    assert all(abs(row["own_share"]["shuffled"] - row["own"] / row["total"]) < 1e-4 for row in rows)
    text = dry_run([*tiny_model_option, "--data", f"mnli={mnli}", *data_options(language_files), "--set", "fuse=8"],
                   tmp_path / "runs")
    lines = text.output.splitlines()
    assert any(line.strip().startswith("russiansuperglue") and line.endswith("<- this plan") for line in lines)
    # groups fill across the plan: every experiment and language shares the model and step shapes, so one job
    assert "job 1: 288 runs in 8 slots (21 experiments, languages de, en, fr, ru, sv)" in lines
    assert any(line.startswith("total: 288 runs") and "in 1 jobs (fuse=8;" in line for line in lines)


def without_fr_diagnostic(language_files):
    return {key: path for key, path in language_files.items() if key != "fr.diagnostics"}


def test_language_without_a_diagnostic_set_stops_the_plan(tmp_path, tiny_model_dir, language_files):
    inputs = PipelineInputs(without_fr_diagnostic(language_files), [f"models=[{{name: tiny, path: {tiny_model_dir}}}]"])
    plan = check_plan(ScalePlan.resolve("paper", tmp_path, inputs))
    fr = [p for p in plan.problems if p.startswith("fr:")]
    assert len(fr) == 1 and "no diagnostic set" in fr[0] and "--data fr.diagnostics=PATH" in fr[0]
    assert "--set score_missing=skip" in fr[0]
    assert not any(p.startswith("de:") for p in plan.problems)  # de has its diagnostic file


def test_score_missing_skip_leaves_the_language_out_and_train_keeps_it(tmp_path, tiny_model_dir, language_files):
    files = without_fr_diagnostic(language_files)
    model = f"models=[{{name: tiny, path: {tiny_model_dir}}}]"
    skipped = check_plan(ScalePlan.resolve("paper", tmp_path, PipelineInputs(files, [model, "score_missing=skip"])))
    assert not any(p.startswith("fr:") for p in skipped.problems)
    assert [n for n in skipped.notices if n.startswith("fr:")] == [
        next(n for n in skipped.notices if n.startswith("fr: skipped (no diagnostic set"))]
    assert {r["language"] for r in skipped.runs} == {"en", "ru", "de", "sv"}
    trained = check_plan(ScalePlan.resolve("paper", tmp_path, PipelineInputs(files, [model, "score_missing=train"])))
    assert not any(p.startswith("fr:") for p in trained.problems)
    assert any(n.startswith("fr: trains without a diagnostic set") for n in trained.notices)
    assert {r["experiment"] for r in trained.runs if r["language"] == "fr"} == {"base", "extra-374000"}


def test_pipeline_json_records_the_substitutions(tmp_path, tiny_model_dir, language_files, capsys):
    from diagnostics.pipeline._inputs import load_inputs, load_substitutions
    from diagnostics.pipeline._runner import prepare

    mnli = write_mnli_tsv(tmp_path / "train.tsv", 100)
    inputs = PipelineInputs({**language_files, "mnli": str(mnli)},
                            [f"models=[{{name: tiny, path: {tiny_model_dir}}}]", "extra_sizes=[40]",
                             "presence_shares=[]", "seeds=[0]"])
    runs = tmp_path / "runs"
    prepare(ScalePlan.resolve("paper", runs, inputs))
    assert "notice: sv: scored on SweDiagnostics" in capsys.readouterr().err  # the real run says it too
    assert load_substitutions(runs) == {"sv": [{"dataset": "swediagnostics", "role": "diagnostic",
                                                "name": "SweDiagnostics (SuperLim 2)", "label": "sv (SweDiagnostics)",
                                                "instead_of": "the study's Swedish diagnostic (the authors' "
                                                              "translation of the English set, not public)"}]}
    assert load_inputs(runs).data["mnli"] == str(mnli)  # the record still reads back as the inputs
    sick = check_plan(ScalePlan.resolve("demo", tmp_path / "demo", PipelineInputs({}, ["languages=[en]", "seeds=[0]"])))
    assert [e["dataset"] for e in sick.substitutions["en"]] == ["sick"]
    assert any(n.startswith("extra English data (en): the bundled SICK stands in for MNLI") for n in sick.notices)


def test_too_small_mnli_names_the_sizes_it_cannot_draw(tmp_path, tiny_model_option):
    mnli = write_mnli_tsv(tmp_path / "train.tsv", 7000)
    result = dry_run([*tiny_model_option, "--data", f"mnli={mnli}"], tmp_path / "runs")
    assert result.exit_code == 2
    problems = [line for line in result.output.splitlines() if line.startswith("problem:")]
    too_small = [p for p in problems if "found 7000" in p]
    asked = sorted(int(p.split("asked for ")[1].split()[0]) for p in too_small)
    assert asked == [10000, 50000, 100000, 200000, 250000, 374000]  # 1000 and 5000 fit
    ten_k = next(p for p in too_small if "asked for 10000 " in p)
    assert "extra-10000" in ten_k and "presence-negation-0.25" in ten_k and "--data mnli=" in ten_k


def test_sick_is_an_explicit_stand_in_never_drawn_past_its_size(tmp_path, tiny_model_option):
    result = dry_run([*tiny_model_option, "--set", "extra_source=sick"], tmp_path / "runs")
    assert result.exit_code == 2
    problems = [line for line in result.output.splitlines() if line.startswith("problem:")]
    assert problems and all("found 4439" in p for p in problems)
    ok = dry_run([*tiny_model_option, "--set", "extra_source=sick", "--set", "extra_sizes=[1000,4439]",
                  "--set", "presence_extra_size=1000"], tmp_path / "runs")
    assert ok.exit_code == 0, ok.output


def test_bad_data_key_and_unknown_setting_are_one_line_errors(tmp_path):
    result = dry_run(["--data", "fr.trian=x.jsonl"], tmp_path / "runs")
    assert result.exit_code == 2 and "did you mean 'fr.train'" in result.output
    result = dry_run(["--set", "extra_sizez=[1]"], tmp_path / "runs")
    assert result.exit_code == 2 and "extra_sizez" in result.output and "Traceback" not in result.output


def test_user_diagnostics_of_two_languages_carry_distinct_dataset_names(tmp_path, language_files, tiny_model_dir):
    from diagnostics import data, stats
    from diagnostics.pipeline import experiment_configs, plan_datasets

    inputs = PipelineInputs(language_files, [f"models=[{{name: tiny, path: {tiny_model_dir}}}]"])
    plan = ScalePlan.resolve("paper", tmp_path, inputs)
    base = experiment_configs(plan, ("base",))["base"]
    names = {lang: [ref.key for ref in base.language_data(lang)["diagnostics"]] for lang in base.languages}
    assert names["fr"] == ["diagnostic_fr"] and names["de"] == ["diagnostic_de"] and names["sv"] == ["swediagnostics"]
    # the files travel as values (nothing is registered): the statistics take them as the plan names them
    before = dict(data.REGISTRY)
    datasets = plan_datasets(plan)
    assert data.REGISTRY == before and set(datasets) == {"diagnostic_fr", "diagnostic_de"}
    frame = data.load(datasets["diagnostic_fr"])
    predictions = frame.assign(experiment="base", language="fr", model="tiny", seed=0, dataset="diagnostic_fr",
                               example_id=frame["id"], prediction=frame["label"], probability=0.5)
    scores = stats.category_scores(predictions, datasets)
    assert (scores.loc[scores["level"] == "fine", "mcc"] == 1.0).all()


def test_plan_lists_done_runs_and_settings_conflicts(tmp_path, tiny_model_dir):
    from diagnostics.finetune import run_sweep

    # one torch thread (two workers share two cores: more threads spin at OpenMP barriers; not in the run hash)
    inputs = PipelineInputs({}, [f"models=[{{name: tiny, path: {tiny_model_dir}}}]", "seeds=[0]", "languages=[en]",
                                 "train_size=16", "max_seq_length=32", "num_threads=1"])
    base = ScalePlan.resolve("tiny", tmp_path, inputs).base
    run_sweep(base)
    plan = check_plan(ScalePlan.resolve("tiny", tmp_path, inputs), only=("base",))
    assert [r["state"] for r in plan.runs] == ["done"] and not plan.problems
    changed = PipelineInputs({}, inputs.overrides + ["lr=0.5"])
    plan = check_plan(ScalePlan.resolve("tiny", tmp_path, changed), only=("base",))
    assert [r["state"] for r in plan.runs] == ["conflict"]
    assert len(plan.problems) == 1 and "lr" in plan.problems[0]


def test_sweep_dry_run_says_a_changed_run_is_refused(tmp_path, tiny_model_dir):
    import yaml

    from diagnostics.finetune import load_config, run_sweep

    values = dict(experiment="s", output_dir=str(tmp_path / "runs"),
                  models=[{"name": "tiny", "path": str(tiny_model_dir)}], languages=["en"], seeds=[0], train_size=16,
                  max_seq_length=32, max_epochs=1, progress=False, num_threads=1)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(values))
    run_sweep(load_config(path))
    same = CliRunner().invoke(app, ["sweep", "run", str(path), "--dry-run"])
    assert same.exit_code == 0 and same.output.split()[-1] == "done"
    changed = CliRunner().invoke(app, ["sweep", "run", str(path), "--dry-run", "--set", "lr=0.5"])
    assert changed.exit_code == 2 and "conflict" in changed.output and "lr" in changed.output
    with pytest.raises(ValueError, match="other settings"):  # what the real run does with it
        run_sweep(load_config(path, ["lr=0.5"]))


def test_real_run_refuses_before_anything_trains(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["pipeline", "--scale", "paper", "--runs", str(runs),
                                      "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 2 and len(result.output.splitlines()) == 2  # one line per problem, nothing else
    assert any("mnli" in e for e in errors) and any("bert-base-multilingual-cased" in e for e in errors)
    assert not runs.exists() or not any(runs.rglob("seed=*"))


def test_stats_command_scores_a_user_diagnostic_named_with_its_file(tmp_path, language_files):
    from diagnostics import data

    frame = data.load("diagnostic_format", path=language_files["de.diagnostics"], language="de")
    table = frame.assign(experiment="base", language="de", model="m", seed=0, dataset="diagnostic_de",
                         example_id=frame["id"], prediction=frame["label"])
    path = tmp_path / "predictions.csv"
    table[["experiment", "language", "model", "seed", "dataset", "example_id", "label", "prediction"]].to_csv(path,
                                                                                                             index=False)
    before = dict(data.REGISTRY)
    ok = CliRunner().invoke(app, ["stats", str(path), "--out", str(tmp_path / "out"),
                                  "--dataset", f"diagnostic_de={language_files['de.diagnostics']}"])
    assert ok.exit_code == 0, ok.output
    assert data.REGISTRY == before  # the file travelled as a value: nothing was registered
    assert "1.000" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    bad = CliRunner().invoke(app, ["stats", str(path), "--dataset", "diagnostic_xx=nowhere.jsonl"])
    assert bad.exit_code == 2 and "diagnostic_xx" in bad.output and "Traceback" not in bad.output
