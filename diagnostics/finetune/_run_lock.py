"""The lock of one run folder: who trains a run, and taking over a lock whose owner died.

The lock (:class:`RunLock`) is an exclusive ``flock`` on ``LOCK`` where the file system supports it: the kernel
releases it when its process dies, so a killed owner never blocks a run and two processes never both hold it. The
file's content (pid, host) tells other readers who trains the run; a new owner writes it just after taking the
lock, so an empty ``LOCK`` younger than :data:`LOCK_GRACE_S` counts as live.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any, NoReturn

try:
    import fcntl
except ImportError:  # Windows: the lock falls back to a hard link (see RunLock)
    fcntl = None


class RunLockedError(RuntimeError):
    """Another live process is training this run."""



def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: Seconds during which an empty or partly written ``LOCK`` counts as held (its new owner is writing its pid).
LOCK_GRACE_S = 30.0


def lock_owner(path: Path) -> dict[str, Any] | None:
    """A run's ``LOCK`` content ``{"pid": int, "host": str}``; ``None`` when unlocked, unreadable or no JSON object."""
    try:
        owner = json.loads((Path(path) / "LOCK").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return owner if isinstance(owner, dict) else None


def lock_is_live(owner: dict[str, Any] | None) -> bool:
    """Whether a lock's owner (as :func:`lock_owner` reads it) still runs: False for none, an unreadable pid or a dead
    pid on this host; a lock from another host counts as live (we cannot check it).
    """
    if not owner:
        return False
    if owner.get("host") != socket.gethostname():
        return True
    try:
        return _pid_alive(int(owner.get("pid", -1)))
    except (TypeError, ValueError):
        return False


def lock_held(path: str | Path) -> bool:
    """Whether a live process holds the lock of a run folder, as far as its ``LOCK`` file tells: ``LOCK`` names a live
    owner (or one on another host), or is empty / partly written and younger than :data:`LOCK_GRACE_S` (an owner
    between taking the lock and writing its pid).
    """
    owner = lock_owner(path)
    if owner is not None:
        return lock_is_live(owner)
    try:
        age = time.time() - (Path(path) / "LOCK").stat().st_mtime
    except FileNotFoundError:
        return False
    return age < LOCK_GRACE_S


class RunLock:
    """Exclusive lock of one run folder, held by a pid; a lock whose owner died is taken over.

    Where the file system supports ``flock`` (POSIX), the lock is a kernel lock on ``LOCK``: taking it is one
    atomic step, and a dead owner's lock is free whatever its file says. ``LOCK`` then records the owner's pid and
    host (with ``"flock": true``) for readers. A ``LOCK`` without that mark (written by hand or by an older
    version) is honoured while its pid runs; one naming another host is always honoured (we cannot check it).
    Without ``flock``, the record is written to a temporary file and hard-linked into place, so ``LOCK`` never
    exists half written; taking over a dead owner's lock may then race with another process doing the same.

    Parameters
    ----------
    path : Path
        The run folder (created when missing).

    Raises
    ------
    RunLockedError
        From :meth:`acquire`, when a live process (or one on another host) holds the lock.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.file = self.path / "LOCK"
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock and return ``self``.

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
            if owner is not None and (owner.get("host") != socket.gethostname()
                                      or (not owner.get("flock") and lock_is_live(owner))):
                os.close(fd)
                self._refuse(owner)
            record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "flock": True}).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, record, 0)
            self._fd = fd
            return self
        raise RunLockedError(f"could not take the lock of {self.path} (contended)")

    @staticmethod
    def _read(fd: int) -> dict[str, Any] | None:
        try:
            owner = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return owner if isinstance(owner, dict) else None

    def _refuse(self, owner: dict[str, Any] | None) -> NoReturn:
        if owner is not None and owner.get("pid") == os.getpid() and owner.get("host") == socket.gethostname():
            raise RunLockedError(f"{self.path} is already locked by this process (pid {os.getpid()})")
        who = f"pid {owner.get('pid')} on {owner.get('host')}" if owner else "pid not yet recorded"
        raise RunLockedError(
            f"run {self.path} is being trained by another process ({who}); wait for it, or stop it. If that process "
            f"is gone (another machine), delete {self.file} by hand.")

    def _acquire_by_link(self) -> RunLock:
        """Without ``flock``: hard-link a complete record into place (fails when ``LOCK`` exists)."""
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname()})
        for _ in range(3):
            tmp = self.path / f".LOCK.{os.getpid()}.{uuid.uuid4().hex}"
            tmp.write_text(record, encoding="utf-8")
            try:
                os.link(tmp, self.file)
                return self
            except FileExistsError:
                pass
            finally:
                tmp.unlink(missing_ok=True)
            if lock_held(self.path):
                self._refuse(lock_owner(self.path))
            self.file.unlink(missing_ok=True)  # stale: the owner died (SIGKILL, power loss)
        raise RunLockedError(f"could not take the lock of {self.path} (contended)")

    def release(self) -> None:
        """Give the lock back and remove ``LOCK`` (only when this object holds it)."""
        if self._fd is None:
            owner = lock_owner(self.path)
            if owner and owner.get("pid") == os.getpid() and owner.get("host") == socket.gethostname():
                self.file.unlink(missing_ok=True)
            return
        try:
            try:
                ours = os.path.samestat(os.fstat(self._fd), os.stat(self.file))
            except FileNotFoundError:
                ours = False
            if ours:  # removed while still locked, so that no one takes over a file about to vanish
                self.file.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
