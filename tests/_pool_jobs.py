"""Jobs for pool tests, in a module light enough for each spawned worker to import in an instant (no torch)."""

from __future__ import annotations

import os
import signal
import subprocess


class Spec:
    """A run as the pool sees it: a folder and a name."""

    def __init__(self, path, name):
        self.path = path
        self.name = name

    def describe(self):
        return self.name


def fake_worker(job, threads):
    """A pool job: ``die`` kills its worker every time, ``die-once`` on the first try only, ``stop`` stops its
    worker for 2 s (SIGSTOP, then SIGCONT from a helper), anything else finishes."""
    out = []
    for spec in job:
        tries = spec.path / "tries"
        tries.write_text(str(int(tries.read_text()) + 1 if tries.exists() else 1))
        if spec.name == "die" or (spec.name == "die-once" and tries.read_text() == "1"):
            os.kill(os.getpid(), signal.SIGKILL)
        if spec.name == "stop":
            subprocess.Popen(["sh", "-c", f"sleep 2; kill -CONT {os.getpid()}"])
            os.kill(os.getpid(), signal.SIGSTOP)
        out.append({"path": str(spec.path), "state": "done", "error": None})
    return out
