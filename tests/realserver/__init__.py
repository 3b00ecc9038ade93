"""Tests against the real llama-server (see docs/real-server.md)."""
