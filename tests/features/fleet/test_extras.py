"""The fleet's extras: `llamadiag[fleet]` gives the whole command, `llamadiag[fleet-worker]` only
what a Dask worker host runs, without matplotlib and so without numpy (which `distributed`
imports in every worker when it is installed: docs/fleet.md, peak RSS per worker)."""

from __future__ import annotations

import tomllib
from importlib import metadata

import pytest
from packaging.requirements import Requirement

from tests.paths import ROOT

EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _names(requirements: list[str]) -> set[str]:
    return {Requirement(r).name.lower() for r in requirements}


def test_the_fleet_extra_holds_the_worker_extra_and_the_parents_libraries() -> None:
    assert "llamadiag[fleet-worker]" in EXTRAS["fleet"]
    assert {"matplotlib", "pysigma", "pysigma-backend-loki"} <= _names(EXTRAS["fleet"])
    assert _names(EXTRAS["fleet-worker"]) == {"dask", "distributed", "fsspec"}


def _closure(names: set[str]) -> set[str]:
    """The installed distributions these names pull in (their unconditional requirements)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for r in metadata.requires(name) or []:
            req = Requirement(r)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name.lower())
    return seen


def test_a_worker_host_does_not_get_numpy_or_matplotlib() -> None:
    pytest.importorskip("distributed", reason="the fleet extra is not installed")
    pulled = _closure(_names(EXTRAS["fleet-worker"]))
    assert {"dask", "distributed", "tornado"} <= pulled
    assert not pulled & {"numpy", "matplotlib", "pandas"}
