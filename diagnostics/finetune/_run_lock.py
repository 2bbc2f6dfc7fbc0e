"""The lock of one run folder: who trains a run, its heartbeat, and taking over a lock whose owner died.

The lock (:class:`RunLock`) is an exclusive ``flock`` on ``LOCK`` where the file system supports it: the kernel
releases it when its process dies, so a killed owner never blocks a run and two processes never both hold it. The
file's content names the owner (pid, host and, inside a SLURM job, the job id, its restart count and node) for other
readers; a new owner writes it just after taking the lock, so an empty ``LOCK`` younger than :data:`LOCK_GRACE_S`
counts as live.

On a file system shared by several machines, a flock taken on one machine may be invisible on another, and a dead
machine's lock is never released by a kernel. So while it trains, an owner touches ``LOCK`` every
:func:`heartbeat_s` seconds (a daemon thread of the lock object), and a lock written by another host counts as live
until SLURM says its job has ended (``squeue`` / ``sacct``: :func:`~._slurm.owner_job_ended`) or, where SLURM cannot
tell, until its heartbeat is older than :func:`stale_after_s`. Only then may another host take it over; the owner's
heartbeat notices a takeover and stops its training, so two live owners never train one run for long.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import socket
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any, NoReturn

from ._slurm import current_job, owner_job_ended

try:
    import fcntl
except ImportError:  # Windows: the lock falls back to a hard link (see RunLock)
    fcntl = None


class RunLockedError(RuntimeError):
    """Another live process is training this run."""


class RunLockLost(KeyboardInterrupt):
    """Raised in the thread holding a run's lock when another host has taken the lock over (it judged this one dead).

    A ``KeyboardInterrupt``, so that it stops training wherever an interrupt would, and cleanup runs as for Ctrl+C.
    """


def _raise_in_thread(thread_id: int, error: type[BaseException]) -> None:
    """Raise ``error`` in another thread of this process at its next Python instruction.

    Unlike ``_thread.interrupt_main``, this does not go through SIGINT, which a process started in the background of
    a non-interactive shell (``cmd &`` in a batch script) inherits as ignored: there the interrupt did nothing, and
    the old owner trained on beside the new one.
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(error))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _hostname() -> str:
    return socket.gethostname()


#: Seconds during which an empty or partly written ``LOCK`` counts as held (its new owner is writing its pid).
LOCK_GRACE_S = 30.0
#: Environment variables that set :func:`heartbeat_s` and :func:`stale_after_s` (seconds).
HEARTBEAT_VARIABLE = "DIAGNOSTICS_LOCK_HEARTBEAT_S"
STALE_VARIABLE = "DIAGNOSTICS_LOCK_STALE_S"
#: Defaults of :func:`heartbeat_s` and :func:`stale_after_s`.
HEARTBEAT_S = 30.0
STALE_AFTER_S = 300.0
#: Seconds a new owner waits after taking over another host's lock before it checks that the lock is still its own.
TAKEOVER_SETTLE_S = 1.0


def _seconds(variable: str, default: float) -> float:
    try:
        value = float(os.environ.get(variable) or default)
    except ValueError:
        return default
    return value if value > 0 else default


def heartbeat_s() -> float:
    """Seconds between two touches of a held ``LOCK`` (``DIAGNOSTICS_LOCK_HEARTBEAT_S``, default 30)."""
    return _seconds(HEARTBEAT_VARIABLE, HEARTBEAT_S)


def stale_after_s(owner: dict[str, Any] | None = None) -> float:
    """Age of its last heartbeat after which another host's lock counts as dead.

    ``DIAGNOSTICS_LOCK_STALE_S`` (default 300 s), and at least four of the heartbeats ``owner`` recorded.
    """
    bound = _seconds(STALE_VARIABLE, STALE_AFTER_S)
    try:
        return max(bound, 4 * float((owner or {}).get("heartbeat_s") or 0))
    except (TypeError, ValueError):
        return bound


