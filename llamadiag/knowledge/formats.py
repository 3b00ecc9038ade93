"""The shipped format files that the features read, loaded and validated once per process.

The engine's own formats (envelope, versions, eras, runs, stats, facts, flags) travel inside
`Knowledge`; these are read only by the command that needs them (a redacted output, the
unmatched-line templates and the unsettled reports they may match, a lookup, a bug-report
draft, a live server probe), so they are loaded on first use.
"""

from __future__ import annotations

from functools import cache
from typing import TypeVar

from llamadiag.knowledge import formatmodel as fm
from llamadiag.knowledge.files import FEATURE_FORMAT_FILES, builtin_rules_dir
from llamadiag.knowledge.rulemodel import Strict
from llamadiag.knowledge.yamlio import load_yaml, validate

M = TypeVar("M", bound=Strict)

# each model and the file under rules/formats/ that holds it
FILES: dict[type[Strict], str] = {getattr(fm, name): file for name, file in FEATURE_FORMAT_FILES.items()}


@cache
def builtin_format(model: type[M]) -> M:
    """The shipped format file of `model`, validated (a `RuleFileError` names file and line)."""
    path = builtin_rules_dir() / "formats" / FILES[model]
    data, positions = load_yaml(path)
    result: M = validate(model, data, path, positions)
    return result
