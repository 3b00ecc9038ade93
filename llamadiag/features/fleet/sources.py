"""What `llamadiag fleet SOURCES...` reads: one log per task, expanded from files, folders, globs,
tar/zip archives and fsspec URLs (`s3://...`, `memory://...`; `file://` too).

Expansion happens on the machine that runs the command; the logs are read where the work runs
(a pool process or a Dask worker), so a path must be one the workers can see (docs/fleet.md).
A source that names nothing becomes an error entry, never an exception: one bad source does not
stop the rest.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

# files that are logs of nothing: skipped when a folder is walked (named files are always read)
_SKIPPED_SUFFIXES = (".json", ".yaml", ".yml", ".md", ".png", ".svg", ".html", ".pyc")
_ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst", ".zip")
_LOG_SUFFIXES = (".gz", ".zst", ".xz", ".bz2")


@dataclass(frozen=True)
class LogTask:
    """One log to diagnose: where it is (`url`), the name its instance gets, and the archive member
    when the log lives inside a tar or zip file. `mtime` is when the log was last written (the
    fleet's "seen" time: the report model carries no line timestamps)."""

    url: str
    name: str
    member: str | None = None
    mtime: float | None = None
    size: int | None = None


@dataclass(frozen=True)
class SourceError:
    """A source that gave no log: what was named and why."""

    source: str
    error: str


def is_url(source: str) -> bool:
    """A fsspec URL (`scheme://...`), as opposed to a local path."""
    head, sep, _ = source.partition("://")
    return bool(sep) and head.isalnum() and len(head) > 1


def instance_name(path: str) -> str:
    """The instance a log path names: the path without compression and `.log` suffixes."""
    name = path
    for suffix in (*_LOG_SUFFIXES, ".log", ".txt"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def expand(sources: list[str]) -> tuple[list[LogTask], list[SourceError]]:
    """Every log the sources name, in a stable order, and the sources that name none.

    A log named twice (a file and its folder) is read once; instance names are relative to the
    folder given, or the file's own name, and made unique by the path when two collide."""
    tasks: list[LogTask] = []
    errors: list[SourceError] = []
    for source in sources:
        found, error = _expand_one(source)
        tasks.extend(found)
        if error:
            errors.append(SourceError(source, error))
    return _unique(tasks), errors


def _unique(tasks: list[LogTask]) -> list[LogTask]:
    seen: dict[tuple[str, str | None], LogTask] = {}
    for t in tasks:
        seen.setdefault((t.url, t.member), t)
    names: dict[str, int] = {}
    for t in seen.values():
        names[t.name] = names.get(t.name, 0) + 1
    out = []
    for t in seen.values():
        if names[t.name] > 1:  # two folders with an `a.log` each: the full path tells them apart
            full = t.url + (f"!{t.member}" if t.member else "")
            t = LogTask(t.url, instance_name(full), t.member, t.mtime, t.size)
        out.append(t)
    return sorted(out, key=lambda t: (t.name, t.url, t.member or ""))


def _expand_one(source: str) -> tuple[list[LogTask], str | None]:
    if is_url(source) and not source.startswith("file://"):
        return _expand_url(source)
    path = source.removeprefix("file://")
    if os.path.isdir(path):
        files = sorted(p for p in Path(path).rglob("*") if p.is_file() and not _hidden(p.relative_to(path)))
        files = [p for p in files if not p.name.endswith(_SKIPPED_SUFFIXES)]
        if not files:
            return [], "no files in this folder"
        return [t for p in files for t in _local(str(p), str(p.relative_to(path)))], None
    if any(c in path for c in "*?["):
        matches = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
        if not matches:
            return [], "the pattern matches no file"
        return [t for p in matches for t in _local(p, os.path.basename(p))], None
    if not os.path.exists(path):
        return [], "no such file or folder"
    return _local(path, os.path.basename(path)), None


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts)


def _local(path: str, name: str) -> list[LogTask]:
    try:
        st = os.stat(path)
    except OSError:
        return [LogTask(path, instance_name(name))]  # the worker says why it cannot be read
    if path.endswith(_ARCHIVE_SUFFIXES):
        members = _archive_members(path)
        if members is not None:
            base = name.removesuffix(next(s for s in _ARCHIVE_SUFFIXES if path.endswith(s)))
            return [LogTask(path, instance_name(f"{base}/{m}"), m, st.st_mtime, size) for m, size in members]
    return [LogTask(path, instance_name(name), None, st.st_mtime, st.st_size)]


def _archive_members(path: str) -> list[tuple[str, int]] | None:
    """The regular files of a tar or zip archive, or None when it cannot be listed (then the
    worker reads it as one log and reports what is wrong)."""
    import tarfile  # here, not at the top: a worker imports this module for LogTask only
    import zipfile

    try:
        if path.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                return [(i.filename, i.file_size) for i in z.infolist() if not i.is_dir()]
        if path.endswith(".tar.zst"):
            return None  # tarfile cannot read zstd before Python 3.14
        with tarfile.open(path) as t:
            return [(m.name, m.size) for m in t.getmembers() if m.isfile()]
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError):
        return None


def _expand_url(url: str) -> tuple[list[LogTask], str | None]:
    try:
        import fsspec
    except ImportError:
        return [], "reading URLs needs fsspec: pip install 'llamadiag[fleet]'"
    try:
        fs, path = fsspec.core.url_to_fs(url)
        if any(c in path for c in "*?["):
            paths = sorted(fs.glob(path))
        elif fs.isdir(path):
            paths = sorted(fs.find(path))
        else:
            paths = [path] if fs.exists(path) else []
        if not paths:
            return [], "names no file"
        base = path if fs.isdir(path) else os.path.dirname(path)
        out = []
        for p in paths:
            info = fs.info(p)
            rel = os.path.relpath(p, base) if base else p
            mtime = _mtime(info)
            out.append(LogTask(fs.unstrip_protocol(p), instance_name(rel), None, mtime, info.get("size")))
        return out, None
    except Exception as exc:  # any backend error (credentials, network): one line, the rest goes on
        return [], f"{type(exc).__name__}: {exc}"


def _mtime(info: dict[str, object]) -> float | None:
    for key in ("mtime", "LastModified", "last_modified", "created"):
        value = info.get(key)
        if isinstance(value, int | float):
            return float(value)
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
    return None
