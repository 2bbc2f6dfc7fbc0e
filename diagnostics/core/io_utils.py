"""Write files whole or not at all, never through a link planted in the output folder, and output sets at once.

**One file.** :func:`atomic_path` creates a fresh temporary file beside the target (exclusively, never following a
symbolic link: ``O_CREAT | O_EXCL | O_NOFOLLOW``), lets the caller write it, then ``os.replace`` puts it over the
target. A reader (or a process started after a crash) sees the previous file or the new one, never a truncated
one; and ``os.replace`` replaces a symbolic link at the target's name by the file, it never writes through the
link. Every writer of caches, run stores, tables, figures and pages goes through :func:`atomic_path`
(:func:`write_text_atomic`, :func:`write_json_atomic` for text).

**Several files.** :func:`output_folder` writes the files of one output set (``stats --out``, a comparison, an
import report) into a fresh hidden folder beside the target folder and swaps it in by one rename
(``renameat2(RENAME_EXCHANGE)`` where Linux offers it). A process killed at any point, or two processes writing the
same folder at once, leave the old set or one whole new set, never a mix. Files in the folder that the set does
not own are carried over into the new folder (hard links).

**Disk errors.** An ``OSError`` while writing (a full disk, a read-only mount, a folder where the file should go)
comes out naming the target path, with the operating system's reason; the clean-up of the temporary file never
hides it. The command line prints it as one line, ``error: <path>: <reason>`` (see :mod:`diagnostics.core.errors`).
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

#: Test hook: ``file:<k>`` pauses an output set after its k-th file, ``commit`` after the swap but before the old
#: set is removed. The process prints ``paused at <point>`` on stderr, then waits until the file named by
#: :data:`PAUSE_GATE_VARIABLE` exists (or for five minutes), so that a test can kill it there or let it go on.
PAUSE_VARIABLE = "DIAGNOSTICS_TEST_PAUSE_AT"
#: Test hook: the file whose creation ends a pause of :data:`PAUSE_VARIABLE`.
PAUSE_GATE_VARIABLE = "DIAGNOSTICS_TEST_PAUSE_GATE"

_NAME_ROOM = 160  # characters of the target's name kept in a temporary name (the rest must fit in NAME_MAX)
_ERRNO_IN_TEXT = re.compile(r"errno[ =:]*(\d+)", re.IGNORECASE)


def temporary_path(path: str | Path) -> Path:
    """A fresh name for a temporary file beside ``path`` (the file is not created).

    Parameters
    ----------
    path : str or Path
        The target file.

    Returns
    -------
    Path
        ``.<name>.tmp<pid>.<random>`` in the target's folder: hidden, and distinct per process and call.
    """
    path = Path(path)
    return path.with_name(f".{path.name[:_NAME_ROOM]}.tmp{os.getpid()}.{secrets.token_hex(4)}")


def about_path(err: OSError, path: str | Path, *aliases: str | Path) -> OSError:
    """The same operating-system error, naming ``path`` (what the user asked for) instead of a temporary file.

    Parameters
    ----------
    err : OSError
        Raised while writing ``path`` (its temporary file, or a library writing to it).
    path : str or Path
        The target the user named.
    *aliases : str or Path
        Other names of the same output (its temporary file or folder).

    Returns
    -------
    OSError
        ``err`` itself when it names ``path`` already or names another file (an input read in the block);
        otherwise an error of the same errno and reason naming ``path``. Errors of libraries that give no errno
        (pyarrow's ``[errno 28] ...`` messages) get the errno found in their text.
    """
    target = str(path)
    ours = {target, *map(str, aliases)}
    if err.filename is not None and (str(err.filename) not in ours or (str(err.filename) == target and err.strerror)):
        return err
    code = err.errno
    if code is None:
        found = _ERRNO_IN_TEXT.search(str(err))
        code = int(found.group(1)) if found else None
    reason = os.strerror(code) if code else (err.strerror or " ".join(str(err).split()) or type(err).__name__)
    new = OSError(code or errno.EIO, reason, target)
    new.__cause__ = err
    return new


def _create_exclusively(target: Path) -> Path:
    """Create an empty temporary file beside ``target``: a new name, never through an existing file or link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = temporary_path(target)
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as err:  # a read-only or full file system: the error names the target, not a temporary name
            raise OSError(err.errno, err.strerror, str(target)) from err
        os.close(fd)
        return tmp
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))


