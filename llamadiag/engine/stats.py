"""Per-run request statistics in bounded memory.

Throughput and acceptance feed `compare` (the seed's verification: draft acceptance still
visible, throughput in line with before). Exact counts and sums are kept; distributions
are a uniform reservoir sample, so a run of millions of requests stays small.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import reduce
from operator import add
from typing import Any

RESERVOIR = 2048


@dataclass
class Series:
    """Count, sum and a bounded reservoir sample of one per-request value."""

    count: int = 0
    total: float = 0.0
    sample: list[float] = field(default_factory=list)
    # reservoir sampling by skips (Li's "Algorithm L"): the random numbers drawn depend only
    # on how many values came, so adding values one by one or a batch at once (the bulk
    # path) keeps the same sample; created when the reservoir fills, most runs never do
    _rng: random.Random | None = field(default=None, repr=False)
    _w: float = field(default=1.0, repr=False)
    _next: int = field(default=0, repr=False)  # count at which the next value enters the sample
    _frozen: dict[str, Any] | None = field(default=None, repr=False)

    def add(self, value: float) -> None:
        """Add one value."""
        self.add_many([value])

    def add_many(self, values: list[float]) -> None:
        """Add values in order (one by one or a batch, the same sample either way)."""
        start = self.count
        self.count += len(values)
        self.total = reduce(add, values, self.total)  # in order, as repeated `+=` would
        room = RESERVOIR - len(self.sample)
        if room > 0:
            self.sample.extend(values[:room])
            if len(self.sample) < RESERVOIR:
                return
        if self._rng is None:
            self._rng = random.Random(1234)
            self._skip(RESERVOIR)
        while self._next <= self.count:
            self.sample[self._rng.randrange(RESERVOIR)] = values[self._next - start - 1]
            self._skip(self._next)

    def _skip(self, position: int) -> None:
        rng = self._rng
        assert rng is not None
        self._w *= math.exp(math.log(rng.random() or 1e-300) / RESERVOIR)
        self._next = position + int(math.log(rng.random() or 1e-300) / math.log1p(-self._w)) + 1

    def freeze(self) -> None:
        """Keep the summary, drop the sample: the run is over and only its summary is shown."""
        self._frozen = self.summary()
        self.sample, self._rng = [], None

    def summary(self) -> dict[str, Any]:
        """Count, median, p10, p90 and mean of the values ({"count": 0} when none)."""
        if self._frozen is not None:
            return self._frozen
        if not self.count:
            return {"count": 0}
        import statistics  # with its decimal and fractions: only for a run that served requests (~4 ms)

        ordered = sorted(self.sample)
        # inclusive: p10 and p90 stay within the observed values (the default extrapolates on a
        # small sample: two requests gave a negative p10 of tokens per second)
        q = statistics.quantiles(ordered, n=10, method="inclusive") if len(ordered) > 1 else [ordered[0]] * 9
        return {
            "count": self.count,
            "median": round(statistics.median(ordered), 2),
            "p10": round(q[0], 2),
            "p90": round(q[-1], 2),
            "mean": round(self.total / self.count, 2),
        }


# the captured values each statistic's `observe` reads (the bulk path captures only these)
USED_GROUPS = {
    "prompt": frozenset({"tps"}),
    "generation": frozenset({"tps"}),
    "draft": frozenset({"accepted", "generated"}),
    "http": frozenset({"status"}),
    "error": frozenset({"message"}),
}


@dataclass
class RunStats:
    """A run's request statistics: throughput, draft acceptance, HTTP statuses and errors."""

    prompt_tps: Series = field(default_factory=Series)
    generation_tps: Series = field(default_factory=Series)
    draft_accepted: int = 0
    draft_generated: int = 0
    draft_lines: int = 0
    http_status: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    error_messages: dict[str, int] = field(default_factory=dict)

    def observe(self, name: str, groups: dict[str, str]) -> None:
        """Record one statistic line by its kind and captured groups."""
        if name == "prompt":
            self.prompt_tps.add(float(groups["tps"]))
        elif name == "generation":
            self.generation_tps.add(float(groups["tps"]))
        elif name == "draft":
            self.draft_lines += 1
            self.draft_accepted += int(groups["accepted"])
            self.draft_generated += int(groups["generated"])
        elif name == "http":
            status = groups["status"]
            self.http_status[status] = self.http_status.get(status, 0) + 1
        elif name == "error":
            self.errors += 1
            message = groups.get("message", "")[:120]
            if len(self.error_messages) < 50 or message in self.error_messages:
                self.error_messages[message] = self.error_messages.get(message, 0) + 1

    def observe_rows(self, name: str, columns: tuple[str, ...], rows: list[tuple[bytes, ...]]) -> None:
        """Many lines of one statistic at once (the bulk path): as `observe` on each, in order."""
        if name in ("prompt", "generation"):
            i = columns.index("tps")
            series = self.prompt_tps if name == "prompt" else self.generation_tps
            series.add_many([float(row[i]) for row in rows])
        elif name == "draft":
            a, g = columns.index("accepted"), columns.index("generated")
            self.draft_lines += len(rows)
            self.draft_accepted += sum(int(row[a]) for row in rows)
            self.draft_generated += sum(int(row[g]) for row in rows)
        elif name == "http":
            i = columns.index("status")
            for status, n in Counter(row[i] for row in rows).items():
                key = status.decode()
                self.http_status[key] = self.http_status.get(key, 0) + n
        else:
            for row in rows:
                self.observe(name, {k: v.decode() for k, v in zip(columns, row, strict=True)})

    def freeze(self) -> None:
        """Keep the summaries, drop the samples: the run is over."""
        self.prompt_tps.freeze()
        self.generation_tps.freeze()

    def summary(self) -> dict[str, Any]:
        """The run's statistics as shown in the report."""
        out: dict[str, Any] = {
            "prompt_tps": self.prompt_tps.summary(),
            "generation_tps": self.generation_tps.summary(),
            "errors": self.errors,
        }
        if self.draft_lines:
            out["draft"] = {
                "requests": self.draft_lines,
                "accepted": self.draft_accepted,
                "generated": self.draft_generated,
                "acceptance": round(self.draft_accepted / self.draft_generated, 3) if self.draft_generated else None,
            }
        if self.http_status:
            out["http_status"] = dict(sorted(self.http_status.items()))
        if self.error_messages:
            out["error_messages"] = dict(sorted(self.error_messages.items(), key=lambda kv: -kv[1])[:10])
        return out
