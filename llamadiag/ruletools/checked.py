"""Loading the knowledge for a command, with rules whose own examples fail refused.

Parsing ~50 YAML files with line positions, validating them and running every rule's
examples costs about a second, far more than a small log's analysis. So the checked,
validated knowledge is pickled under $XDG_CACHE_HOME/llamadiag, keyed by the digest of
every knowledge file (and its path) and of the engine's own code: any change to a rule,
a format file or llamadiag itself loads afresh. The checked knowledge carries no YAML line
positions (`LoadedRule.positions` is empty): only lint reports lines, on unchecked knowledge.

What is cached, and returned on a hit and on a miss alike, are light copies of the validated
models (`knowledge/light.py`): a hit imports neither the model classes nor their validators.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
from dataclasses import fields
from pathlib import Path

from llamadiag import __version__, cache
from llamadiag.engine.literals import index_for
from llamadiag.gcpause import paused
from llamadiag.knowledge.files import builtin_rules_dir, files_under, source_files, user_rules_dirs
from llamadiag.knowledge.light import from_model
from llamadiag.knowledge.loader import Knowledge, load_knowledge
from llamadiag.knowledge.stamp import remembered

PACKAGE = Path(__file__).resolve().parent.parent


def code_digest(package: Path = PACKAGE) -> str:
    """A digest of every module of the package, subpackages included: any code change loads afresh."""
    h = hashlib.sha256(__version__.encode())
    for path in files_under(package, ".py"):  # every module of every subpackage
        h.update(str(path.relative_to(package)).encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _knowledge_key(extra_dirs: list[Path] | None, builtin: bool) -> str:
    sources = source_files(extra_dirs, builtin)
    # every rule folder asked for, present or not: a folder that was missing once (an error cached
    # with the knowledge) must not stay "missing" for runs that no longer ask for it
    asked = [*user_rules_dirs(), *(extra_dirs or [])]
    said = repr([(str(p), p.is_dir()) for p in asked]) + repr(builtin)
    modules = files_under(PACKAGE, ".py")
    # the digest of the bytes, remembered under the files' stat stamps (knowledge/stamp.py)
    return remembered([*modules, *sources], said, lambda: _content_key(sources, said))


def _content_key(sources: list[Path], said: str) -> str:
    h = hashlib.sha256(code_digest().encode())
    for path in sources:
        h.update(os.path.abspath(path).encode() + b"\0")  # where each rule came from is in the cached knowledge
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"\0unreadable")
    h.update(said.encode())
    return h.hexdigest()[:24]


def checked_knowledge(extra_dirs: list[Path] | None = None, builtin: bool = True) -> Knowledge:
    """The knowledge with its rules checked, from the start-up cache when unchanged."""
    key = _knowledge_key(extra_dirs, builtin)
    name = f"knowledge-{key}.pickle"
    data = cache.read(name)
    if data is not None:
        try:
            k = _unpickled(data)
            if isinstance(k, Knowledge):
                return k
        except Exception:  # stale or foreign: load afresh
            pass
    k = _check(load_knowledge(extra_dirs, builtin))
    for loaded in k.rules:  # YAML line positions serve only lint (on unchecked knowledge): a quarter of the
        loaded.positions = {}  # cache entry and of its load time
    with contextlib.suppress(TypeError):  # a part light.py does not know: cached as validated models (slower)
        k = lighten(k)
    # rule errors are cached too: they are reported from the cache on every run. Not a refused
    # shipped rule: the project's tests pass it, so its refusal here is this machine's moment (the
    # pattern time budget on a loaded machine) and the next run checks it again
    k.derived.clear()  # the checks' own index compiled patterns: cache a fresh one, sources only
    index_for(k)
    if not any(e.message.startswith(REFUSED) and _shipped(e.path) for e in k.errors):
        # the key of what was cached (every knowledge file and module): what is derived from this
        # knowledge alone may be cached under it too (lookup's word index)
        k.derived[CACHED_AS] = key
        cache.write(name, pickle.dumps(k, protocol=pickle.HIGHEST_PROTOCOL))
    return k


REFUSED = "rule refused: "
CACHED_AS = "cached_as"  # Knowledge.derived: the start-up cache key of a knowledge read from or written to it


def _unpickled(data: bytes) -> object:
    """The cached knowledge, unpickled with collection paused: its ~100,000 objects are all alive."""
    with paused():
        return pickle.loads(data)


def lighten(k: Knowledge) -> Knowledge:
    """The same knowledge with every validated model replaced by its light copy (one memo for
    all, so that what the models share stays shared)."""
    memo: dict[int, object] = {}
    rules = [from_model(loaded.rule, memo) for loaded in k.rules]  # all copied before any is replaced
    kept = ("rules", "errors", "digest", "derived")
    parts = {f.name: from_model(getattr(k, f.name), memo) for f in fields(k) if f.name not in kept}
    for loaded, rule in zip(k.rules, rules, strict=True):
        loaded.rule = rule
    for name, value in parts.items():
        setattr(k, name, value)
    return k


def _shipped(path: object) -> bool:
    try:
        return Path(str(path)).resolve().is_relative_to(builtin_rules_dir().resolve())
    except (OSError, ValueError):
        return False


def _check(k: Knowledge) -> Knowledge:
    """Refuse rules whose own patterns, captures, references or examples fail."""
    from llamadiag.knowledge.yamlio import RuleFileError
    from llamadiag.ruletools.lint import CaptureNames, Examples, PatternSafety, References, Unfinished

    # a dangling `supersedes` is only a lint error: the rule still works without the other rule;
    # an unfinished skeleton (`rules new`) is refused with its first TODO, before its examples fail
    checks = (Unfinished, PatternSafety, CaptureNames, References, Examples)
    refused: dict[str, str] = {}
    for loaded in list(k.rules):
        for check in checks:
            issues = [i for i in check(k).check(loaded) if i.severity == "error"]
            if issues:
                refused[loaded.rule.id] = json.dumps([str(loaded.path), issues[0].line, issues[0].message])
                break
    if refused:
        keep = []
        for loaded in k.rules:
            if loaded.rule.id in refused:
                path, line, message = json.loads(refused[loaded.rule.id])
                k.errors.append(RuleFileError(path, line, f"{REFUSED}{message}"))
            else:
                keep.append(loaded)
        k.rules = keep
    return k
