"""Loading the knowledge for a command, with rules whose own examples fail refused.

Running every example at each start would cost start-up time, so results are cached
per (rules digest, engine digest) under $XDG_CACHE_HOME/llamadiag.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from llamadiag import __version__
from llamadiag.knowledge import Knowledge, load_knowledge
from llamadiag.lint import CaptureNames, Examples, PatternSafety, References
from llamadiag.yamlio import RuleFileError

# a dangling `supersedes` is only a lint error: the rule still works without the other rule
LOAD_CHECKS = (PatternSafety, CaptureNames, References, Examples)


def _engine_digest() -> str:
    h = hashlib.sha256(__version__.encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _cache_file(k: Knowledge) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "llamadiag" / f"checked-{k.digest}-{_engine_digest()}.json"


def checked_knowledge(extra_dirs: list[Path] | None = None, builtin: bool = True) -> Knowledge:
    k = load_knowledge(extra_dirs, builtin)
    cache = _cache_file(k)
    try:
        refused: dict[str, str] = json.loads(cache.read_text())
    except (OSError, ValueError):
        refused = {}
        for loaded in list(k.rules):
            for check in LOAD_CHECKS:
                issues = [i for i in check(k).check(loaded) if i.severity == "error"]
                if issues:
                    refused[loaded.rule.id] = json.dumps([str(loaded.path), issues[0].line, issues[0].message])
                    break
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(refused))
        except OSError:
            pass  # a read-only home only costs start-up time
    if refused:
        keep = []
        for loaded in k.rules:
            if loaded.rule.id in refused:
                path, line, message = json.loads(refused[loaded.rule.id])
                k.errors.append(RuleFileError(path, line, f"rule refused: {message}"))
            else:
                keep.append(loaded)
        k.rules = keep
    return k
