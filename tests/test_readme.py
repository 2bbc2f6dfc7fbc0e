"""The README's figures are the code's: the paper scale's run counts, hours and validation-schedule reading agree
with `diagnostics pipeline --scale paper --dry-run` and `configs/paper.yaml`; every link in it resolves."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from typer.testing import CliRunner

from _paper_inputs import data_options, write_language_files
from _paths import ROOT
from diagnostics.cli import app

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _paper_paragraph() -> str:
    match = re.search(r"\*\*Paper scale\*\*(.+?)\n\n", README, re.S)
    assert match, "README: the **Paper scale** paragraph is gone"
    return " ".join(match.group(1).split())


def _dry_run(tmp_path, *args: str) -> dict:
    result = CliRunner().invoke(app, ["pipeline", "--scale", "paper", "--runs", str(tmp_path / "runs"), "--dry-run",
                                      "--json", *args])
    assert result.exit_code in (0, 2), result.output  # 2: problems (no MNLI file, no local mBERT), plan still printed
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """The dry run as a user first runs it (bundled languages only) and with the fr, de, sv files supplied."""
    tmp = tmp_path_factory.mktemp("readme")
    files = write_language_files(tmp / "languages")
    return _dry_run(tmp / "bundled"), _dry_run(tmp / "all", *data_options(files))


def test_readme_paper_scale_agrees_with_the_dry_run_and_the_config(plans):
    bundled, everything = plans
    text = _paper_paragraph()
    reading = re.search(r"validation schedule `(\w+)`", text).group(1)
    assert reading == yaml.safe_load((ROOT / "configs" / "paper.yaml").read_text())["val_schedule"]
    assert [name for name, entry in bundled["schedules"].items() if entry["chosen"]] == [reading]

    runs = re.search(r"(\d+) runs for en \+ ru and (\d+) when fr, de and sv files are supplied", text)
    assert runs, f"README: run counts not found in {text!r}"
    assert int(runs.group(1)) == bundled["cost"]["runs_to_train"] == len(bundled["runs"])
    assert {r["language"] for r in bundled["runs"]} == {"en", "ru"}
    assert int(runs.group(2)) == everything["cost"]["runs_to_train"] == len(everything["runs"])

    hours = bundled["schedules"][reading]["hours"]
    fused = re.search(r"([\d.]+) GPU-hours on one H100 with runs fused \(([\d.]+) pairs/s\)", text)
    alone = re.search(r"([\d.]+) one run at a time \(([\d.]+) pairs/s\)", text)
    assert fused and alone, f"README: hours not found in {text!r}"
    for found in (fused, alone):
        assert hours[found.group(2)] == float(found.group(1)), (found.group(0), hours)


def test_docs_paper_scale_names_the_same_counts_and_reading(plans):
    bundled, everything = plans
    doc = " ".join((ROOT / "docs" / "paper_scale.md").read_text(encoding="utf-8").split())
    assert f"{everything['cost']['runs_to_train']} runs in all when the fr, de and sv files are supplied" in doc
    assert f"the plan has {bundled['cost']['runs_to_train']}" in doc
    assert "The default, `russiansuperglue`," in doc
    hours = bundled["schedules"]["russiansuperglue"]["hours"]
    assert f"{hours['80.8']} GPU-hours one run at a time (80.8 pairs/s" in doc
    assert f"{hours['483.4']} h with 16 runs trained as one job" in doc


def test_readme_links_and_images_resolve_and_licenses_stay_visible():
    targets = re.findall(r"\]\(([^)#]+)\)", README)
    assert targets
    missing = [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()]
    assert not missing, f"README links to missing files: {missing}"
    assert "## Bundled data and licenses" in README and "CC BY-NC-SA 3.0 (non-commercial)" in README
    for page in (ROOT / "docs").glob("*.md"):
        text = page.read_text(encoding="utf-8")
        broken = [t for t in re.findall(r"\]\(([^)#\s]+)\)", text)
                  if not t.startswith("http") and not (page.parent / t).exists()]
        assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"
