"""cgu-lab: a teaching GPU platform built on JupyterLab.

The package holds three parts (see README): the server extension that runs
inside every notebook (`cgu_lab.notebook`), the controller service
(`cgu_lab.controller`) and the rules they share (`cgu_lab.core`).
"""

try:
    from ._version import __version__
except ImportError:  # pragma: no cover - only in a source tree never built
    __version__ = "0.0.0.dev0"


def _jupyter_labextension_paths():
    return [{"src": "labextension", "dest": "cgu-lab"}]


def _jupyter_server_extension_points():
    from .notebook.app import CguLabExtension

    return [{"module": "cgu_lab", "app": CguLabExtension}]
