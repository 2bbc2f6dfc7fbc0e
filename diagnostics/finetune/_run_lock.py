"""The lease of one run folder: who may write into a run, a token that only grows, a heartbeat, and taking over a
lease whose owner died, on file systems with and without shared locks.

**Claims.** Owning a run means holding its newest *lease*: ``.lease/<n>`` in the run folder, a JSON record (pid,
host, boot, heartbeat interval, inside a SLURM job the job) created by one ``link`` of a complete temporary file, so
it is never seen half written and exactly one process can create generation ``n`` (``link`` fails when the name
exists, also on NFS, where ``flock`` may be local to each host). ``n`` is the lease's *token*: it only grows per
run folder. The newest lease is found from ``LOCK`` (a copy of the owner's record, for people and as a pointer to
the generation) by looking for the next generations' files; ``.lease/<n>.end`` says its owner released it. A
contender takes generation ``n + 1`` only when lease ``n`` is released or its owner is dead; two contenders of the
same moment race for one name and one loses. Where ``flock`` works, the owner also holds an exclusive ``flock`` on
``.lease/flock`` while it trains: another process that shares its flocks is refused at once.

**Liveness without other clocks.** An owner on this host (same host name and boot) is alive while its pid runs. An
owner on another host is alive while SLURM says its job runs (:func:`~._slurm.owner_job_ended`), or, where SLURM
cannot tell, while the counter it increments every :func:`heartbeat_s` seconds (``.lease/<n>.beat``) advances: a
reader declares the owner dead only after it has itself watched the counter stand still for :func:`stale_after_s`
seconds of its own monotonic clock (its observations are kept in ``.lease/watch-<host>.json``, so a later process of
the same host goes on watching). No time written by another host is compared with this host's clock.

**Fencing.** Every write into a run goes through its owner's :class:`~._run_writer.RunWriter`, which checks before
each commit that the newest lease is still its own (:meth:`RunLock.ensure`); an owner that lost its lease (it froze
past the bound and another host took the run over) stops with :class:`RunLockLost` and writes nothing. Its
heartbeat notices the loss too and sets :attr:`RunLock.lost`, which the engine reads after every step to end that
run only.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import threading
import time
import uuid
from contextlib import suppress
from pathlib import Path
from typing import Any, NoReturn

from ._slurm import current_job, owner_job_ended

try:
    import fcntl
except ImportError:  # Windows: the lease alone decides
    fcntl = None


class RunLockedError(RuntimeError):
    """Another live process is training this run."""


class RunLockLost(RuntimeError):
    """This process's lease of a run was taken over (another host judged it dead): it writes nothing more into the
    run, whose training ends; the other runs of the job go on."""


class RunStoreError(OSError):
    """A run folder could not be written (full disk, read-only mount, permissions): one line naming the path."""


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


def _boot_id() -> str:
    """This machine's boot id (Linux), so that a pid recorded before a reboot is not mistaken for a live one."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


#: The folder of a run's leases, inside the run folder.
LEASE_FOLDER = ".lease"
#: Environment variables that set :func:`heartbeat_s` and :func:`stale_after_s` (seconds).
HEARTBEAT_VARIABLE = "DIAGNOSTICS_LOCK_HEARTBEAT_S"
STALE_VARIABLE = "DIAGNOSTICS_LOCK_STALE_S"
#: Environment variable naming a file to which every claim and release of a lease is appended (a debugging aid,
#: :func:`log_lease`).
LEASE_LOG_VARIABLE = "DIAGNOSTICS_LEASE_LOG"
#: Defaults of :func:`heartbeat_s` and :func:`stale_after_s`.
HEARTBEAT_S = 30.0
STALE_AFTER_S = 300.0
#: Errors of a file system that has no ``flock``: the lease alone decides there.
_NO_FLOCK = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS)
#: Errors of a store that cannot be written: they end the run with one line naming the path.
DISK_ERRORS = (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT, errno.EIO)