def _discard(path: Path) -> None:
    """Remove a temporary file or folder; a failure here (a read-only mount) never hides the error being raised."""
    with suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | Path, *, shown: str | Path | None = None) -> Iterator[Path]:
    """Yield a new temporary file to write; on success it replaces ``path``, on any error it is removed.

    Parameters
    ----------
    path : str or Path
        The target file. Its folder must exist (the temporary file goes beside it, on the same file system).
    shown : str or Path, optional
        The path errors name (default ``path``); an output set names the file's final place, not its staging one.

    Yields
    ------
    Path
        An empty file this call created (see :func:`temporary_path`); write the new content to it.

    Raises
    ------
    OSError
        Creating, writing or renaming failed (a full disk, a read-only mount, a folder at ``path`` ...): the error
        names ``path`` (see :func:`about_path`); the target is left as it was.

    Notes
    -----
    An exception in the block (``KeyboardInterrupt`` included) propagates and leaves the target as it was; the
    temporary file is removed, and a failure to remove it is ignored so that it never replaces the first error.
    A symbolic link at ``path`` is replaced by the file, never written through. A process killed by a signal
    leaves its temporary file behind, never a partial target.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "table.csv"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("a,b\\n1,2\\n")
    >>> target.read_text()
    'a,b\\n1,2\\n'
    """
    target = Path(path)
    shown = target if shown is None else shown
    try:
        tmp = _create_exclusively(target)
    except OSError as err:
        raise about_path(err, shown) from None
    try:
        yield tmp
        mode = os.lstat(tmp).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EEXIST, "its temporary file was replaced by a link or a folder while it was written",
                          str(shown))
        os.replace(tmp, target)
    except OSError as err:
        _discard(tmp)
        raise about_path(err, shown, tmp, target) from None
    except BaseException:
        _discard(tmp)
        raise


