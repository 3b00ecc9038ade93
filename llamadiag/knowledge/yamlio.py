"""YAML loading that remembers where every value came from.

A broken rule file must be reported as `file:line: what is wrong`, so we keep the
line of every mapping key and sequence item and translate pydantic error locations.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pydantic is imported where a file is validated: explain on a cache hit never is
    from pydantic import BaseModel


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


MAX_FILE_BYTES = 1_000_000
"""The largest knowledge file read (the largest shipped one is about 20 KB)."""
MAX_DEPTH = 64
"""The deepest nesting of mappings and sequences accepted (shipped files use about 8)."""


@cache
def _yaml() -> tuple[Any, Any]:
    """PyYAML and a loader, imported only when knowledge is parsed (not from the cache)."""
    import yaml

    return yaml, yaml.SafeLoader("")


@cache
def _strict_loader() -> type:
    """A SafeLoader whose composer refuses aliases, tags and deep nesting, at the line they occur.

    Rule folders are untrusted input: an alias can expand exponentially (the billion laughs),
    a tag names a constructor, and deep nesting exhausts the stack. No shipped file needs any.
    """
    yaml, _ = _yaml()

    class StrictLoader(yaml.SafeLoader):  # type: ignore[name-defined]
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent):
                raise RuleFileError(
                    "", line, f"YAML alias *{event.anchor} is not accepted in knowledge files: write the value out"
                )
            tag = getattr(event, "tag", None)
            if tag is not None:
                raise RuleFileError("", line, f"YAML tag {tag!r} is not accepted in knowledge files: remove it")
            if self.depth >= MAX_DEPTH:
                raise RuleFileError("", line, f"nested more than {MAX_DEPTH} levels deep")
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return StrictLoader


def _decode(path: Path) -> str:
    """The file's text; a file over MAX_FILE_BYTES or not UTF-8 is a RuleFileError with its line."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise RuleFileError(path, None, f"{size:,} bytes: a knowledge file may be at most {MAX_FILE_BYTES:,} bytes")
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise RuleFileError(path, None, f"cannot read: {exc}") from exc
    if len(data) > MAX_FILE_BYTES:  # grew since stat, or a device
        raise RuleFileError(path, None, f"a knowledge file may be at most {MAX_FILE_BYTES:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise RuleFileError(
            path, line, f"not UTF-8: byte 0x{data[exc.start]:02x} at column {column}; save the file as UTF-8"
        ) from exc


def _scalar(loader: Any, node: Any) -> Any:
    """A key's or a scalar's value; a value no safe constructor builds is a RuleFileError at its line."""
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, OverflowError, TypeError, RecursionError) as exc:  # e.g. the timestamp 2001-13-45
        raise RuleFileError("", node.start_mark.line + 1, f"cannot read the value {node.value!r}: {exc}") from exc


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
            key = _scalar(loader, key_node)
            if not isinstance(key, str | int | float | bool) and key is not None:
                raise RuleFileError("", key_node.start_mark.line + 1, "a mapping key must be a plain value")
            if key in out:
                raise RuleFileError("", key_node.start_mark.line + 1, f"duplicate key {key!r}")
            out[key] = _construct(value_node, (*path, key), positions, lines)
            positions.setdefault((*path, key), key_node.start_mark.line + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, (*path, i), positions, lines) for i, item in enumerate(node.value)]
    return _scalar(loader, node)


def load_yaml(path: Path) -> tuple[Any, dict[tuple, int]]:
    """Parse one YAML file; returns the data and a path -> line map."""
    text = _decode(path)
    yaml, _ = _yaml()
    try:
        node = yaml.compose(text, Loader=_strict_loader())
    except RuleFileError as exc:
        raise RuleFileError(path, exc.line, exc.message) from exc
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
    except yaml.YAMLError as exc:  # a value no safe constructor builds (e.g. an invalid timestamp)
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise RuleFileError(path, mark.line + 1 if mark else None, f"YAML: {problem}") from exc


def line_of(positions: dict[tuple, int], loc: tuple) -> int | None:
    """The line of the deepest known prefix of a location path."""
    loc = tuple(loc)
    while loc:
        if loc in positions:
            return positions[loc]
        loc = loc[:-1]
    return positions.get(())


M = TypeVar("M", bound="BaseModel")


def validate(model: type[M], data: Any, path: Path, positions: dict[tuple, int]) -> M:
    """Validate data against a model, raising RuleFileError at the first problem's line."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        where = ".".join(str(p) for p in loc) or "(top)"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise RuleFileError(path, line_of(positions, loc), f"{where}: {plain_message(err)}{more}") from exc


def plain_message(err: Any) -> str:
    """A pydantic error's message as a person says it: a validator's own words without the
    "Value error, " / "Assertion failed, " pydantic puts before them."""
    cause = (err.get("ctx") or {}).get("error")
    if err.get("type") in ("value_error", "assertion_error") and cause is not None:
        return str(cause)
    return str(err["msg"])
