"""The build's kernels talk to it over encrypted sockets (CurveZMQ), with no warning.

ipykernel >= 7 logs ``Kernel is running over TCP without encryption ...`` at every kernel
start when jupyter_client starts it with its default ``transport_encryption = "disabled"``:
the kernel's sockets (TCP on localhost) then carry code and outputs in plain text, readable
by any local user. jupyter_client >= 8.10 can provision CurveZMQ keys for kernels whose
kernelspec declares ``"supported_encryption": ["curve"]`` (ipykernel 7's does), but only when
asked, and MyST-NB, jupyter-cache and nbclient create their kernel managers without a way to
pass that setting (nor does traitlets read it from the environment).

``use_encryption()`` therefore makes ``"auto"`` the default of every ``KernelManager`` created
in this process afterwards: encrypted when the kernel supports it, as before otherwise. (The
``ipc`` transport would also silence the warning, but its socket names are chosen by
counting existing files, which races when two kernels start at once.) Used by this Sphinx
extension (the pages MyST-NB executes during the build) and by
``scripts/execute_chapters.py`` (the chapters, executed before the build).
"""

from __future__ import annotations


def use_encryption() -> bool:
    """Default new kernel managers to CurveZMQ encryption; False if libzmq lacks it."""
    import zmq
    from jupyter_client.manager import KernelManager

    if not zmq.has("curve"):
        return False
    KernelManager.class_traits()["transport_encryption"].default_value = "auto"
    return True


def setup(app):
    use_encryption()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
