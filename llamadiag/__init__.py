"""llamadiag: a troubleshooting expert system for llama-server logs."""

__version__ = "0.1.0"
