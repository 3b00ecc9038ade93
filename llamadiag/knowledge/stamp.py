"""A digest of many files' bytes, remembered under their stat stamps so that a start reads none.

The start-up cache key hashes every module of llamadiag and every knowledge file (~320 files,
~3 MB): ~10 ms of a small log's start-up. A file's bytes cannot change without its stamp
changing — inode, size, modification and status-change times (ctime cannot be set back by a
user, as mtime can) — so the digest is remembered in the cache under a digest of the stamps and
reused while every stamp holds: the same test Python's own bytecode cache makes, with ctime and
nanoseconds added. As git does for its index ("racy git"), stamps are not remembered while a file
changed less than `SETTLE_NS` ago: a second write within one tick of the file system's clock
could leave all four unchanged.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from llamadiag import cache

SETTLE_NS = 2_000_000_000
KIND = "stamp"


def stamps(paths: Iterable[Path], extra: str = "") -> str | None:
    """A digest of the paths' stat stamps (and of `extra`), or None when a file changed too
    recently for its stamp to be trusted."""
    h = hashlib.sha256(extra.encode())
    recent = time.time_ns() - SETTLE_NS
    for path in paths:
        h.update(os.fsencode(os.path.abspath(path)) + b"\0")
        try:
            st = os.stat(path)
        except OSError:
            h.update(b"missing\0")
            continue
        if st.st_mtime_ns > recent or st.st_ctime_ns > recent:
            return None
        h.update(f"{st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}\0".encode())
    return h.hexdigest()[:24]


def remembered(paths: list[Path], extra: str, digest: Callable[[], str]) -> str:
    """`digest()` (of the bytes of `paths`, and of what `extra` says), read from the cache while
    the stamps of `paths` are those it was computed for."""
    key = stamps(paths, extra)
    if key is None:
        return digest()
    name = f"{KIND}-{key}.txt"
    known = cache.read(name)
    if known is not None and known.isascii() and known.strip():
        return known.decode().strip()
    value = digest()
    cache.write(name, value.encode())
    return value
