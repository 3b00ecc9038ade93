"""Per-log summaries and their merge: the reduce of a fleet run.

A `Summary` holds, per instance, the known failures it hit, its builds, the unexplained line
templates and the logs that could not be read. `combine` is a pure, associative and commutative
merge (every field is a sum, a min, a max or a sorted union), so the report is the same whatever
the order in which 1 process, N processes or a Dask cluster finish the logs, and however the
merges are grouped. `EMPTY` is its identity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from llamadiag.knowledge.levels import Confidence, Severity  # no pydantic: a worker imports this

# what `--unmatched` keeps per log; a fleet groups at most this many per instance
MAX_TEMPLATES_PER_INSTANCE = 30
_EXAMPLE_CHARS = 300

T = TypeVar("T")


def confidence_order(confidence: str) -> int:
    """Best first (the rule model's order): a failure keeps the best confidence it had anywhere."""
    return -Confidence(confidence).rank if confidence in Confidence.__members__ else 1


def severity_order(severity: str) -> int:
    """Most serious first (the rule model's order)."""
    return -Severity(severity).rank if severity in Severity.__members__ else 1


def _min_opt(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _max_opt(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


@dataclass(frozen=True)
class Hit:
    """One known failure on one instance: how often (findings, runs), the best confidence it had,
    the builds of the runs that showed it, and when the logs that show it were written."""

    rule_id: str
    count: int
    runs: int
    confidence: str
    builds: tuple[int, ...] = ()
    first_seen: float | None = None
    last_seen: float | None = None

    def merged(self, other: Hit) -> Hit:
        """Both hits of one rule on one instance as one."""
        return Hit(
            self.rule_id,
            self.count + other.count,
            self.runs + other.runs,
            min(self.confidence, other.confidence, key=confidence_order),
            tuple(sorted(set(self.builds) | set(other.builds))),
            _min_opt(self.first_seen, other.first_seen),
            _max_opt(self.last_seen, other.last_seen),
        )


@dataclass(frozen=True)
class Template:
    """A warning or error line shape no rule explains (`--unmatched`), on one instance."""

    template: str
    level: str
    count: int
    example: str

    def merged(self, other: Template) -> Template:
        """Both counts of one template as one (the smallest level and example: any fixed choice works)."""
        return Template(
            self.template, min(self.level, other.level), self.count + other.count, min(self.example, other.example)
        )


@dataclass(frozen=True)
class Instance:
    """One server of the fleet: its logs, its build (that of its last run; with several logs of
    one name, the highest), what it hit and what no rule explains."""

    name: str
    logs: tuple[str, ...]
    build: int | None
    build_min: int | None
    build_max: int | None
    runs: int
    lines: int
    bytes: int
    seen: float | None
    hits: tuple[Hit, ...] = ()
    unmatched: tuple[Template, ...] = ()

    def merged(self, other: Instance) -> Instance:
        """Two summaries of one instance (its log split, or two files that name it) as one."""
        return Instance(
            self.name,
            tuple(sorted(set(self.logs) | set(other.logs))),
            _max_opt(self.build, other.build),  # type: ignore[arg-type]
            _min_opt(self.build_min, other.build_min),  # type: ignore[arg-type]
            _max_opt(self.build_max, other.build_max),  # type: ignore[arg-type]
            self.runs + other.runs,
            self.lines + other.lines,
            self.bytes + other.bytes,
            _max_opt(self.seen, other.seen),
            _merge_keyed(self.hits, other.hits, lambda h: h.rule_id, Hit.merged),
            _merge_keyed(self.unmatched, other.unmatched, lambda t: t.template, Template.merged),
        )


@dataclass(frozen=True)
class LogError:
    """A log that could not be read (or only in part), and why, in one line."""

    log: str
    error: str


@dataclass(frozen=True)
class Summary:
    """What a set of logs says about its instances (sorted by name) and the logs that failed."""

    instances: tuple[Instance, ...] = ()
    errors: tuple[LogError, ...] = ()
    logs: int = 0


EMPTY = Summary()


def _merge_keyed(a: Iterable[T], b: Iterable[T], key: Callable[[T], str], merge: Callable[[T, T], T]) -> tuple[T, ...]:
    out: dict[str, T] = {}
    for item in (*a, *b):
        k = key(item)
        out[k] = merge(out[k], item) if k in out else item
    return tuple(out[k] for k in sorted(out))


def combine(a: Summary, b: Summary) -> Summary:
    """The summary of both sets of logs. Pure, associative and commutative; EMPTY is neutral."""
    return Summary(
        _merge_keyed(a.instances, b.instances, lambda i: i.name, Instance.merged),
        tuple(sorted((*a.errors, *b.errors), key=lambda e: (e.log, e.error))),
        a.logs + b.logs,
    )


def combine_all(summaries: Iterable[Summary]) -> Summary:
    """All summaries merged, in any order."""
    out = EMPTY
    for s in summaries:
        out = combine(out, s)
    return out


def example_text(text: str) -> str:
    """An example line, bounded (log text is untrusted and reports are shared)."""
    return text if len(text) <= _EXAMPLE_CHARS else text[: _EXAMPLE_CHARS - 1] + "…"
