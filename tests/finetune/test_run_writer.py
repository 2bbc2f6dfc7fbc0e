"""The one writer of a run folder, ``_run_writer``: files staged under the lease's token and committed whole, ``DONE``
last with the sha256 of the run's files, an earlier attempt's leftovers cleared (the lease kept), markers written
only while the lease is held (never ``INTERRUPTED`` in a finished run), a disk error naming the run's file, and a
signal's marks only in the runs this process holds."""

import errno
import hashlib
import json

import pytest

from diagnostics.finetune import RunStoreError, run_dir
from diagnostics.finetune._run_lock import LEASE_FOLDER, RunLock
from diagnostics.finetune._run_writer import STAGING_FOLDER, RunWriter, mark_owned_interrupted


@pytest.fixture()
def held(tmp_path):
    lock = RunLock(run_dir(tmp_path, "e", "en", "m", 0)).acquire()
    yield lock
    lock.release()


def test_files_are_committed_whole_and_done_records_their_checksums(held):
    writer = RunWriter(held)
    writer.write_json("config.json", {"lr": 0.1})
    writer.write_text("notes.txt", "ä\n")
    assert json.loads((held.path / "config.json").read_text()) == {"lr": 0.1}
    assert (held.path / "notes.txt").read_text(encoding="utf-8") == "ä\n"
    assert writer.staging == held.path / STAGING_FOLDER / str(held.token) and writer.staging.is_dir()
    writer.write_folder("checkpoint", lambda folder: (folder.mkdir(), (folder / "w.bin").write_bytes(b"\x00\x01")))
    writer.mark_done({"best": {"epoch": 1}})
    done = json.loads((held.path / "DONE").read_text())
    assert done["best"] == {"epoch": 1}
    assert done["sha256"]["config.json"] == hashlib.sha256((held.path / "config.json").read_bytes()).hexdigest()
    assert done["sha256"]["checkpoint/w.bin"] == hashlib.sha256(b"\x00\x01").hexdigest()
    assert not (held.path / STAGING_FOLDER).exists()  # discarded once done


def test_clearing_an_earlier_attempt_keeps_the_lease_and_what_is_taken_up(held):
    (held.path / "metrics.json").write_text("{}")
    (held.path / "FAILED").write_text("Traceback ...")
    (held.path / "resume").mkdir()
    (held.path / "checkpoint").mkdir()
    (held.path / "checkpoint" / "w.bin").write_bytes(b"x")
    RunWriter(held).clear_partial(keep=("resume",))
    assert sorted(p.name for p in held.path.iterdir()) == sorted(["LOCK", LEASE_FOLDER, "resume"])


def test_markers_are_written_only_while_the_lease_is_held_and_interrupted_never_in_a_finished_run(tmp_path):
    lock = RunLock(run_dir(tmp_path, "e", "en", "m", 0)).acquire()
    writer = RunWriter(lock)
    assert writer.mark_failed("Traceback ...") and (lock.path / "FAILED").read_text() == "Traceback ..."
    assert writer.mark_interrupted("SIGTERM") and (lock.path / "INTERRUPTED").read_text() == "SIGTERM\n"
    writer.mark_done({})
    assert not writer.mark_interrupted("SIGUSR2") and (lock.path / "INTERRUPTED").read_text() == "SIGTERM\n"
    lock.release()
    assert not writer.mark_failed("later")
    assert (lock.path / "FAILED").read_text() == "Traceback ..."


def test_a_full_disk_names_the_runs_file_not_the_staging_one(held, monkeypatch):
    def full(path, text, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("diagnostics.finetune._run_writer.write_text_atomic", full)
    with pytest.raises(RunStoreError) as caught:
        RunWriter(held).write_text("notes.txt", "x")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(held.path / "notes.txt")
    assert not RunWriter(held).mark_failed("Traceback ...")  # the error being reported is the training's


def test_a_signal_marks_only_the_unfinished_runs_this_process_holds(tmp_path):
    mine, done, other = (run_dir(tmp_path, "e", "en", "m", seed) for seed in (0, 1, 2))
    other.mkdir(parents=True)
    locks = [RunLock(mine).acquire(), RunLock(done).acquire()]
    try:
        RunWriter(locks[1]).mark_done({})
        assert mark_owned_interrupted("SIGTERM") == [mine]
        assert mark_owned_interrupted("SIGUSR2: requeued", keep=False) == [mine]
        assert mark_owned_interrupted("SIGTERM", keep=True) == []  # the requeue's reason stays
        assert (mine / "INTERRUPTED").read_text() == "SIGUSR2: requeued\n"
        assert not (done / "INTERRUPTED").exists() and not (other / "INTERRUPTED").exists()
    finally:
        for lock in locks:
            lock.release()
