"""Checks of the files a command will write or reads back: a writable place for each output, and damaged files.

Every command checks its output paths with :func:`check_output_path` before it reads or computes anything, so a
read-only mount or a file in the way is reported at once and nothing is half written. Files the toolkit wrote
itself (the explorer's data, manifests, model configs) are read back with :func:`read_json`, which names the file
and what is wrong with it instead of failing with a traceback.
"""

from __future__ import annotations

import errno
import json
import os
from contextlib import suppress
from pathlib import Path

from .errors import UserInputError


def check_output_path(path: str | Path, *, folder: bool = False, option: str = "--out") -> Path:
    """Check that ``path`` can be written before any work is done: its type, and a writable place for it.

    Parameters
    ----------
    path : str or Path
        An output file, or (``folder=True``) an output folder.
    folder : bool
        Whether ``path`` is a folder.
    option : str
        The option that named it, for messages.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    UserInputError
        ``path`` is a folder where a file is wanted (or the other way round), or lies under a file.
    OSError
        The nearest existing folder above it is on a read-only file system (``EROFS``) or not writable
        (``EACCES``); the error names ``path``.
    """
    path = Path(path)
    if path.is_symlink() and not path.exists():
        pass  # a dangling link at the name is replaced, never followed
    elif path.exists():
        if folder and not path.is_dir():
            raise UserInputError(f"{option} {path}: expected a folder, but it is a file")
        if not folder and path.is_dir():
            raise UserInputError(f"{option} {path}: expected a file name, but it is a folder")
    for above in path.parents:
        if above.exists():
            if not above.is_dir():
                raise UserInputError(f"{option} {path}: expected a {'folder' if folder else 'file'}, but it lies "
                                     f"under {above}, which is a file")
            _check_writable(above, path)
            break
    return path


def _check_writable(folder: Path, path: Path) -> None:
    read_only = False
    with suppress(OSError, AttributeError):  # statvfs is POSIX only
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    if read_only:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(path))


def read_json(path: str | Path, what: str = "a JSON document"):
    """Read a JSON file the toolkit wrote (a payload, a manifest, a config), refusing a damaged one in one line.

    Parameters
    ----------
    path : str or Path
    what : str
        What the file should hold, for the message (``"the explorer's data (JSON)"``).

    Returns
    -------
    object
        The parsed document.

    Raises
    ------
    UserInputError
        The file is not UTF-8, not JSON, or cut short: ``<path>: expected <what>, found ...``.
    OSError
        The file cannot be read (missing, a folder, permissions): names the file.
    """
    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise UserInputError(f"{path}: expected {what}, found undecodable bytes at byte {err.start}") from None
    if not text.strip():
        raise UserInputError(f"{path}: expected {what}, found an empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        rest = text.rstrip()
        # the file ends where the parser stopped, or inside a string (JSON strings never span lines)
        cut = err.pos >= len(rest) - 1 or (err.msg.startswith("Unterminated string") and "\n" not in rest[err.pos:])
        found = (f"a file cut short at line {err.lineno} (truncated?)" if cut
                 else f"invalid JSON at line {err.lineno}, column {err.colno} ({err.msg})")
        raise UserInputError(f"{path}: expected {what}, found {found}") from None