def lock_owner(path: Path) -> dict[str, Any] | None:
    """A run's ``LOCK`` content (``pid``, ``host``, optionally ``heartbeat_s`` and ``slurm``); ``None`` when unlocked,
    unreadable or no JSON object."""
    try:
        owner = json.loads((Path(path) / "LOCK").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return owner if isinstance(owner, dict) else None


def lock_is_live(owner: dict[str, Any] | None, age_s: float | None = None) -> bool:
    """Whether a lock's owner (as :func:`lock_owner` reads it) still runs.

    On this host: whether its pid runs. On another host: what SLURM says of the job the lock names
    (:func:`~._slurm.owner_job_ended`); where SLURM cannot tell, whether the heartbeat (``age_s``: seconds since
    ``LOCK`` was last touched) is within :func:`stale_after_s`. A lock of another host without a heartbeat (written
    by an older version) counts as live. False for none or an unreadable pid.
    """
    if not owner:
        return False
    if owner.get("host") == _hostname():
        try:
            return _pid_alive(int(owner.get("pid", -1)))
        except (TypeError, ValueError):
            return False
    ended = owner_job_ended(owner)
    if ended is not None:
        return not ended
    if owner.get("heartbeat_s") is None or age_s is None:
        return True
    return age_s <= stale_after_s(owner)


def _age(path: Path) -> float | None:
    try:
        return time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return None


def lock_held(path: str | Path) -> bool:
    """Whether a live process holds the lock of a run folder, as far as its ``LOCK`` file tells: ``LOCK`` names a live
    owner (:func:`lock_is_live`), or is empty / partly written and younger than :data:`LOCK_GRACE_S` (an owner
    between taking the lock and writing its pid).
    """
    file = Path(path) / "LOCK"
    owner = lock_owner(path)
    age = _age(file)
    if owner is not None:
        return lock_is_live(owner, age)
    return age is not None and age < LOCK_GRACE_S


def _same_owner(a: dict[str, Any] | None, b: dict[str, Any]) -> bool:
    return a is not None and a.get("pid") == b.get("pid") and a.get("host") == b.get("host") \
        and a.get("token") == b.get("token")


class RunLock:
    """Exclusive lock of one run folder, held by a pid and kept alive by a heartbeat; a dead owner's lock is taken over.

    Where the file system supports ``flock`` (POSIX), the lock is a kernel lock on ``LOCK``: taking it is one
    atomic step, and a dead owner's lock on this host is free whatever its file says. ``LOCK`` then records the
    owner (pid, host, ``"flock": true``, the heartbeat interval, a token and, inside a SLURM job, the job) for readers.
    A ``LOCK`` without the flock mark (written by hand or by an older version) is honoured while its pid runs. A lock
    written by another host is honoured while it is live (:func:`lock_is_live`: its SLURM job runs, or its heartbeat is
    fresh); a new owner taking it over checks :data:`TAKEOVER_SETTLE_S` later that no other host took it at the same
    moment. Without ``flock``, the record is written to a temporary file and hard-linked into place, so ``LOCK`` never
    exists half written; taking over a dead owner's lock may then race with another process doing the same.

    While held, a daemon thread touches ``LOCK`` every ``heartbeat`` seconds; when it finds another owner's record in
    ``LOCK`` (a host that judged this one dead took the run over), it stops the training: :class:`RunLockLost` (a
    ``KeyboardInterrupt``) in the thread that took the lock, and :attr:`lost` names the new owner.

    Parameters
    ----------
    path : Path
        The run folder (created when missing).
    heartbeat : float, optional
        Seconds between touches of ``LOCK``; default :func:`heartbeat_s`.

    Raises
    ------
    RunLockedError
        From :meth:`acquire`, when a live process (here or on another host) holds the lock.
    """

    def __init__(self, path: Path, *, heartbeat: float | None = None):
        self.path = Path(path)
        self.file = self.path / "LOCK"
        self.heartbeat = float(heartbeat) if heartbeat else heartbeat_s()
        #: The record of the owner that took this lock over while it was held (``None`` while it is ours).
        self.lost: dict[str, Any] | None = None
        self._fd: int | None = None
        self._record: dict[str, Any] | None = None
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._owner_thread: int | None = None

    def _new_record(self, flock: bool) -> dict[str, Any]:
        record: dict[str, Any] = {"pid": os.getpid(), "host": _hostname()}
        if flock:
            record["flock"] = True
        record.update(heartbeat_s=self.heartbeat, token=uuid.uuid4().hex[:16])
        job = current_job()
        if job is not None:
            record["slurm"] = job
        return record

    def acquire(self) -> RunLock:
        """Take the lock and return ``self``; its heartbeat runs until :meth:`release`.

        ``RunLockedError`` when another live process, or this one, holds it.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        if fcntl is None:
            return self._acquire_by_link()
        for _ in range(20):
            fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                self._refuse(lock_owner(self.path))
            except OSError as err:
                os.close(fd)
                if err.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    return self._acquire_by_link()  # a file system without flock
                raise
            try:  # the owner may have removed the file between our open and our flock: lock the current one
                current = os.path.samestat(os.fstat(fd), os.stat(self.file))
            except FileNotFoundError:
                current = False
            if not current:
                os.close(fd)
                continue
            owner = self._read(fd)
            foreign = owner is not None and owner.get("host") != _hostname()
            if foreign and lock_is_live(owner, time.time() - os.fstat(fd).st_mtime) \
                    or not foreign and owner is not None and not owner.get("flock") and lock_is_live(owner):
                os.close(fd)
                self._refuse(owner)
            record = self._new_record(flock=True)
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(record).encode(), 0)
            os.fsync(fd)
            self._fd, self._record = fd, record
            if foreign:
                self._settle()
            self._start_heartbeat()
            return self
        raise RunLockedError(f"could not take the lock of {self.path} (contended)")

    def _settle(self) -> None:
        """After taking over another host's lock: refuse if, a moment later, ``LOCK`` names someone else (a host
        whose flocks this one does not see took it over at the same time)."""
        time.sleep(TAKEOVER_SETTLE_S)
        current = lock_owner(self.path)
        if not _same_owner(current, self._record):
            if self._fd is not None:
                os.close(self._fd)
            self._fd, self._record = None, None
            self._refuse(current)

    @staticmethod
    def _read(fd: int) -> dict[str, Any] | None:
        try:
            owner = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return owner if isinstance(owner, dict) else None

    def _refuse(self, owner: dict[str, Any] | None) -> NoReturn:
        if owner is not None and owner.get("pid") == os.getpid() and owner.get("host") == _hostname():
            raise RunLockedError(f"{self.path} is already locked by this process (pid {os.getpid()})")
        who = f"pid {owner.get('pid')} on {owner.get('host')}" if owner else "pid not yet recorded"
        job = (owner or {}).get("slurm")
        if isinstance(job, dict) and job.get("job"):
            who += f", SLURM job {job['job']}"
        hint = ""
        if owner and owner.get("host") != _hostname():
            age = _age(self.file)
            touched = f"; LOCK last touched {age:.0f} s ago" if age is not None else ""
            hint = (f" A lock of another host is taken over once SLURM says its job has ended, or once its heartbeat "
                    f"is older than {stale_after_s(owner):.0f} s{touched}.")
        raise RunLockedError(f"run {self.path} is being trained by another process ({who}); wait for it, or stop "
                             f"it.{hint}")

    def _acquire_by_link(self) -> RunLock:
        """Without ``flock``: hard-link a complete record into place (fails when ``LOCK`` exists)."""
        record = self._new_record(flock=False)
        for _ in range(3):
            tmp = self.path / f".LOCK.{os.getpid()}.{uuid.uuid4().hex}"
            tmp.write_text(json.dumps(record), encoding="utf-8")
            try:
                os.link(tmp, self.file)
                self._record = record
                self._start_heartbeat()
                return self
            except FileExistsError:
                pass
            finally:
                tmp.unlink(missing_ok=True)
            if lock_held(self.path):
                self._refuse(lock_owner(self.path))
            self.file.unlink(missing_ok=True)  # stale: the owner died (SIGKILL, power loss)
        raise RunLockedError(f"could not take the lock of {self.path} (contended)")

    def _start_heartbeat(self) -> None:
        self._owner_thread = threading.get_ident()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, args=(self._stop, self._record),
                                        name=f"heartbeat {self.path}", daemon=True)
        self._thread.start()

    def _beat(self, stop: threading.Event, record: dict[str, Any]) -> None:
        """Touch ``LOCK`` every :attr:`heartbeat` seconds; stop the training when another owner took it over."""
        while not stop.wait(self.heartbeat):
            current = lock_owner(self.path)
            if current is not None and not _same_owner(current, record) and not stop.is_set():
                self.lost = current
                sys.stderr.write(f"run {self.path}: the lock was taken over by pid {current.get('pid')} on "
                                 f"{current.get('host')} (this process was judged dead); stopping this run\n")
                _raise_in_thread(self._owner_thread, RunLockLost)
                return
            try:
                os.utime(self._fd if self._fd is not None else self.file)
            except OSError:
                pass  # removed by hand, or a passing disk error: the next beat tries again

    def _stop_heartbeat(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._stop, self._thread = None, None

    def release(self) -> None:
        """Stop the heartbeat, give the lock back and remove ``LOCK`` (only when this object holds it and ``LOCK`` still
        names it)."""
        self._stop_heartbeat()
        record, self._record = self._record, None
        if self._fd is None:
            owner = lock_owner(self.path)
            mine = _same_owner(owner, record) if record is not None else \
                owner is not None and owner.get("pid") == os.getpid() and owner.get("host") == _hostname()
            if mine:
                self.file.unlink(missing_ok=True)
            return
        try:
            try:
                ours = os.path.samestat(os.fstat(self._fd), os.stat(self.file))
            except FileNotFoundError:
                ours = False
            if ours and (record is None or _same_owner(self._read(self._fd), record)):
                # removed while still locked, so that no one takes over a file about to vanish
                self.file.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
