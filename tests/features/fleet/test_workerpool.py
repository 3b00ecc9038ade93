"""The fleet's local pool: lean workers (not the command's pages), a worker that dies costs only
its call, and the command's knowledge reaches workers started fresh."""

from __future__ import annotations

import pytest

from llamadiag import api
from llamadiag.cli.fleet import _backend
from llamadiag.features import fleet
from llamadiag.features.fleet.perlog import summarize
from tests.features.fleet import worker_probe
from tests.paths import SAMPLES

# what the command line, the rule checker and the fleet's reduce import, which the per-log work
# does not need
COMMAND_ONLY = (
    "typer",
    "click",
    "rich",
    "plotly",
    "matplotlib",
    "llamadiag.cli",
    "llamadiag.ruletools",
    "llamadiag.features.fleet.report",
    "llamadiag.features.fleet.graph",
    "tarfile",  # listing archives (the command); a worker imports it for an archive member only
)


def test_the_commands_pool_workers_do_not_hold_the_command_lines_modules() -> None:
    import typer  # noqa: F401  (this process, like the command, has the command line loaded)

    log = fleet.LogTask(str(SAMPLES / "memory-cuda-oom-b4589-raw.log"), "oom")
    with _backend(2, None, None) as (backend, _):
        assert isinstance(backend, fleet.PoolBackend)
        backend.share_knowledge((), api.load_knowledge())  # as fleet.run does first
        summary = backend.pool.submit(summarize, log).result()  # the per-log work has run there
        main = backend.pool.submit(worker_probe.main_module).result()
        modules = backend.pool.submit(worker_probe.loaded_modules).result()
    assert [h.rule_id for h in summary.instances[0].hits] == ["cuda-oom-model-load"]
    assert [m for m in COMMAND_ONLY if m in modules] == []
    assert main == "llamadiag.features.fleet.worker"


def test_a_worker_that_dies_fails_only_its_call_and_is_replaced() -> None:
    with fleet.WorkerPool(1) as pool:
        first = pool.submit(worker_probe.pid).result()
        with pytest.raises(fleet.WorkerLost, match="exit code 3"):
            pool.submit(worker_probe.die, 3).result()
        assert pool.submit(worker_probe.pid).result() not in (first, None)


def test_a_call_that_does_not_pickle_fails_alone() -> None:
    with fleet.WorkerPool(1) as pool:
        first = pool.submit(worker_probe.pid).result()
        with pytest.raises(AttributeError, match="Can't pickle local object"):
            pool.submit(worker_probe.pid, lambda: 0).result()
        assert pool.submit(worker_probe.pid).result() == first  # the same worker: nothing was sent


def test_an_error_in_the_worker_comes_back_as_the_exception_raised() -> None:
    with fleet.WorkerPool(1) as pool, pytest.raises(ZeroDivisionError):
        pool.submit(divmod, 1, 0).result()


def test_every_worker_is_prepared_once_also_one_started_after_a_crash() -> None:
    with fleet.WorkerPool(1) as pool:
        pool.run_on_all(worker_probe.keep, "knowledge")
        assert pool.submit(worker_probe.kept).result() == ["knowledge"]
        assert pool.submit(worker_probe.kept).result() == ["knowledge"]  # once per worker
        with pytest.raises(fleet.WorkerLost):
            pool.submit(worker_probe.die, 9).result()
        assert pool.submit(worker_probe.kept).result() == ["knowledge"]
