"""``pipeline --detach``: the scale's unfinished runs go to the cluster and the command returns; once they have
finished, the same command without ``--detach`` trains nothing and writes the report."""

import subprocess
import sys
from types import SimpleNamespace

import pytest

from diagnostics.finetune import ConfigError, find_detached
from diagnostics.finetune._detach import DETACHED_FILE
from diagnostics.pipeline import detach_pipeline

from _cli import ENV, invoke_cli


def test_detach_needs_the_cluster_executor_and_submits_nothing_else(tmp_path):
    result = invoke_cli("pipeline", "--scale", "tiny", "--runs", tmp_path / "runs", "--detach")
    assert result.returncode == 2
    assert "--detach needs the cluster executor submitit, found 'inprocess'" in result.stderr
    assert not list((tmp_path / "runs").rglob(DETACHED_FILE.name))
    assert not list((tmp_path / "runs").rglob("DONE"))
    with pytest.raises(ConfigError, match="found 'inprocess'"):  # the same refusal from Python
        detach_pipeline("tiny", tmp_path / "runs")


@pytest.mark.slow
def test_detached_pipeline_runs_on_its_own_and_the_report_then_trains_nothing(tmp_path):
    """submitit's local cluster: the command returns while its jobs run; ``sweep wait`` follows them to the end;
    the report then reads the finished runs. Slow: each job is a fresh process that imports torch."""
    runs = tmp_path / "runs"
    options = ["--scale", "tiny", "--runs", str(runs), "--set", "seeds=[0]", "--set", "executor=submitit",
               "--set", "executor_options={cluster: local, poll_s: 0.5}"]
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        # files, not pipes: the local cluster's jobs inherit them, a pipe would stay open until they end
        code = subprocess.run([sys.executable, "-m", "diagnostics", "pipeline", *options, "--detach"], env=ENV,
                              stdout=out, stderr=err, timeout=600).returncode
    submitted = SimpleNamespace(stdout=(tmp_path / "out").read_text(), stderr=(tmp_path / "err").read_text())
    assert code == 0, submitted.stderr
    record = find_detached(runs)
    experiments = {path.parent.parent.name for path in runs.rglob(DETACHED_FILE.name)}
    assert experiments == {"base", "extra-32", "presence-negation-0.25", "presence-negation-0.75"}
    assert "logging out or Ctrl-C cancels nothing" in submitted.stdout
    assert "write the report with `diagnostics pipeline --scale tiny" in submitted.stdout
    waited = invoke_cli("sweep", "wait", runs, "--poll-s", "0.5")
    assert waited.returncode == 0, waited.stdout + waited.stderr
    done = sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE"))
    assert len(done) == sum(len(job["runs"]) for job in record.jobs) == 5  # base en + ru, extra en, presence x 2
    report = invoke_cli("pipeline", *options, "--out", tmp_path / "report", "--notebook", "00_datasets")
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "index.html").is_file()
    assert sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE")) == done  # nothing retrained
