"""Where a notebook reads its runs and writes its figures, from any working directory; the probing results it reads."""

from diagnostics.pipeline import notebook_paths

from _paths import ROOT


def test_notebook_paths_resolve_from_the_project_root(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DIAGNOSTICS_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # a kernel started elsewhere, e.g. in notebooks/
    runs, figures = notebook_paths("demo", output_dir=tmp_path / "figures")
    assert runs == ROOT / "runs" / "demo" and figures == tmp_path / "figures" and figures.is_dir()
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(root))
    # opened by hand: figures apart from the main job's report (reports/tiny/figures), which the pipeline passes
    interactive = root.resolve() / "reports" / "interactive" / "tiny" / "figures"
    assert notebook_paths("tiny") == (root.resolve() / "runs" / "tiny", interactive)
    assert notebook_paths("tiny", "store", "figs") == (root.resolve() / "store", root.resolve() / "figs")
    assert str(interactive) in capsys.readouterr().out
    assert not (root / "reports" / "tiny").exists()


def test_notebook_11_reads_this_sessions_probes_else_the_main_jobs(tmp_path, monkeypatch):
    from diagnostics.pipeline import PROBE_RESULTS, probe_results_file

    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(tmp_path))
    session, main = tmp_path / "session", tmp_path / "reports" / "tiny" / "figures"
    session.mkdir()
    assert probe_results_file(session, "tiny") is None
    main.mkdir(parents=True)
    (main / PROBE_RESULTS).write_bytes(b"")
    assert probe_results_file(session, "tiny") == main / PROBE_RESULTS
    (session / PROBE_RESULTS).write_bytes(b"")
    assert probe_results_file(session, "tiny") == session / PROBE_RESULTS
