"""The error types for input a user can fix, and how the command line reports them.

Every check of user input (data files, configs, tables, paths, options) raises a :class:`UserInputError` whose
message is one line naming the file and line, or the key, then what was expected and what was found. The command
line prints such an error as ``error: <message>`` and exits with :data:`USER_ERROR_EXIT`, without a traceback;
any other exception is a bug and keeps its traceback. ``DIAGNOSTICS_TRACEBACK=1`` shows tracebacks for user
errors too.

Errors of the disk and the file system (a full disk, a read-only mount, permissions, a folder where a file should
be: :data:`DISK_ERRNOS`, or any operating-system error naming a file) are not bugs either: they are printed the
same way, as ``error: <path>: <reason>``.
"""

from __future__ import annotations

import errno
import os

USER_ERROR_EXIT = 2
TRACEBACK_VARIABLE = "DIAGNOSTICS_TRACEBACK"


#: Operating-system errors about the place a command reads or writes, reported as one line even without a file name.
DISK_ERRNOS = frozenset(getattr(errno, name) for name in (
    "ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EISDIR", "ENOTDIR", "ENOENT", "EEXIST", "ENOTEMPTY", "ELOOP",
    "ENAMETOOLONG", "EFBIG", "EIO", "EXDEV", "EMLINK", "ETXTBSY", "EBUSY", "ESTALE") if hasattr(errno, name))


class UserInputError(ValueError):
    """Input the user can fix: a data file, a config, a table, a path or an option.

    The message is one line: ``<file>:<line>: ...`` or ``<key>: ...``, what was expected and what was found.
    """


class UnknownNameError(UserInputError, KeyError):
    """A name (dataset, key, language, model ...) that is not registered; a ``KeyError`` for lookups."""

    def __str__(self) -> str:
        # KeyError quotes its message; a user reads it as a sentence
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


def is_user_error(err: BaseException) -> bool:
    """Whether an exception reports input the user can fix rather than a bug.

    Parameters
    ----------
    err : BaseException
        The exception raised by a command.

    Returns
    -------
    bool
        ``True`` for :class:`UserInputError` and for operating-system errors about a path or the disk: one that
        names a file, or one whose errno is in :data:`DISK_ERRNOS` (a full disk, a read-only mount,
        permissions, a folder where a file was expected ...).
    """
    if isinstance(err, (UserInputError, FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError,
                        FileExistsError)):
        return True
    return isinstance(err, OSError) and (err.filename is not None or err.errno in DISK_ERRNOS)


def one_line(err: BaseException) -> str:
    """The message of an error as one line (line breaks become ``; ``).

    Parameters
    ----------
    err : BaseException
        Any exception.

    Returns
    -------
    str
        Its message; for an operating-system error with a file name, ``<file>: <reason>``.
    """
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        text = f"{err.filename}: {err.strerror}"
    elif isinstance(err, KeyError) and not isinstance(err, UnknownNameError) and len(err.args) == 1:
        text = str(err.args[0])
    else:
        text = str(err) or type(err).__name__
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def show_tracebacks() -> bool:
    """Whether ``DIAGNOSTICS_TRACEBACK`` asks for tracebacks of user errors too.

    Returns
    -------
    bool
        ``True`` when the variable is set to anything but ``""`` or ``0``.
    """
    return os.environ.get(TRACEBACK_VARIABLE, "") not in ("", "0")
