"""The feature format files (redaction, templating ...) from the start-up cache.

`formats.builtin_format` parses and validates a file of rules/formats/ with PyYAML and the
pydantic models: for `explain -f json` (whose redactor reads redaction.yaml) that cost more than
the whole diagnosis of a small log. `cached_format` returns the same validated content as a light
copy (`light.py`), pickled under the user cache folder, keyed by the file's bytes and by the code
that validates it (the models, this module, light.py, the package version): any change reads the
file afresh.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path
from typing import Any

from llamadiag import __version__, cache
from llamadiag.knowledge.files import FEATURE_FORMAT_FILES, builtin_rules_dir
from llamadiag.knowledge.light import from_model

HERE = Path(__file__).resolve().parent
_CODE = ("formatmodel.py", "rulemodel.py", "formats.py", "formatcache.py", "light.py", "levels.py", "yamlio.py")
_LOADED: dict[str, Any] = {}


def _key(path: Path) -> str:
    h = hashlib.sha256(__version__.encode())
    for name in _CODE:
        h.update((HERE / name).read_bytes())
    h.update(str(path).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def cached_format(model_name: str) -> Any:
    """The shipped format file of the model named `model_name` (e.g. "RedactionSpec"), validated,
    as a light copy; from the start-up cache when neither the file nor the code changed."""
    if model_name in _LOADED:
        return _LOADED[model_name]
    value: Any = None
    path = builtin_rules_dir() / "formats" / FEATURE_FORMAT_FILES[model_name]
    try:
        name = f"format_{path.stem}-{_key(path)}.pickle"
    except OSError:  # unreadable: builtin_format reports it
        return _validated(model_name)
    data = cache.read(name)
    if data is not None:
        try:
            value = pickle.loads(data)
        except Exception:  # stale or foreign: read afresh
            value = None
    if value is None:
        value = from_model(_validated(model_name))
        cache.write(name, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    _LOADED[model_name] = value
    return value


def use_formats(formats: dict[str, Any]) -> None:
    """Use these contents (`cached_format`'s, by model name) in this process: a fleet worker is
    handed the command's, and so neither reads nor validates the files, which on a cold or
    pruned start-up cache imported pydantic and the models into every worker for good."""
    _LOADED.update(formats)


def _validated(model_name: str) -> Any:
    from llamadiag.knowledge import formatmodel as fm  # only on a miss: parsed and validated
    from llamadiag.knowledge.formats import builtin_format

    return builtin_format(getattr(fm, model_name))
