"""The start-up cache (checked knowledge, Hyperscan databases) in the user cache folder
(userdirs.cache_dir: $XDG_CACHE_HOME/llamadiag, else the OS's own). Entries are named
`<kind>-<key>.<ext>` by the digest of what they were made from, written atomically, and only
the few newest of each kind are kept."""

from __future__ import annotations

import os

from llamadiag.userdirs import cache_dir

KEEP = 4  # per kind: a few rule sets (--rules folders, upgrades) in alternation


def read(name: str) -> bytes | None:
    """The bytes of a cache entry, or None when it is missing or unreadable."""
    try:
        return (cache_dir() / name).read_bytes()
    except OSError:
        return None


def write(name: str, data: bytes, keep: int = KEEP) -> None:
    """Store an entry, keeping the `keep` newest of its kind; a read-only or full disk
    only costs start-up time later."""
    folder = cache_dir()
    path = folder / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(path)  # atomic: a concurrent start never reads half a file
        kind = name.split("-", 1)[0]
        siblings = sorted(folder.glob(f"{kind}-*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in siblings[keep:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