def write_text_atomic(path: str | Path, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` through :func:`atomic_path`.

    Parameters
    ----------
    path : str or Path
        The target file (its folder must exist).
    text : str
        The content.
    encoding : str
    """
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)


def write_json_atomic(path: str | Path, payload: Any, *, indent: int | None = 2, sort_keys: bool = True,
                      default: Callable[[Any], Any] | None = str) -> None:
    """Write ``payload`` as UTF-8 JSON through :func:`atomic_path`.

    Parameters
    ----------
    path : str or Path
        The target file (its folder must exist).
    payload : object
        Anything ``json.dumps`` accepts.
    indent : int or None
        Passed to ``json.dumps``. The defaults (indented, sorted keys, other objects as ``str``) are the run
        store's format; ``indent=None, sort_keys=False, default=None`` gives plain ``json.dumps(payload)``.
    sort_keys : bool
        Passed to ``json.dumps``.
    default : callable or None
        Passed to ``json.dumps``: how objects JSON cannot encode are written (``None``: they raise ``TypeError``).
    """
    text = json.dumps(payload, indent=indent, sort_keys=sort_keys, default=default)
    write_text_atomic(path, text)


# --- output sets ------------------------------------------------------------------------------------------------


def move_into_place(staged: str | Path, target: str | Path) -> None:
    """Rename a file or folder written whole elsewhere on the same file system over ``target`` in one step.

    A folder already at ``target`` is first renamed aside beside ``staged`` and removed after, so a reader sees the
    old folder or the new one, never a mix (between the two renames, none).

    Parameters
    ----------
    staged : str or Path
        The finished file or folder.
    target : str or Path
        Its place; a symbolic link there is replaced, never followed.
    """
    staged, target = Path(staged), Path(target)
    if target.is_dir() and not target.is_symlink():
        aside = staged.with_name(f".replaced-{staged.name}.{secrets.token_hex(4)}")
        os.replace(target, aside)
        os.replace(staged, target)
        shutil.rmtree(aside, ignore_errors=True)
        return
    os.replace(staged, target)


class OutputSet:
    """The files of one output folder, staged in a hidden folder beside it until :func:`output_folder` commits them.

    Parameters
    ----------
    folder : Path
        The output folder the user named.
    staging : Path
        The hidden folder the files are written to.
    """

    def __init__(self, folder: Path, staging: Path):
        self.folder, self.staging = folder, staging
        self.written: list[str] = []

    @contextmanager
    def file(self, name: str) -> Iterator[Path]:
        """Yield a temporary path to write the set's file ``name`` to (see :func:`atomic_path`).

        Parameters
        ----------
        name : str
            A file name (no folder).

        Yields
        ------
        Path
            Where to write it.
        """
        if Path(name).name != name or name in (".", ".."):
            raise ValueError(f"an output set holds plain file names, found {name!r}")
        with atomic_path(self.staging / name, shown=self.folder / name) as tmp:
            yield tmp
        self.written.append(name)
        _pause_point(f"file:{len(self.written)}")

    def path(self, name: str) -> Path:
        """Where the set's file ``name`` will be once the set is committed.

        Parameters
        ----------
        name : str
            A file name.

        Returns
        -------
        Path
            ``folder / name``.
        """
        return self.folder / name


@contextmanager
def output_folder(folder: str | Path, owned: Collection[str]) -> Iterator[OutputSet]:
    """Write a set of files into ``folder`` as one: all of them replace the previous set, or none does.

    Parameters
    ----------
    folder : str or Path
        The output folder (created with its parents).
    owned : collection of str
        Every file name a set of this kind may hold. The previous set's owned files are replaced as a whole (one
        this call does not write is gone afterwards); other entries of the folder are carried over.

    Yields
    ------
    OutputSet
        Write each file with ``with out.file(name) as tmp: ...``; a writer that fills a folder itself (such as
        ``save_pretrained``) may write into ``out.staging``: whatever the staging folder holds is the new set.

    Raises
    ------
    OSError
        A disk error, naming the path (see :func:`atomic_path`); the folder keeps its previous set.

    Notes
    -----
    The files go to a new hidden folder beside ``folder`` (``.<name>.tmp<pid>.<random>``). On success the entries
    of ``folder`` that the set does not own are hard-linked into it (copied where links are impossible), and it
    takes the place of ``folder`` by one atomic exchange (Linux ``renameat2``; elsewhere two renames, between which
    the folder is briefly absent); the old folder is then removed. Writers of one folder take turns at that
    moment (``flock`` on the parent folder). A process killed before the exchange leaves the old set and its
    hidden staging folder; one killed after it, the new set and the hidden old folder. A folder that is a mount
    point cannot be renamed: there the staging folder is hidden inside it and its files replace the old ones one
    by one (each whole, the set not at once).
    """
    folder = Path(folder)
    if folder.is_symlink() and folder.is_dir():
        folder = folder.resolve()
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
        staging = _make_staging(folder)
    except OSError as err:
        raise about_path(err, folder) from None
    out = OutputSet(folder, staging)
    try:
        yield out
        _commit(out, set(owned) | set(os.listdir(staging)))
    except OSError as err:
        _discard(staging)
        raise about_path(err, folder, staging) from None
    except BaseException:
        _discard(staging)
        raise


def _make_staging(folder: Path) -> Path:
    # A mount point cannot be renamed (nor linked into from the parent's file system): stage inside it instead.
    where = folder / folder.name if os.path.ismount(folder) else folder
    for _ in range(100):
        staging = temporary_path(where)
        try:
            os.mkdir(staging, 0o777)
        except FileExistsError:
            continue
        if folder.is_dir():
            with suppress(OSError):
                os.chmod(staging, stat.S_IMODE(os.stat(folder).st_mode))
        return staging
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def _commit(out: OutputSet, owned: set[str]) -> None:
    folder, staging = out.folder, out.staging
    with _parent_lock(folder.parent):
        while True:
            if not os.path.lexists(folder):
                try:
                    os.rename(staging, folder)
                except OSError as err:  # another writer created it meanwhile
                    if err.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                        raise
                    continue
                _pause_point("commit")
                return
            if not folder.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
            if staging.parent == folder:  # a mount point: file by file (each atomic, the set not)
                _replace_owned(staging, folder, owned)
                return
            _carry_over(folder, staging, owned)
            old = _exchange(staging, folder)
            _pause_point("commit")
            _rescue(old, folder, owned)
            _discard(old)
            return


def _replace_owned(staging: Path, folder: Path, owned: set[str]) -> None:
    """Move the staged files over the folder's and remove its owned entries the new set lacks, then the staging."""
    staged = set(os.listdir(staging))
    for name in sorted(staged):
        os.replace(staging / name, folder / name)
    for name in sorted(owned - staged):
        if os.path.lexists(folder / name):
            _discard(folder / name)
    os.rmdir(staging)
    _pause_point("commit")


def _carry_over(old: Path, new: Path, owned: set[str]) -> None:
    """Link the entries of ``old`` that the set does not own into ``new`` (files, links and folders)."""
    for entry in os.scandir(old):
        if entry.name in owned or os.path.lexists(new / entry.name):
            continue
        source, dest = Path(entry.path), new / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(source), dest)
        elif entry.is_dir(follow_symlinks=False):
            shutil.copytree(source, dest, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(source, dest)


def _link_or_copy(source, dest) -> None:
    try:
        os.link(source, dest, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, dest, follow_symlinks=False)


def _rescue(old: Path, folder: Path, owned: set[str]) -> None:
    """Move into ``folder`` what someone else created in the old folder while the new set was being swapped in."""
    with suppress(OSError):
        for entry in os.scandir(old):
            if entry.name not in owned and not os.path.lexists(folder / entry.name):
                with suppress(OSError):
                    os.rename(entry.path, folder / entry.name)


def _exchange(staging: Path, folder: Path) -> Path:
    """Swap ``staging`` in as ``folder``; returns where the old folder now is (to be removed)."""
    if _renameat2(staging, folder):
        return staging
    old = temporary_path(folder)
    os.rename(folder, old)
    try:
        os.rename(staging, folder)
    except OSError:
        with suppress(OSError):
            os.rename(old, folder)
        raise
    return old


def _renameat2(a: Path, b: Path) -> bool:
    """Atomically exchange two paths (Linux ``renameat2(RENAME_EXCHANGE)``); ``False`` where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        func = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if func(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False  # a file system without the exchange: the two renames instead
    raise OSError(code, os.strerror(code), str(b))


@contextmanager
def _parent_lock(parent: Path) -> Iterator[None]:
    try:
        import fcntl

        fd = os.open(parent, os.O_RDONLY)
    except (ImportError, OSError):
        yield
        return
    try:
        with suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _pause_point(point: str) -> None:
    """The test hook of :data:`PAUSE_VARIABLE` (a no-op unless the variable names ``point``)."""
    if os.environ.get(PAUSE_VARIABLE) != point:
        return
    print(f"paused at {point}", file=sys.stderr, flush=True)
    gate = os.environ.get(PAUSE_GATE_VARIABLE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (gate and os.path.exists(gate)):
        time.sleep(0.05)

