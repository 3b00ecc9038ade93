"""Facts about one server run, each with the line (or input) it came from.

Facts come from log lines (rules/facts/*.yaml), version strings (formats/versions.yaml),
era fingerprints (formats/eras.yaml) and flags (a command line). Absence is a fact too,
but only where the run shows its whole startup, or a command line was given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llamadiag.engine.cmdline import ParsedFlags
from llamadiag.knowledge.patterns import compile_format_pattern

if TYPE_CHECKING:  # the model classes are not built on a start-up cache hit
    from llamadiag.knowledge.formatmodel import Fact, Versions

VERSION_FIELDS = ("build", "commit", "semver", "compiler", "target", "debug_build")
MAX_LIST_VALUES = 32  # a list fact (backends, devices) stays small on an endless stream


# era fingerprints named in a run's evidence (later ones still narrow its build range)
MAX_ERA_EVIDENCE = 8


@dataclass
class FactValue:
    """A fact's value, the log line it came from (None when not from a line) and its source."""

    value: Any
    line: int | None
    source: str  # log | version-output | version-text | cmdline | absent | era | build-option | /props ...


# the fields a version string gives; `fork` only says the build number is a fork's own
VERSION_KEYS = (*VERSION_FIELDS, "fork")

# facts a live server gave, by the instance they describe (None: the server asked; a router
# child's port, as its log lines are prefixed); each FactValue's source names the endpoint
ServerFacts = dict[str | None, dict[str, FactValue]]


def convert(kind: str, raw: Any) -> Any:
    """A raw captured value converted to a fact type; None when a number does not parse."""
    if raw is None or (kind in ("list", "str") and not isinstance(raw, str)):
        return raw
    text = str(raw).strip()
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            return None
    if kind == "float":
        try:
            return float(text)
        except ValueError:
            return None
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        return text.lower() in ("1", "true", "yes", "on", "enabled")
    return text


def typed_value(raw: str) -> Any:
    """Captured text as a number where it is one."""
    try:
        return int(raw)
    except ValueError:
        try:
            return float(raw)
        except ValueError:
            return raw


def parse_version(text: str, versions: Versions) -> dict[str, Any]:
    """Parse version facts from a --version output or any text holding a version line."""
    found: dict[str, Any] = {}
    for raw_line in text.splitlines():
        line = raw_line.strip()
        for shape in versions.shapes:
            m = compile_format_pattern(shape.regex).search(line)
            if m:
                for key, value in m.groupdict().items():
                    if value is not None and key not in found:
                        found[key] = value.strip()
                break
    return found


def usable_build(fields: dict[str, Any], versions: Versions) -> tuple[bool, str | None]:
    """Whether the version fields name a usable build, and the reason when they do not."""
    if "build" not in fields:
        return False, None
    probe = f"build={fields.get('build')} commit={fields.get('commit', '?')}"
    if fields.get("fork"):
        probe += f" fork={fields['fork']}"
    for rule in versions.unusable:
        if compile_format_pattern(rule.regex).search(probe):
            return False, rule.reason
    return True, None


_DEFS: dict[int, tuple[list[Fact], dict[str, Fact]]] = {}


def _defs(facts: list[Fact]) -> dict[str, Fact]:
    """Fact definitions by name, shared by every run (a log may hold thousands of runs)."""
    cached = _DEFS.get(id(facts))
    if cached is None or cached[0] is not facts:
        cached = _DEFS[id(facts)] = (facts, {f.name: f for f in facts})
    return cached[1]


