"""Notebooks execute in kernels that listen on sockets of their own, which no other process can take."""

import glob
import json
import os
import tempfile

import nbformat
import pytest
from nbclient import NotebookClient

from diagnostics.pipeline._kernel import notebook_kernel_manager

pytestmark = pytest.mark.skipif(os.name != "posix", reason="Unix sockets")


def _connection_of_executed_notebook():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import json, os\nfrom ipykernel import get_connection_info\ninfo = json.loads(get_connection_info())\n"
        "print(json.dumps({'transport': info['transport'], 'ip': info['ip'],"
        " 'sockets': sorted(os.listdir(os.path.dirname(info['ip'])))}))")])
    NotebookClient(nb, kernel_name="python3", timeout=120, kernel_manager_class=notebook_kernel_manager()).execute()
    return json.loads(nb.cells[0].outputs[0]["text"])


def test_kernel_listens_on_private_unix_sockets_removed_at_shutdown():
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "nbkernel-*")))
    info = _connection_of_executed_notebook()
    assert info["transport"] == "ipc"
    folder = os.path.dirname(info["ip"])
    assert folder not in before and os.path.basename(folder).startswith("nbkernel-")
    # the five channels: shell, iopub, stdin, control, heartbeat
    assert info["sockets"] == [f"channel-{n}" for n in range(1, 6)]
    assert not os.path.exists(folder)


def test_two_kernels_get_separate_sockets():
    first, second = _connection_of_executed_notebook(), _connection_of_executed_notebook()
    assert first["ip"] != second["ip"]



def test_a_temporary_folder_too_long_for_a_socket_falls_back_to_tcp(tmp_path, monkeypatch):
    from diagnostics.pipeline._kernel import MAX_SOCKET_PATH, PrivateSocketKernelManager, QuietShutdownKernelManager

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / ("t" * MAX_SOCKET_PATH)))
    assert notebook_kernel_manager() is QuietShutdownKernelManager
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    assert notebook_kernel_manager() is PrivateSocketKernelManager


def test_a_finished_kernel_is_shut_down_without_an_interrupt(monkeypatch):
    """jupyter_client interrupts a kernel before shutting it down, and ipykernel then logs an ERROR line."""
    from jupyter_client.manager import KernelManager

    sent = []
    original = KernelManager._async_interrupt_kernel

    async def counting(self):
        sent.append(self.shutting_down)
        await original(self)

    monkeypatch.setattr(KernelManager, "_async_interrupt_kernel", counting)
    _connection_of_executed_notebook()
    assert sent == []
