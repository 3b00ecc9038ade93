"""llamadiag: a troubleshooting expert system for llama.cpp's llama-server logs.

The public interface is `llamadiag.api` (docs/api.md); its names are also available here,
imported on first use so that `import llamadiag` (and every command's start-up) stays light:

    import llamadiag
    diagnosis = llamadiag.diagnose("server.log")
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "Diagnosis",
    "Finding",
    "InputError",
    "Knowledge",
    "Report",
    "__version__",
    "api",
    "diagnose",
    "diagnose_stream",
    "diagnose_text",
    "load_knowledge",
]


def __getattr__(name: str) -> Any:
    """The names of `llamadiag.api`, imported when first asked for."""
    if name in __all__:
        import importlib

        api = importlib.import_module("llamadiag.api")
        return api if name == "api" else getattr(api, name)
    raise AttributeError(f"module 'llamadiag' has no attribute {name!r}")