class FactState:
    """Accumulates facts for one run as entries arrive."""

    def __init__(self, facts: list[Fact]) -> None:
        self.defs = _defs(facts)
        self.values: dict[str, FactValue] = {}
        self.blocked_absent: set[str] = set()
        self.version: dict[str, Any] = {}
        self.version_line: int | None = None
        self.version_source = "log"
        self.era_min: int | None = None
        self.era_max: int | None = None
        self.era_evidence: list[tuple[str, int]] = []
        self.wrappers: set[str] = set()

    def observe_fact(self, name: str, pattern_value: Any, groups: dict[str, Any], line: int) -> None:
        """Record a fact from a matched line (a count adds one, a list collects values)."""
        fact = self.defs[name]
        raw = pattern_value if pattern_value is not None else groups.get("value")
        value = convert(fact.type, raw) if fact.type not in ("list", "count") else raw
        if fact.type == "count":
            current = self.values.get(name)
            if current is None:
                self.values[name] = FactValue(1, line, "log")
            else:
                current.value += 1
            return
        if value is None:
            return
        if fact.type == "list":
            current = self.values.get(name)
            if current is None:
                self.values[name] = FactValue([value], line, "log")
            elif value not in current.value and len(current.value) < MAX_LIST_VALUES:
                current.value.append(value)
            return
        self.values.setdefault(name, FactValue(value, line, "log"))

    def block_absent(self, name: str) -> None:
        """Keep a fact from taking its `absent` value in this run."""
        self.blocked_absent.add(name)

    def observe_version(self, groups: dict[str, Any], line: int, source: str) -> None:
        """Record version fields from a version line; the first line with a build wins."""
        if "build" in groups and "build" in self.version:
            return  # the first version line of a run wins
        for key, value in groups.items():
            if value is not None and key not in self.version:
                self.version[key] = value.strip()
        if "build" in groups:
            self.version_line, self.version_source = line, source

    def observe_era(self, name: str, lo: int | None, hi: int | None, line: int) -> None:
        """Narrow the run's build range with an era fingerprint seen at `line`."""
        if len(self.era_evidence) < MAX_ERA_EVIDENCE and all(n != name for n, _ in self.era_evidence):
            self.era_evidence.append((name, line))
        if lo is not None:
            self.era_min = lo if self.era_min is None else max(self.era_min, lo)
        if hi is not None:
            self.era_max = hi if self.era_max is None else min(self.era_max, hi)

    def finalize(
        self,
        versions: Versions,
        startup_seen: bool,
        flags: ParsedFlags,
        version_text: str | None,
        build_option: int | None,
        server: dict[str, FactValue] | None = None,
    ) -> dict[str, FactValue]:
        """All facts of the run: log evidence first, then version text, flags, what a live
        server said (`server`, each value with its endpoint as source), absence."""
        out = dict(self.values)
        server = server or {}
        self._version_facts(out, versions, version_text, build_option, server)
        for name, fact in self.defs.items():
            if name in out:
                continue
            given = flags.values.get(fact.flag) if fact.flag and flags else None
            if given is not None and str(given) not in fact.flag_unknown:  # -c 0 is no size
                raw = fact.flag_value if fact.flag_value is not None else given
                value = convert(fact.type, raw)
                if value is not None:
                    out[name] = FactValue(value, None, "cmdline")
                    continue
            if name in server and name not in VERSION_KEYS:
                live = server[name]
                value = live.value if fact.type in ("list", "count") else convert(fact.type, live.value)
                if value is not None:
                    out[name] = FactValue(value, None, live.source)
                    continue
            unknown_by_flags = flags and any(f in flags.values for f in fact.unknown_with_flags)
            if fact.flag and flags and fact.absent_from_cmdline is not None and not unknown_by_flags:
                out[name] = FactValue(fact.absent_from_cmdline, None, "cmdline")
            elif startup_seen and fact.absent is not None and name not in self.blocked_absent:
                out[name] = FactValue(fact.absent, None, "absent")
        if self.wrappers:
            out["wrappers"] = FactValue(sorted(self.wrappers), None, "log")
        if flags:
            for flag, value in flags.values.items():
                out[f"flag.{flag}"] = FactValue(value, None, "cmdline")
        for name, live in server.items():  # facts the knowledge does not define: kept as told
            if name not in out and name not in VERSION_KEYS and name not in self.defs:
                out[name] = live
        return out

    def _version_facts(
        self,
        out: dict[str, FactValue],
        versions: Versions,
        version_text: str | None,
        build_option: int | None,
        server: dict[str, FactValue],
    ) -> None:
        fields = dict(self.version)
        line, source = self.version_line, self.version_source
        if "build" not in fields and version_text:
            fields = {**parse_version(version_text, versions), **fields}
            line, source = None, "version-text"
        if "build" not in fields and build_option is not None:
            fields["build"], line, source = str(build_option), None, "build-option"
        if "build" not in fields and "build" in server:
            live = {k: str(server[k].value) for k in VERSION_KEYS if k in server}
            fields = {**fields, **live}
            line, source = None, server["build"].source
        for key in VERSION_FIELDS:
            raw = fields.get("debug" if key == "debug_build" else key)
            if raw is None:
                continue
            value: Any = bool(raw) if key == "debug_build" else raw
            if key == "build":
                value = int(raw)
            out[key] = FactValue(value, line, source)
        usable, reason = usable_build(fields, versions)
        if "build" in fields:
            out["version_usable"] = FactValue(usable, line, source)
            if reason:
                out["version_problem"] = FactValue(reason, line, source)
        if self.era_min is not None or self.era_max is not None:
            # by name, not by order seen: the same log shape gives the same value in every run
            # (the scanner may count a line of a run's first entries before the run starts)
            names = ", ".join(sorted(n for n, _ in self.era_evidence)[:3])
            if self.era_min is not None and self.era_max is not None and self.era_min > self.era_max:
                out["era"] = FactValue(f"contradictory fingerprints ({names}): a fork or a mixed log", None, "era")
            else:
                lo_text = f"b{self.era_min}" if self.era_min is not None else "?"
                hi_text = f"b{self.era_max}" if self.era_max is not None else "now"
                out["era"] = FactValue(f"{lo_text} .. {hi_text} (from {names})", self.era_evidence[0][1], "era")
        lo, hi = self.build_range(out)
        if lo is not None:
            out["build_min"] = FactValue(lo, None, "era" if "build" not in out else out["build"].source)
        if hi is not None:
            out["build_max"] = FactValue(hi, None, "era" if "build" not in out else out["build"].source)
        if usable and "build" in out and self.era_min is not None and self.era_max is not None:
            build = out["build"].value
            if not self.era_min <= build <= self.era_max and self.era_min <= self.era_max:
                out["version_problem"] = FactValue(
                    f"build {build} does not fit the log's own shape (b{self.era_min}..b{self.era_max}): "
                    "a fork or a custom build number",
                    line,
                    source,
                )

    def build_range(self, out: dict[str, FactValue]) -> tuple[int | None, int | None]:
        """Bounds on the build: exact when a usable version is known, else from the era."""
        if "build" in out and out.get("version_usable", FactValue(False, None, "")).value:
            b = out["build"].value
            return b, b
        if self.era_min is not None and self.era_max is not None and self.era_min > self.era_max:
            return None, None
        return self.era_min, self.era_max
