"""Stand-ins for a cluster in fast tests: SLURM client commands on ``PATH`` that print fixed answers, a submitted job
as the watcher sees it, a clock that ``sleep`` advances, and a stream that keeps when each line came."""

from __future__ import annotations

import os
import time
from pathlib import Path

from submitit.core.utils import cloudpickle_dump


def fake_commands(bin_dir: Path, monkeypatch, squeue: str = "", *, squeue_rc: int = 0, squeue_err: str = "",
                  sinfo: str = "") -> Path:
    """Put ``squeue`` (printing ``squeue``, or the text of the file ``bin_dir/squeue.txt`` when it exists, so a test
    can change the answer), ``sacct`` (accounting off), ``sinfo`` and ``scancel`` (recording its arguments in
    ``bin_dir/scancelled``) first on ``PATH``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    answer = bin_dir / "squeue.txt"
    (bin_dir / "squeue").write_text(
        f"#!/bin/sh\nif [ -f {answer} ]; then cat {answer}; else cat <<'EOF'\n{squeue}\nEOF\nfi\n"
        f"echo '{squeue_err}' >&2\nexit {squeue_rc}\n")
    (bin_dir / "sacct").write_text("#!/bin/sh\necho 'Slurm accounting storage is disabled' >&2\nexit 1\n")
    (bin_dir / "sinfo").write_text(f"#!/bin/sh\ncat <<'EOF'\n{sinfo}\nEOF\n")
    (bin_dir / "scancel").write_text(f"#!/bin/sh\necho \"$@\" >> {bin_dir / 'scancelled'}\n")
    for tool in ("squeue", "sacct", "sinfo", "scancel"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    from diagnostics.finetune import _slurm

    _slurm._cache.clear()
    return bin_dir


class _Paths:
    def __init__(self, folder, job_id):
        self.result_pickle = Path(folder) / f"{job_id}_0_result.pkl"
        self.stderr = Path(folder) / f"{job_id}_0_log.err"
        self.stdout = Path(folder) / f"{job_id}_0_log.out"


class FakeJob:
    """A submitted job as the watcher sees it: an id, a result file that may appear, logs."""

    def __init__(self, folder, job_id):
        self.job_id = job_id
        self.paths = _Paths(folder, job_id)
        self.cancelled = False

    def finish(self, records):
        cloudpickle_dump(("success", records), self.paths.result_pickle)

    def cancel(self, check=True):
        self.cancelled = True


class FakeSpec:
    """A run as the executors see it: its folder."""

    def __init__(self, path):
        self.path = Path(path)

    def describe(self):
        return "/".join(self.path.parts[-3:])


class Timeline:
    """A clock that ``sleep`` advances, running the scheduled events (time -> callable) it passes."""

    def __init__(self, events):
        self.now = 0.0
        self.events = sorted(events.items())

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds
        while self.events and self.events[0][0] <= self.now:
            self.events.pop(0)[1]()
        if self.now > 1000:
            raise AssertionError("the wait hangs")


def started_jobs(tmp_path: Path) -> list[tuple[FakeJob, list[FakeSpec]]]:
    """Three jobs of one run each, in run folders with partial files (their training had started)."""
    from diagnostics.finetune import run_dir

    out = []
    for k in range(3):
        folder = run_dir(tmp_path / "runs", "e", "en", "m", k)
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
        out.append((FakeJob(tmp_path, f"7_{k}"), [FakeSpec(folder)]))
    return out


class StampedStream:
    """A stream keeping each line with the time it was written (real clock): for tests of lines that must come on
    time."""

    def __init__(self):
        self.lines: list[tuple[float, str]] = []

    def write(self, text: str) -> None:
        self.lines.extend((time.monotonic(), line) for line in text.splitlines())

    def flush(self) -> None:
        pass
