"""YAML loading that remembers where every value came from.

A broken rule file must be reported as `file:line: what is wrong`, so we keep the
line of every mapping key and sequence item and translate pydantic error locations.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError


class RuleFileError(Exception):
    """A knowledge file that cannot be used; str() is `path:line: message`."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type[RuleFileError], tuple[str, int | None, str]]:  # picklable, for the cache
        return (RuleFileError, (self.path, self.line, self.message))


@cache
def _yaml() -> tuple[Any, Any]:
    """PyYAML and a loader, imported only when knowledge is parsed (not from the cache)."""
    import yaml

    return yaml, yaml.SafeLoader("")


def _construct(node: Any, path: tuple, positions: dict[tuple, int], lines: list[str]) -> Any:
    yaml, loader = _yaml()
    positions[path] = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode) and node.style is None and node.end_mark.line < len(lines):
        rest = lines[node.end_mark.line][node.end_mark.column :]
        if re.match(r"\s+#\d", rest):
            raise RuleFileError(
                "",
                node.end_mark.line + 1,
                f"'{rest.strip()}' after an unquoted value is a YAML comment and is lost: quote the value",
            )
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in out:
                raise RuleFileError("", key_node.start_mark.line + 1, f"duplicate key {key!r}")
            out[key] = _construct(value_node, (*path, key), positions, lines)
            positions.setdefault((*path, key), key_node.start_mark.line + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, (*path, i), positions, lines) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)


def load_yaml(path: Path) -> tuple[Any, dict[tuple, int]]:
    """Parse one YAML file; returns the data and a path -> line map."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleFileError(path, None, f"cannot read: {exc}") from exc
    yaml, _ = _yaml()
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise RuleFileError(path, line, f"YAML syntax: {problem}") from exc
    positions: dict[tuple, int] = {}
    if node is None:
        return None, positions
    try:
        return _construct(node, (), positions, text.splitlines()), positions
    except RuleFileError as exc:
        raise RuleFileError(path, exc.line, exc.message) from exc


def line_of(positions: dict[tuple, int], loc: tuple) -> int | None:
    """The line of the deepest known prefix of a location path."""
    loc = tuple(loc)
    while loc:
        if loc in positions:
            return positions[loc]
        loc = loc[:-1]
    return positions.get(())


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any, path: Path, positions: dict[tuple, int]) -> M:
    """Validate data against a model, raising RuleFileError at the first problem's line."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        where = ".".join(str(p) for p in loc) or "(top)"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise RuleFileError(path, line_of(positions, loc), f"{where}: {err['msg']}{more}") from exc