def _seconds(variable: str, default: float) -> float:
    try:
        value = float(os.environ.get(variable) or default)
    except ValueError:
        return default
    return value if value > 0 else default


def heartbeat_s() -> float:
    """Seconds between two beats of a held lease (``DIAGNOSTICS_LOCK_HEARTBEAT_S``, default 30)."""
    return _seconds(HEARTBEAT_VARIABLE, HEARTBEAT_S)


def stale_after_s(owner: dict[str, Any] | None = None) -> float:
    """Seconds a reader must watch another host's heartbeat stand still before it counts the owner as dead.

    ``DIAGNOSTICS_LOCK_STALE_S`` (default 300 s), and at least four of the heartbeats ``owner`` recorded.
    """
    bound = _seconds(STALE_VARIABLE, STALE_AFTER_S)
    try:
        return max(bound, 4 * float((owner or {}).get("heartbeat_s") or 0))
    except (TypeError, ValueError):
        return bound


def log_lease(path: str | Path, token: int, event: str) -> None:
    """Append ``<unix time> <pid> <run folder> <token> <event>`` to the file ``DIAGNOSTICS_LEASE_LOG`` names, if set.

    A debugging aid for checking from outside that no run is ever held by two processes at once:
    :meth:`RunLock.acquire` logs ``claim`` once the lease is taken, :meth:`RunLock.release` logs ``release`` before
    the lease is given back (``lost`` when another process had taken it over). One ``write`` of one line to a file
    opened for appending, so the lines of concurrent processes do not mix; errors are ignored.

    Parameters
    ----------
    path : str or Path
        The run folder.
    token : int
        The lease's token.
    event : str
        ``claim``, ``release`` or ``lost``.
    """
    target = os.environ.get(LEASE_LOG_VARIABLE)
    if not target:
        return
    with suppress(OSError):
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{time.time():.6f} {os.getpid()} {path} {token} {event}\n".encode())
        finally:
            os.close(fd)


