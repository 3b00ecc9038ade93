"""The work on one log: read it where the worker runs, diagnose it through `llamadiag.api`, and
boil the report down to a `Summary` (what the reduce merges).

`summarize` never raises: an unreadable file, a permission error, a bad archive or a backend
error becomes a `LogError` of that log, and the rest of the fleet goes on.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from llamadiag import api
from llamadiag.engine.findings import RunOut
from llamadiag.engine.literals import forget_compiled_patterns
from llamadiag.features.fleet.memtrim import release_freed_memory
from llamadiag.features.fleet.sources import LogTask, is_url
from llamadiag.features.fleet.summary import (
    MAX_TEMPLATES_PER_INSTANCE,
    Hit,
    Instance,
    LogError,
    Summary,
    Template,
    combine_all,
    example_text,
)
from llamadiag.knowledge.formatcache import use_formats
from llamadiag.knowledge.patterns import forget_compiled

# an archive member is read into memory to be diagnosed: bigger ones must be extracted first
MAX_MEMBER_BYTES = 1 << 30
# a worker reads a log this many bytes at a time, not the 1 MiB of `explain`: each block is held
# as bytes, text and a list of lines at once (about 5x its size), the biggest part of a worker's
# peak on a log of any size; smaller blocks give the same report at the same CPU (docs/fleet.md)
WORKER_BLOCK = 64 << 10

_knowledge: dict[tuple[str, ...], api.Knowledge] = {}


def remember_knowledge(rules: tuple[str, ...], knowledge: api.Knowledge, formats: dict[str, Any] | None = None) -> None:
    """Use this knowledge for `rules` in this process: the command's own, handed to a worker so
    that it neither loads nor checks the rules again (nor needs to see the `--rules` folders);
    and these format files (`workerknowledge.worker_formats`), so that it never validates one."""
    _knowledge[rules] = knowledge
    use_formats(formats or {})


def knowledge_for(rules: tuple[str, ...]) -> api.Knowledge:
    """The knowledge for `rules`: the one handed to this process (`remember_knowledge`), else
    loaded once per process (the on-disk cache, or the rules checked afresh)."""
    if rules not in _knowledge:
        from pathlib import Path

        _knowledge[rules] = api.load_knowledge([Path(r) for r in rules])
    return _knowledge[rules]


def summarize(task: LogTask, rules: tuple[str, ...] = ()) -> Summary:
    """The summary of one log; a log that cannot be read gives a summary holding only its error.
    What the log took is let go of before the next (`let_go`)."""
    summary = _summarize(task, rules)  # the diagnosis is freed on its return
    let_go(rules)
    return summary


def let_go(rules: tuple[str, ...]) -> None:
    """After a log: drop the patterns it compiled and give the freed memory back to the kernel.

    The literal index compiles a rule's pattern the first time a log hits it and kept it, so a
    worker held every pattern any of its logs touched (and `re`/`regex` their own caches of up to
    500 each): its memory crept up over the fleet. Now the next log compiles again what it needs
    (about 30 ms of CPU a log; docs/fleet.md, "the 1 GB fleet on Dask, the cache state")."""
    forget_compiled()
    known = _knowledge.get(rules)  # never loaded here: a log that failed to load it says why
    if known is not None:
        forget_compiled_patterns(known)
    release_freed_memory()


def _summarize(task: LogTask, rules: tuple[str, ...]) -> Summary:
    try:
        diagnosis = _diagnose(task, knowledge_for(rules))
    except api.InputError as exc:
        return _failed(task, str(exc))
    except OSError as exc:
        return _failed(task, f"{exc.strerror or type(exc).__name__}: {exc.filename or task.url}")
    except (BadArchive, EOFError) as exc:
        return _failed(task, f"bad archive: {exc}")
    except Exception as exc:  # a backend's or the engine's error on one log must not stop the fleet
        return _failed(task, f"{type(exc).__name__}: {exc}")
    return _summary_of(task, diagnosis)


def summarize_piece(task: LogTask, start: int, end: int, rules: tuple[str, ...] = ()) -> api.Piece | None:
    """The byte range [start, end) of a plain log scanned on its own (a split leaf); None when it
    cannot be read (the log is then diagnosed whole, which says why in its own words)."""
    try:
        return api.scan_piece(task.url, start, end, knowledge_for(rules))
    except Exception:  # any failure: the whole-log fallback reports it as a log that breaks does
        return None
    finally:
        let_go(rules)


def join_summary(task: LogTask, rules: tuple[str, ...], pieces: tuple[api.Piece | None, ...]) -> Summary | None:
    """The log's summary from its pieces in order, the same as `summarize` gives; None when a
    piece failed or an edge does not prove an exact join (then summarise the log whole)."""
    if any(p is None for p in pieces):
        return None
    try:
        diagnosis = api.join_pieces(task.url, [p for p in pieces if p is not None], knowledge_for(rules))
    except Exception:  # e.g. the file changed under the reads: the whole scan says what happened
        return None
    return None if diagnosis is None else _summary_of(task, diagnosis)


def summarize_split(task: LogTask, rules: tuple[str, ...], *pieces: api.Piece | None) -> Summary:
    """The log's summary from its pieces, or from the whole log where they do not join."""
    joined = join_summary(task, rules, pieces)
    if joined is None:
        return summarize(task, rules)
    let_go(rules)
    return joined


