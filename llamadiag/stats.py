"""Per-run request statistics in bounded memory.

Throughput and acceptance feed `compare` (the seed's verification: draft acceptance still
visible, throughput in line with before). Exact counts and sums are kept; distributions
are a uniform reservoir sample, so a run of millions of requests stays small.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from typing import Any

RESERVOIR = 2048


@dataclass
class Series:
    count: int = 0
    total: float = 0.0
    sample: list[float] = field(default_factory=list)
    # created when the reservoir is full: a Random is 2.5 KB, and most runs never need one
    _rng: random.Random | None = field(default=None, repr=False)
    _frozen: dict[str, Any] | None = field(default=None, repr=False)

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        if len(self.sample) < RESERVOIR:
            self.sample.append(value)
        else:
            if self._rng is None:
                self._rng = random.Random(1234)
            slot = self._rng.randrange(self.count)
            if slot < RESERVOIR:
                self.sample[slot] = value

    def freeze(self) -> None:
        """Keep the summary, drop the sample: the run is over and only its summary is shown."""
        self._frozen = self.summary()
        self.sample, self._rng = [], None

    def summary(self) -> dict[str, Any]:
        if self._frozen is not None:
            return self._frozen
        if not self.count:
            return {"count": 0}
        ordered = sorted(self.sample)
        q = statistics.quantiles(ordered, n=10) if len(ordered) > 1 else [ordered[0]] * 9
        return {
            "count": self.count,
            "median": round(statistics.median(ordered), 2),
            "p10": round(q[0], 2),
            "p90": round(q[-1], 2),
            "mean": round(self.total / self.count, 2),
        }


@dataclass
class RunStats:
    prompt_tps: Series = field(default_factory=Series)
    generation_tps: Series = field(default_factory=Series)
    draft_accepted: int = 0
    draft_generated: int = 0
    draft_lines: int = 0
    http_status: dict[str, int] = field(default_factory=dict)
    errors: int = 0
    error_messages: dict[str, int] = field(default_factory=dict)

    def observe(self, name: str, groups: dict[str, str]) -> None:
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

    def freeze(self) -> None:
        self.prompt_tps.freeze()
        self.generation_tps.freeze()

    def summary(self) -> dict[str, Any]:
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