def _read_record(file: Path) -> dict[str, Any] | None:
    """A JSON object from ``file``; ``None`` when missing or not a JSON object (other read errors propagate)."""
    try:
        value = json.loads(file.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _token(record: dict[str, Any] | None) -> int:
    value = (record or {}).get("token")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def lease_head(path: str | Path) -> tuple[int, dict[str, Any] | None, bool]:
    """The newest lease of a run folder: ``(token, record, released)``.

    ``token`` 0 means no lease was ever taken (``record`` is then a ``LOCK`` written by hand or an older version,
    or ``None``). ``released`` is true when the lease's owner gave it back.
    """
    path = Path(path)
    leases = path / LEASE_FOLDER
    pointer = _read_record(path / "LOCK")
    token = _token(pointer)
    while (leases / str(token + 1)).exists():
        token += 1
    if token == 0:  # never leased: ``LOCK`` (if any) was written by hand or by an older version
        return 0, pointer, False
    record = _read_record(leases / str(token))
    return token, record, (leases / f"{token}.end").exists()


def _beat(path: Path, token: int) -> int | None:
    try:
        return int((path / LEASE_FOLDER / f"{token}.beat").read_text() or 0)
    except (FileNotFoundError, ValueError):
        return None


def _quiet_s(path: Path, token: int, beat: Any) -> float:
    """Seconds this host has watched lease ``token``'s heartbeat stay at ``beat`` (0 at the first sight or a change).

    Observations are kept per host in ``.lease/watch-<host>.json`` with this boot's monotonic clock, so a later
    process of this host goes on watching where an earlier one left off; where that file cannot be written, in
    memory.
    """
    file = path / LEASE_FOLDER / f"watch-{_hostname()}.json"
    now, boot = time.monotonic(), _boot_id()
    key = f"{token}:{beat}"
    try:
        seen = _read_record(file) or {}
    except OSError:
        seen = {}
    seen = {**_memory.get(str(file), {}), **seen}
    first = seen.get(key)
    if isinstance(first, dict) and first.get("boot") == boot and isinstance(first.get("at"), (int, float)):
        return max(0.0, now - float(first["at"]))
    observation = {key: {"at": now, "boot": boot}}
    _memory[str(file)] = observation
    with suppress(OSError):
        from diagnostics.core.io_utils import write_json_atomic

        write_json_atomic(file, observation)
    return 0.0


_memory: dict[str, dict[str, Any]] = {}


def owner_is_live(path: str | Path, token: int, owner: dict[str, Any] | None) -> bool:
    """Whether the owner of lease ``token`` of a run folder still runs.

    On this host (same host name and boot): whether its pid runs. On another host: what SLURM says of the job the
    record names (:func:`~._slurm.owner_job_ended`); where SLURM cannot tell, whether its heartbeat counter has moved
    within the last :func:`stale_after_s` seconds that this host watched it. A record of another host without a
    heartbeat (written by an older version) counts as live. False for none or an unreadable pid.
    """
    if not owner:
        return False
    path = Path(path)
    if owner.get("host") == _hostname():
        if owner.get("boot") and owner.get("boot") != _boot_id():
            return False
        try:
            return _pid_alive(int(owner.get("pid", -1)))
        except (TypeError, ValueError):
            return False
    ended = owner_job_ended(owner)
    if ended is not None:
        return not ended
    if owner.get("heartbeat_s") is None:
        return True
    if token:
        beat: Any = _beat(path, token)
    else:  # an older version's LOCK: its heartbeat touched the file
        try:
            beat = (path / "LOCK").stat().st_mtime_ns
        except FileNotFoundError:
            return False
    return _quiet_s(path, token, beat) <= stale_after_s(owner)


def lock_owner(path: str | Path) -> dict[str, Any] | None:
    """The record of a run's current lease holder (``pid``, ``host``, ``token`` ...); ``None`` when no lease is held
    or its record is unreadable."""
    token, record, released = lease_head(path)
    return None if released else record


def lock_held(path: str | Path) -> bool:
    """Whether a live process holds the lease of a run folder (:func:`lease_head`, :func:`owner_is_live`)."""
    token, record, released = lease_head(path)
    return not released and owner_is_live(path, token, record)


def _describe(owner: dict[str, Any] | None) -> str:
    if not owner:
        return "an unknown owner"
    who = f"pid {owner.get('pid')} on {owner.get('host')}"
    job = owner.get("slurm")
    if isinstance(job, dict) and job.get("job"):
        who += f", SLURM job {job['job']}"
    return who


def _disk_error(err: OSError, path: Path, what: str) -> RunStoreError:
    return RunStoreError(err.errno, f"cannot {what}: {err.strerror or err}", str(path))


#: Every lease this process holds (read by a signal handler, to mark only the runs this process owns).
_held: dict[int, RunLock] = {}
_held_guard = threading.Lock()


def held_locks() -> list[RunLock]:
    """The leases this process holds now, oldest first."""
    with _held_guard:
        return list(_held.values())


class RunLock:
    """The lease of one run folder: claimed with a token, kept alive by a heartbeat, checked before every write.

    Parameters
    ----------
    path : Path
        The run folder (created when missing).
    heartbeat : float, optional
        Seconds between beats; default :func:`heartbeat_s`.

    Raises
    ------
    RunLockedError
        From :meth:`acquire`, when a live process (here or on another host) holds the lease.
    RunStoreError
        From :meth:`acquire`, when the lease cannot be written (full disk, read-only mount, permissions).
    """

    def __init__(self, path: Path, *, heartbeat: float | None = None):
        self.path = Path(path)
        self.file = self.path / "LOCK"
        self.leases = self.path / LEASE_FOLDER
        self.heartbeat = float(heartbeat) if heartbeat else heartbeat_s()
        #: The token of the lease this object holds (0 before :meth:`acquire`).
        self.token = 0
        #: The record of the owner that took this lease over while it was held (``None`` while it is ours).
        self.lost: dict[str, Any] | None = None
        self._flock: int | None = None
        self._record: dict[str, Any] | None = None
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None

    # ---- claiming ---------------------------------------------------------------------------------------------

    def _new_record(self, token: int, flock: bool) -> dict[str, Any]:
        record: dict[str, Any] = {"token": token, "pid": os.getpid(), "host": _hostname(), "boot": _boot_id(),
                                  "heartbeat_s": self.heartbeat, "flock": flock,
                                  "claimed": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        job = current_job()
        if job is not None:
            record["slurm"] = job
        return record

    def acquire(self) -> RunLock:
        """Claim the newest lease and return ``self``; its heartbeat runs until :meth:`release`.

        ``RunLockedError`` when another live process, or this one, holds it; ``RunStoreError`` (one line naming the
        path) when the folder cannot be written.
        """
        try:
            self.leases.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise _disk_error(err, self.leases, "create the run's lease folder") from None
        self._take_flock()
        try:
            for _ in range(20):
                token, owner, released = lease_head(self.path)
                if not released and owner_is_live(self.path, token, owner):
                    self._refuse(owner)
                record = self._new_record(token + 1, self._flock is not None)
                if self._claim(token + 1, record):
                    break
            else:
                raise RunLockedError(f"could not take the lease of {self.path} (contended)")
            self.token, self._record = token + 1, record
            log_lease(self.path, self.token, "claim")
            try:
                self._write_beat(0)
            except OSError as err:
                raise _disk_error(err, self.leases / f"{self.token}.beat", "write") from None
            self._write_pointer(record)
        except BaseException:
            if self.token:  # taken, but its heartbeat or LOCK could not be written: given back, not left "held"
                log_lease(self.path, self.token, "release")
                with suppress(OSError):
                    (self.leases / f"{self.token}.end").touch()
            self._drop_flock()
            self.token, self._record = 0, None
            raise
        with _held_guard:
            _held[id(self)] = self
        self._start_heartbeat()
        return self

    def _take_flock(self) -> None:
        """Hold ``.lease/flock`` where the file system has flock: a live holder that shares our flocks refuses us."""
        if fcntl is None:
            return
        try:
            fd = os.open(self.leases / "flock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise _disk_error(err, self.leases / "flock", "open the run's lock file") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            self._refuse(lock_owner(self.path))
        except OSError as err:
            os.close(fd)
            if err.errno in _NO_FLOCK:
                return
            raise _disk_error(err, self.leases / "flock", "lock") from None
        self._flock = fd

    def _drop_flock(self) -> None:
        if self._flock is not None:
            os.close(self._flock)
            self._flock = None

    def _claim(self, token: int, record: dict[str, Any]) -> bool:
        """Create ``.lease/<token>`` holding ``record``, complete before it is visible; False when another process
        created it first."""
        target = self.leases / str(token)
        tmp = self.leases / f".claim.{os.getpid()}.{uuid.uuid4().hex}"
        try:
            try:
                with open(tmp, "x", encoding="utf-8") as handle:
                    handle.write(json.dumps(record))
                    handle.flush()
                    os.fsync(handle.fileno())
                os.link(tmp, target)
            except FileExistsError:
                return False
            except OSError as err:
                try:  # NFS may report a link that succeeded as failed (a lost reply): the link count tells
                    if os.stat(tmp).st_nlink == 2 and _read_record(target) == record:
                        return True
                except OSError:
                    pass
                raise _disk_error(err, target, "write the run's lease") from None
            return True
        finally:
            with suppress(OSError):
                tmp.unlink()

    def _write_beat(self, beat: int) -> None:
        from diagnostics.core.io_utils import write_text_atomic

        write_text_atomic(self.leases / f"{self.token}.beat", str(beat))

    def _write_pointer(self, record: dict[str, Any]) -> None:
        """``LOCK``: a copy of the owner's record (the newest generation's pointer; never compared, only read)."""
        from diagnostics.core.io_utils import write_json_atomic

        try:
            write_json_atomic(self.file, record)
        except OSError as err:
            raise _disk_error(err, self.file, "write") from None

    def _refuse(self, owner: dict[str, Any] | None) -> NoReturn:
        if owner is not None and owner.get("pid") == os.getpid() and owner.get("host") == _hostname():
            raise RunLockedError(f"{self.path} is already locked by this process (pid {os.getpid()})")
        hint = ""
        if owner and owner.get("host") != _hostname():
            hint = (f" A lease of another host is taken over once SLURM says its job has ended, or once this host "
                    f"has watched its heartbeat stand still for {stale_after_s(owner):.0f} s.")
        raise RunLockedError(f"run {self.path} is being trained by another process ({_describe(owner)}); wait for "
                             f"it, or stop it.{hint}")

    # ---- holding ----------------------------------------------------------------------------------------------

    def holds(self) -> bool:
        """Whether the newest lease of the run is still this object's (read from the folder, not remembered)."""
        if not self.token:
            return False
        token, record, released = lease_head(self.path)
        return token == self.token and not released

    def ensure(self) -> None:
        """Raise :class:`RunLockLost` unless the newest lease of the run is still this object's.

        Every write of the run's owner calls it just before its commit (:class:`~._run_writer.RunWriter`).
        """
        if self.holds():
            return
        token, record, released = lease_head(self.path)
        if self.lost is None:
            self.lost = record or {}
        raise RunLockLost(self.lost_message(record if token != self.token else None))

    def lost_message(self, owner: dict[str, Any] | None = None) -> str:
        """``run <path>: lost to host H, pid P at <time>; ...``: why this owner writes nothing more."""
        owner = owner if owner is not None else self.lost
        if owner:
            when = owner.get("claimed", "an unknown time")
            return (f"run {self.path}: lease lost to {_describe(owner)} at {when} (this process was judged dead); "
                    f"it writes nothing more into that run")
        return f"run {self.path}: lease {self.token} is no longer this process's; it writes nothing more into that run"

    def _start_heartbeat(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat_loop, args=(self._stop,), name=f"heartbeat {self.path}",
                                        daemon=True)
        self._thread.start()

    def _beat_loop(self, stop: threading.Event) -> None:
        """Advance the heartbeat counter every :attr:`heartbeat` seconds; note a takeover in :attr:`lost` and stop."""
        beat = 0
        while not stop.wait(self.heartbeat):
            try:
                if not self.holds():
                    if stop.is_set():
                        return
                    token, record, released = lease_head(self.path)
                    self.lost = record or {}
                    sys.stderr.write(self.lost_message() + "\n")
                    return
                beat += 1
                self._write_beat(beat)
            except OSError:
                pass  # a passing disk error: the next beat tries again

    def _stop_heartbeat(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._stop, self._thread = None, None

    def release(self) -> None:
        """Stop the heartbeat and give the lease back (only while it is still this object's): ``.lease/<n>.end``,
        ``LOCK`` removed. A lost lease is left to its new owner."""
        self._stop_heartbeat()
        with _held_guard:
            _held.pop(id(self), None)
        try:
            held = bool(self.token) and self.holds()
            if self.token:
                log_lease(self.path, self.token, "release" if held else "lost")
            if held:
                with suppress(OSError):
                    (self.leases / f"{self.token}.end").touch()
                if _token(_read_record(self.file)) == self.token:
                    with suppress(OSError):
                        self.file.unlink()
        except OSError:
            pass  # an unreadable folder: the lease goes stale and is taken over
        finally:
            self._drop_flock()
            self.token, self._record = 0, None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
