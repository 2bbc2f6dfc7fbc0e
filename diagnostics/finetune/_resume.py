"""Going on from a run's last check: what it saves there, and how a restarted attempt takes it up.

With ``executor_options: {requeue: true}`` (a sweep on a cluster that may preempt, requeue or time out its jobs),
every run saves, after each validation check it goes on from, the state that the rest of its training depends on
(:meth:`~._fused._Run.resume_state`) into ``resume/`` of its run folder, through the writer of its lease: its
weights and best weights, its optimizer moments and step count, its batch order and position, its generators, its
counters, history and plateau state. A later attempt (the requeued job, or the next sweep) that claims the run
finds it and goes on from that check instead of from the first step; it repeats only the steps since. ``resume/``
is removed when the run finishes. A state saved by other settings (another run hash) is not taken.

On the CPU a resumed run that trains alone in its job (one slot) goes on exactly as if never interrupted (the same
predictions: torch's global generator, which draws its dropout masks, is restored too). In a fused job the runs
draw their dropout masks from one shared generator, so a run that resumes in a group of other composition draws
other masks: without dropout it equals the uninterrupted run to float rounding.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

from ._run_writer import RunWriter
from ._config import SweepConfig

#: The folder of a run's resume state.
RESUME_FOLDER = "resume"
#: Version of the resume state this code writes and reads.
RESUME_FORMAT = 1
_TENSORS, _META = "state.safetensors", "state.json"


def resume_enabled(config: SweepConfig) -> bool:
    """Whether a sweep's runs save their state at each check: ``executor_options.requeue``."""
    return bool((config.executor_options or {}).get("requeue"))


def save_resume(writer: RunWriter, state: dict[str, Any], run_hash: str) -> None:
    """Commit a run's state after a check (``{"tensors", "meta"}``) as ``resume/`` through the run's writer.

    Parameters
    ----------
    writer : RunWriter
        The writer of the run's held lease.
    state : dict
        What :meth:`~._fused._Run.resume_state` returned.
    run_hash : str
        The run's settings hash: a state is only taken up by the same settings.
    """
    from safetensors.torch import save_file

    def fill(folder: Path) -> None:
        folder.mkdir(parents=True)
        save_file({name: tensor.contiguous() for name, tensor in state["tensors"].items()}, str(folder / _TENSORS))
        meta = {"format": RESUME_FORMAT, "run_hash": run_hash, **state["meta"]}
        (folder / _META).write_text(json.dumps(meta), encoding="utf-8")

    writer.write_folder(RESUME_FOLDER, fill)


def load_resume(path: Path, run_hash: str) -> dict[str, Any] | None:
    """The state an earlier attempt of the run in ``path`` saved at its last check, or ``None``.

    ``None`` when there is none, when it was saved by other settings or another format, or when it cannot be read
    (a warning says why; the run then starts from its first step).

    Parameters
    ----------
    path : Path
        The run folder.
    run_hash : str
        The settings hash of the run about to train.

    Returns
    -------
    dict or None
        ``{"tensors", "meta"}`` as :meth:`~._fused._Run.resume_state` made it.
    """
    from safetensors.torch import load_file

    folder = Path(path) / RESUME_FOLDER
    if not (folder / _META).is_file():
        return None
    try:
        meta = json.loads((folder / _META).read_text(encoding="utf-8"))
        if meta.get("format") != RESUME_FORMAT or meta.get("run_hash") != run_hash:
            warnings.warn(f"{folder}: saved by other settings or another version; the run starts from its first "
                          "step", stacklevel=2)
            return None
        tensors = load_file(str(folder / _TENSORS))
    except (OSError, ValueError) as err:
        warnings.warn(f"{folder}: cannot be read ({err}); the run starts from its first step", stacklevel=2)
        return None
    return {"tensors": tensors, "meta": meta}


def keeps_resume(path: Path, run_hash: str) -> bool:
    """Whether a run folder's ``resume/`` is one a new attempt of these settings takes up (kept by its claim)."""
    try:
        meta = json.loads((Path(path) / RESUME_FOLDER / _META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("format") == RESUME_FORMAT and meta.get("run_hash") == run_hash
