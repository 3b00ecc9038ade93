"""Derived values and message templates.

`derive` entries are arithmetic over captured values and facts, evaluated by a tiny
AST walker (no eval). Templates replace `{name}`; an unknown name makes the caller fall
back to the step's `fallback` text.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.-]*)\}")

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


ALLOWED_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Call,
    ast.USub,
    ast.UAdd,
    *_BINARY,
)


def _pow2ceil(x: float) -> int:
    return 1 << max(0, math.ceil(math.log2(max(1.0, x))))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "ceil": math.ceil,
    "floor": math.floor,
    "round": round,
    "pow2ceil": _pow2ceil,
    "abs": abs,
}


class TemplateError(ValueError):
    """A derive expression that is not allowed or not valid."""

    pass


def names_in_expression(expr: str) -> set[str]:
    """The value names a derive expression uses (function names excluded)."""
    tree = ast.parse(expr, mode="eval")
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in FUNCTIONS}


def check_expression(expr: str) -> None:
    """Reject anything but arithmetic, names, numbers and the allowed functions."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise TemplateError(f"derive expression {expr!r} is not valid: {exc.msg}") from exc
    for node in ast.walk(tree):
        ok = isinstance(node, ALLOWED_NODES)
        if not ok:
            raise TemplateError(f"derive expression {expr!r} uses {type(node).__name__}, which is not allowed")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise TemplateError(f"derive expression {expr!r} calls an unknown function")


def evaluate(expr: str, values: Mapping[str, Any]) -> Any:
    """Value of an arithmetic expression, or None when a name is unknown or not a number."""

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.Name):
            value = values.get(node.id)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise KeyError(node.id)
            return value
        if isinstance(node, ast.UnaryOp):
            return -walk(node.operand) if isinstance(node.op, ast.USub) else walk(node.operand)
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return FUNCTIONS[node.func.id](*(walk(a) for a in node.args))
        raise KeyError(type(node).__name__)

    try:
        result = walk(ast.parse(expr, mode="eval"))
    except (KeyError, ZeroDivisionError, ValueError, TypeError, OverflowError):
        return None
    if isinstance(result, float) and result.is_integer():
        return int(result)
    return result


def derive_all(derive: Mapping[str, str], values: Mapping[str, Any]) -> dict[str, Any]:
    """Evaluate the derive entries in order; those that cannot be evaluated are left out."""
    out: dict[str, Any] = {}
    scope = dict(values)
    for name, expr in derive.items():  # in order, so later entries may use earlier ones
        result = evaluate(expr, scope)
        if result is not None:
            out[name] = scope[name] = result
    return out


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def render(template: str, values: Mapping[str, Any]) -> tuple[str, set[str]]:
    """Fill placeholders; returns the text and the names that were unknown."""
    missing: set[str] = set()

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in values and values[name] is not None:
            return _show(values[name])
        missing.add(name)
        return "?"

    return PLACEHOLDER.sub(sub, template), missing


def render_with_fallback(text: str, fallback: str | None, values: Mapping[str, Any]) -> str:
    """The text with values filled in, or the fallback when the text uses an unknown name."""
    rendered, missing = render(text, values)
    if missing and fallback:
        rendered, _ = render(fallback, values)
    return rendered