def _summary_of(task: LogTask, diagnosis: api.Diagnosis) -> Summary:
    if diagnosis.input_error and not diagnosis.report.input.get("lines"):
        return _failed(task, diagnosis.input_error)  # nothing was read: no instance to speak of
    summary = from_report(task, diagnosis.report)
    if diagnosis.input_error:  # a truncated archive: what was read counts, and the log is listed
        summary = Summary(summary.instances, (LogError(task.name, diagnosis.input_error),), 1)
    return summary


def _failed(task: LogTask, error: str) -> Summary:
    return Summary((), (LogError(task.name, " ".join(error.split())[:300]),), 1)


def _diagnose(task: LogTask, k: api.Knowledge) -> api.Diagnosis:
    if task.member is not None:
        return api.diagnose_text(_member_bytes(task), name=f"{task.url}!{task.member}", knowledge=k, unmatched=True)
    if is_url(task.url):
        import fsspec

        with fsspec.open(task.url, "rb") as f:
            return api.diagnose_stream(f, name=task.url, knowledge=k, unmatched=True)
    return api.diagnose(task.url, knowledge=k, unmatched=True, block=WORKER_BLOCK)


class BadArchive(Exception):
    """A tar or zip archive that cannot be read (its module's error, as one type)."""


def _member_bytes(task: LogTask) -> bytes:
    # tarfile imported here: a worker that reads no archive does not hold it (0.4 MiB)
    import tarfile
    import zipfile

    assert task.member is not None
    try:
        if task.url.endswith(".zip"):
            with zipfile.ZipFile(task.url) as z:
                info = z.getinfo(task.member)
                _check_size(info.file_size)
                return z.read(info)
        with tarfile.open(task.url) as t:
            member = t.getmember(task.member)
            _check_size(member.size)
            f = t.extractfile(member)
            if f is None:
                raise OSError(f"not a regular file in the archive: {task.member}")
            return f.read()
    except (tarfile.TarError, zipfile.BadZipFile) as exc:
        raise BadArchive(str(exc)) from exc


def _check_size(size: int) -> None:
    if size > MAX_MEMBER_BYTES:
        raise OSError(f"archive member of {size >> 20} MiB: extract it and give the file")


def from_report(task: LogTask, report: api.Report) -> Summary:
    """The instances of one diagnosed log: one, named from the path, or one per wrapper instance
    (pod, compose service, router port) when the log holds several servers."""
    wrapped = {r.instance for r in report.runs if r.instance}

    def name_of(instance: str | None) -> str:
        return f"{task.name}/{instance}" if len(wrapped) > 1 and instance else task.name

    runs_of: dict[str, list[RunOut]] = defaultdict(list)
    with_findings = {f.run for f in report.findings}
    for run in report.runs:
        # in a file of several servers, a run without instance holds the wrapper's own lines
        # (compose's "llama-1 exited with code 1"): an instance only when something was found there
        if len(wrapped) > 1 and not run.instance and run.index not in with_findings:
            continue
        runs_of[name_of(run.instance)].append(run)
    if not runs_of:
        runs_of[task.name] = []
    kept_runs = [r for runs in runs_of.values() for r in runs]
    run_name = {r.index: name_of(r.instance) for r in kept_runs}
    hits: dict[str, dict[str, Hit]] = defaultdict(dict)
    run_build = {r.index: r.facts.get("build") for r in report.runs}
    for f in report.findings:
        name = run_name.get(f.run, task.name)
        build = run_build.get(f.run)
        hit = Hit(
            f.rule_id, f.count, 1, f.confidence, (build,) if isinstance(build, int) else (), task.mtime, task.mtime
        )
        hits[name][f.rule_id] = hits[name][f.rule_id].merged(hit) if f.rule_id in hits[name] else hit
    templates: dict[str, dict[str, Template]] = defaultdict(dict)
    for u in report.unmatched:
        name = _name_at_line(kept_runs, u.first_line, run_name, task.name)
        example = example_text(u.examples[0][1]) if u.examples else ""
        t = Template(u.template, u.level or "", u.count, example)
        here = templates[name]
        here[u.template] = here[u.template].merged(t) if u.template in here else t
    lines = int(report.input.get("lines") or 0)
    size = int(report.input.get("bytes") or 0)
    instances = []
    for name, runs in runs_of.items():
        last = runs[-1].facts if runs else {}
        kept = sorted(templates[name].values(), key=lambda t: (-t.count, t.template))[:MAX_TEMPLATES_PER_INSTANCE]
        # lines and bytes belong to the log: counted once, on its first instance
        first = name == next(iter(runs_of))
        instances.append(
            Instance(
                name,
                (task.name,),
                _int(last.get("build")),
                _int(last.get("build_min")),
                _int(last.get("build_max")),
                len(runs),
                lines if first else 0,
                size if first else 0,
                task.mtime,
                tuple(hits[name][r] for r in sorted(hits[name])),
                tuple(sorted(kept, key=lambda t: t.template)),
            )
        )
    return combine_all([Summary((i,), (), 0) for i in instances] + [Summary((), (), 1)])


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _name_at_line(runs: list[RunOut], line: int, run_name: dict[int, str], default: str) -> str:
    """The instance of the narrowest run holding the line (a wrapper's run may span others)."""
    holding = [r for r in runs if r.first_line <= line <= r.last_line]
    if not holding:
        return default
    return run_name[min(holding, key=lambda r: (r.last_line - r.first_line, r.index)).index]
