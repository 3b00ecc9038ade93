"""Dump, copy and validate the report's dataclasses (engine/findings.py and the like).

The report models are plain dataclasses so that `explain` never imports pydantic; what pydantic's
`model_dump`, `model_copy` and `model_validate` did for them is here, in one place:

    dump(obj, json=False, exclude=()) -> dict   # as model_dump() / model_dump(mode="json")
    replace(obj, **changes) -> obj               # as model_copy(update=changes): a shallow copy
    rebuild(obj, data) -> obj                    # obj again from its own dump, changed leaf by leaf
    load(cls, data) -> cls                       # as cls.model_validate(data): pydantic, imported here
    json_schema(cls) -> dict                     # as cls.model_json_schema(): pydantic, imported here

`load` is the one door for a report (or a part of one) read back from JSON or a dict: it
validates with pydantic (a TypeAdapter over the dataclass, built on first use) and raises
pydantic's ValidationError, a ValueError, on data that does not fit.
"""

from __future__ import annotations

import dataclasses
import math
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import TypeAdapter

T = TypeVar("T")


_NAMES: dict[type, tuple[str, ...]] = {}  # field names by class
_ADAPTERS: dict[type, TypeAdapter[Any]] = {}  # pydantic's validators by class, built on first use


def _names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def dump(obj: Any, *, json: bool = False, exclude: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    """A dataclass as a dict, nested dataclasses as dicts, in field order (pydantic's
    `model_dump()`; with `json`, `model_dump(mode="json")`: tuples and sets as lists, enums as
    their values, infinite floats as None). `exclude` leaves out top-level fields."""
    return {name: _value(getattr(obj, name), json) for name in _names(type(obj)) if name not in exclude}


def _value(v: Any, json: bool) -> Any:
    if v is None or isinstance(v, str | int):  # bool is an int
        return v
    if isinstance(v, float):
        return None if json and not math.isfinite(v) else v
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return dump(v, json=json)
    if isinstance(v, dict):
        return {k: _value(x, json) for k, x in v.items()}
    if isinstance(v, list):
        return [_value(x, json) for x in v]
    if isinstance(v, tuple | set | frozenset):
        items = [_value(x, json) for x in v]
        return items if json else type(v)(items)
    if isinstance(v, Enum):
        return v.value if json else v
    model_dump = getattr(v, "model_dump", None)  # a pydantic model (or a light copy) inside an `Any`
    if model_dump is not None:
        return model_dump(mode="json") if json else model_dump()
    return v


def replace(obj: T, **changes: Any) -> T:
    """A shallow copy of a dataclass with `changes` applied (pydantic's `model_copy(update=...)`)."""
    return dataclasses.replace(obj, **changes)  # type: ignore[type-var]


def rebuild(original: T, data: dict[str, Any]) -> T:
    """`original` again with the values of `data`, its own dump with some leaves changed (a
    redacted report): the nested dataclasses are those of `original`, matched by position, so
    nothing needs validating (what pydantic's `model_validate(model_dump())` round trip did)."""
    return type(original)(**{name: _again(getattr(original, name), data[name]) for name in _names(type(original))})


def _again(old: Any, new: Any) -> Any:
    if dataclasses.is_dataclass(old) and isinstance(new, dict):
        return rebuild(old, new)
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [_again(o, n) for o, n in zip(old, new, strict=True)]
    if isinstance(old, dict) and isinstance(new, dict) and len(old) == len(new):
        return {key: _again(o, n) for o, (key, n) in zip(old.values(), new.items(), strict=True)}
    return new


def _adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter  # only the commands that read a report back pay for pydantic

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def load(cls: type[T], data: Any) -> T:
    """`data` (a dict, e.g. from JSON) validated as `cls`: pydantic's ValidationError (a
    ValueError) names what does not fit."""
    result: T = _adapter(cls).validate_python(data)
    return result


def json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema of a dataclass, descriptions from its docstrings and field metadata."""
    schema: dict[str, Any] = _adapter(cls).json_schema()
    return schema
