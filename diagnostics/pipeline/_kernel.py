"""The kernel managers that execute notebooks: a kernel that finished is shut down without an interrupt, and where
Unix sockets exist it listens on sockets of its own, not on TCP ports."""

from __future__ import annotations

import os
import shutil
import tempfile

from jupyter_client.manager import AsyncKernelManager
from traitlets import default


class QuietShutdownKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` that asks its kernel to shut down without interrupting it first.

    jupyter_client sends SIGINT before every shutdown request; a kernel that is idle between messages (as after the
    last cell of a notebook) then logs ``KeyboardInterrupt caught in kernel`` at ERROR level, on the terminal of
    whoever runs the main job, though nothing went wrong. An interrupt asked for outright (a cell that runs past
    its timeout) is still sent.
    """

    async def _async_interrupt_kernel(self) -> None:
        if self.shutting_down:  # set by the shutdown before it interrupts; the shutdown request follows
            return
        await super()._async_interrupt_kernel()


class PrivateSocketKernelManager(QuietShutdownKernelManager):
    """A :class:`QuietShutdownKernelManager` whose kernel's five channels are Unix sockets in a fresh temporary folder.

    With TCP, the manager picks free ports, releases them and lets the kernel bind them a second or two later; in
    that gap another process on the machine (a second kernel starting, any client opening a connection) can take one
    of them, and the kernel dies with ``Address already in use``. A socket path of its own cannot be taken: the
    folder is created for this kernel alone, and removed with its sockets when the kernel shuts down.
    Pass it as ``kernel_manager_class`` to nbclient or papermill (see :func:`notebook_kernel_manager`).
    """

    _socket_dir: str | None = None

    @default("transport")
    def _transport_default(self) -> str:
        return "ipc"

    @default("ip")
    def _ip_default(self) -> str:
        # a short path: a Unix socket's path is limited to about 100 bytes
        self._socket_dir = tempfile.mkdtemp(prefix="nbkernel-")
        return os.path.join(self._socket_dir, "channel")

    def cleanup_ipc_files(self) -> None:
        """Remove the kernel's sockets and their folder."""
        super().cleanup_ipc_files()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)


#: The longest Unix socket path every platform takes (Linux 107 bytes, macOS 103).
MAX_SOCKET_PATH = 100


def notebook_kernel_manager() -> type[AsyncKernelManager]:
    """The kernel manager class to execute notebooks with.

    :class:`PrivateSocketKernelManager` where Unix sockets exist (Linux, macOS) and the temporary folder's path
    leaves room for a socket's name; else :class:`QuietShutdownKernelManager` over jupyter_client's TCP default
    (Windows, or a very long ``TMPDIR``).
    """
    longest = os.path.join(tempfile.gettempdir(), "nbkernel-xxxxxxxx", "channel-5")
    if os.name == "posix" and len(longest.encode()) <= MAX_SOCKET_PATH:
        return PrivateSocketKernelManager
    return QuietShutdownKernelManager
