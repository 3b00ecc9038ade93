"""Light copies of the validated knowledge models, for the start-up cache.

Building the ~60 pydantic model classes of `rulemodel` and `formatmodel` costs more than a
small log's whole analysis, and a cache hit needs none of their validation: the knowledge in
the cache was validated (and its rules' examples run) when the cache was written. So the cache
stores each validated model as an instance of a plain class of the same name defined here: the
same fields as attributes (nested models, lists and dicts alike), compared by value, with the
few behaviours the engine uses (`Reference.url`, `model_dump()`). Nothing here imports pydantic.

`from_model` (called on a cache miss, with pydantic loaded) makes the copy; `light_names` lists
the classes, and a test checks it against the models.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import Any

from llamadiag.knowledge.levels import ReferenceUrl


class Light:
    """A validated model's fields as plain, read-only attributes."""

    __slots__ = ("__dict__",)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen (validated knowledge)")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__

    def __hash__(self) -> int:  # as a frozen pydantic model: by value (fails on list fields, as it does)
        return hash((type(self).__name__, *self.__dict__.values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({fields})"

    def model_dump(self) -> dict[str, Any]:
        """The fields as a dict, nested models as dicts (pydantic's `model_dump()` without options)."""
        return {k: _dump(v) for k, v in self.__dict__.items()}

    def model_copy(self, update: dict[str, Any] | None = None) -> Any:
        """A shallow copy with some fields changed (pydantic's `model_copy(update=...)`)."""
        out = object.__new__(type(self))
        vars(out).update(self.__dict__, **(update or {}))
        return out


def _dump(value: Any) -> Any:
    if isinstance(value, Light):
        return value.model_dump()
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


# the model classes of rulemodel and formatmodel whose instances the knowledge holds; a class
# missing here makes `from_model` fail, and the cache then holds the validated models (slower)
MODEL_NAMES = (
    "Entry",
    "Signature",
    "Condition",
    "LineExclusion",
    "Versions",
    "Reference",
    "Step",
    "Workaround",
    "Check",
    "Verification",
    "Example",
    "Rule",
    "PatternSpec",
    "Wrapper",
    "Envelope",
    "VersionShape",
    "Unusable",
    "EraFingerprint",
    "Eras",
    "ChildArgv",
    "Runs",
    "StatLine",
    "Stats",
    "Fact",
    "Facts",
    "Flag",
    "Flags",
    "SecretPattern",
    "ContentSpec",
    "PseudonymPattern",
    "RedactionSpec",
    "Mask",
    "TemplatingSpec",
    "LookupWords",
    "OsHints",
    "ProbeTimeouts",
    "ProbeEndpoint",
    "ProbeIdentify",
    "ProbeVersion",
    "ProbeRouter",
    "ProbeWhen",
    "ProbeFact",
    "ProbeSpec",
    "UnsettledLine",
    "UnsettledReport",
    "Unsettled",
)
# behaviours of a model that the engine uses, shared with its light copy
_MIXINS: dict[str, tuple[type, ...]] = {"Reference": (ReferenceUrl,)}

_module = sys.modules[__name__]
for _name in MODEL_NAMES:  # module attributes, so that pickle finds each class by name
    setattr(_module, _name, type(_name, (Light, *_MIXINS.get(_name, ())), {"__slots__": (), "__module__": __name__}))


def light_names() -> tuple[str, ...]:
    """The names of the light classes (one per model class the knowledge holds)."""
    return tuple(MODEL_NAMES)


def from_model(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """A light copy of a validated model (recursively: lists, dicts, tuples of them too); other
    values as they are. Objects shared in the model stay shared in the copy."""
    from datetime import date  # here: a cache hit never copies (and needs no datetime)

    memo = {} if memo is None else memo
    if isinstance(value, (str, int, float, bool, bytes, Enum, date)) or value is None:  # immutable
        return value
    key = id(value)
    if key in memo:
        return memo[key]
    if isinstance(value, list):
        out: Any = [from_model(v, memo) for v in value]
    elif isinstance(value, tuple):
        out = tuple(from_model(v, memo) for v in value)
    elif isinstance(value, dict):
        out = {k: from_model(v, memo) for k, v in value.items()}
    elif hasattr(type(value), "model_fields") and hasattr(value, "__dict__"):
        cls = getattr(_module, type(value).__name__, None)
        if not (isinstance(cls, type) and issubclass(cls, Light)):
            raise TypeError(f"no light class for {type(value).__name__}")
        out = object.__new__(cls)
        fields = {k: from_model(v, memo) for k, v in value.__dict__.items()}
        object.__getattribute__(out, "__dict__").update(fields)
    else:
        raise TypeError(f"cannot copy a {type(value).__name__} into light knowledge")
    memo[key] = out
    return out
