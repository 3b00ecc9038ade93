"""The fleet's extras: `llamadiag[fleet]` gives the whole command, `llamadiag[fleet-worker]` only
what a Dask worker host runs. Neither installs numpy, which `distributed` imports in every worker
when it is installed (+14 MiB: docs/fleet.md, peak RSS per worker): the `--html` page's pictures
are drawn with plotly, which does not need it, so a LocalCluster that `--workers N` starts from a
`[fleet]` environment is as lean as a worker host's."""

from __future__ import annotations

import importlib.util
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
    assert {"plotly", "pysigma", "pysigma-backend-loki"} <= _names(EXTRAS["fleet"])
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


NUMPY_AND_ITS_USERS = {"numpy", "matplotlib", "pandas"}


def test_a_worker_host_does_not_get_numpy_or_matplotlib() -> None:
    pytest.importorskip("distributed", reason="the fleet extra is not installed")
    pulled = _closure(_names(EXTRAS["fleet-worker"]))
    assert {"dask", "distributed", "tornado"} <= pulled
    assert not pulled & NUMPY_AND_ITS_USERS


def test_the_whole_fleet_extra_does_not_get_numpy() -> None:
    """What `pip install 'llamadiag[fleet]'` pulls in, read from the installed distributions'
    own requirements: the LocalCluster of `--workers N` starts in that environment."""
    pytest.importorskip("plotly", reason="the fleet extra is not installed")
    fleet = _names(EXTRAS["fleet"]) - {"llamadiag"}
    pulled = _closure(fleet | _names(EXTRAS["fleet-worker"]))
    assert {"plotly", "narwhals", "distributed", "pysigma"} <= pulled
    assert not pulled & NUMPY_AND_ITS_USERS


def test_the_local_cluster_of_workers_n_carries_no_numpy() -> None:
    """`--workers 1`'s LocalCluster, started as the command starts it: its worker has not
    imported numpy (distributed would, on start, were it installed)."""
    pytest.importorskip("distributed", reason="the fleet extra is not installed")
    if importlib.util.find_spec("numpy") is not None:
        pytest.skip("numpy is installed here by something outside the fleet extra (not a `[fleet]` environment)")
    from llamadiag.cli.fleet import _backend
    from llamadiag.features.fleet.dask_backend import DaskBackend
    from tests.features.fleet import worker_probe

    with _backend(None, 1, None) as (backend, _):
        assert isinstance(backend, DaskBackend)
        modules = backend.client.run(worker_probe.loaded_modules)
    assert len(modules) == 1
    for loaded in modules.values():
        assert "distributed" in loaded and "numpy" not in loaded
