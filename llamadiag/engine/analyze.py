"""The pipeline: physical lines -> entries -> runs -> facts, statistics, matches.

`Analyzer` is incremental: `feed()` takes lines as they arrive and returns the
signature matches completed by them, `flush()` releases an entry held back for
possible continuation lines, and `report()` evaluates every rule on every run. `explain`
feeds a whole file; `watch` feeds a stream and reports matches as they complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from llamadiag import __version__
from llamadiag.engine.cmdline import FlagTable, ParsedFlags
from llamadiag.engine.envelope import EnvelopeParser, Line
from llamadiag.engine.facts import FactState, FactValue, ServerFacts
from llamadiag.engine.findings import FactUse, Finding, Report, RuledOut, RunOut, facts_for_output
from llamadiag.engine.grouping import Summary, combine, finish, one_run
from llamadiag.engine.literals import Target, index_for
from llamadiag.engine.matcher import Match, SignatureMatcher
from llamadiag.engine.ranking import apply_supersedes, rank_findings
from llamadiag.engine.reasoning import RuleHits, assess
from llamadiag.engine.run import Run, Stream, compact
from llamadiag.engine.scan.scanner import Scanner
from llamadiag.knowledge.loader import Knowledge
from llamadiag.knowledge.patterns import compile_pattern

PREAMBLE_LIMIT = 256
MAX_JOINED = 64  # continuation lines joined onto one entry; more is not one message, and would grow
MAX_GAPS = 1024  # elisions remembered per run (a paste holds a few)
SEGMENT_KINDS = {"start", "preamble", "cmdline"}




class Analyzer:
    """The incremental engine: feeds lines, tracks runs and their facts, and reports findings."""

    def __init__(
        self,
        knowledge: Knowledge,
        cmdline: str | None = None,
        version_text: str | None = None,
        build: int | None = None,
        every_line: bool = False,
        engine: str | None = None,
        server_facts: ServerFacts | None = None,
    ) -> None:
        self.k = knowledge
        # what a live server said, by instance (None: the server itself; a router child's port)
        self.server_facts: ServerFacts = dict(server_facts or {})
        self.flag_table = FlagTable(knowledge.flags)
        self.cli_flags = self.flag_table.parse(cmdline) if cmdline else ParsedFlags()
        self.version_text = version_text
        self.build = build
        self.every_line = every_line
        self.envelope = EnvelopeParser(knowledge.envelope)
        self.index = index_for(knowledge)
        self.scanner = Scanner(self, engine)
        self.runs: list[Run] = []  # runs not yet folded into `summary`: the current run of each instance
        # an ended run is assessed and folded into the grouped summary at once (memory flat in
        # the number of runs); False keeps every run until report() (the same report, for tests)
        self.fold_runs = True
        self.summary = Summary()
        self.instances: set[str | None] = set()  # instances of every run, folded or not
        self.streams: dict[str | None, Stream] = {}
        self.held: Line | None = None
        self.held_targets: Sequence[Target] | None = None
        self.bridged = 0  # the last line of another program right after the held entry (transparent)
        # lines of another program after the held entry, processed right after it (line order kept)
        self.bridge_queue: list[tuple[Line, Sequence[Target] | None]] = []
        self.line_number = 0
        self.processed = 0  # entries processed: what the scanner knows to be inert keys on it
        self.run_count = 0  # run indices stay unique when `watch` retires ended runs
        self.unmatched: list[Line] = []
        self.child_argv: dict[str, list[str]] = {}  # router child instance -> argv elements
        self._argv_port: str | None = None
        self._argv_last = -1
        self.on_entry: Any = None  # optional hook before each entry (unmatched lines; watch settles verdicts)
        # optional hook: (run, [(run, rule index, match)]) as soon as an entry completes matches,
        # so `watch` assesses them with exactly the facts known at that line
        self.on_matches: Any = None

    # -- input ---------------------------------------------------------------
    def feed(self, lines: list[str]) -> list[tuple[Run, int, Match]]:
        """Consume physical lines; return (run, rule index, match) completed by them."""
        if not self.every_line:
            return self.feed_bytes(_as_block(lines))
        base = self.line_number
        self.line_number += len(lines)
        done: list[tuple[Run, int, Match]] = []
        for i, physical in enumerate(lines):
            line, is_cont = self.envelope.peel(base + i + 1, physical)
            if line is not None:
                done.extend(self.physical_line(line, is_cont))
        return done + self.release_final()

    def feed_bytes(self, block: bytes) -> list[tuple[Run, int, Match]]:
        """Consume a block of whole lines (UTF-8, each ending with a newline)."""
        if self.every_line:
            text = block.decode("utf-8", "replace")
            return self.feed(text.split("\n")[:-1] if text else [])
        return self.scanner.feed(block) + self.release_final()

    def release_final(self) -> list[tuple[Run, int, Match]]:
        """A held entry followed by a later line that did not continue it is complete:
        process it now rather than when the next entry comes (watch reports at once)."""
        if self.held is not None and max(self.held.end, self.bridged) < self.line_number:
            return self.release_held()
        return []

    def release_held(self) -> list[tuple[Run, int, Match]]:
        """Process the entry held for continuation lines now (the input went idle)."""
        held, targets = self.held, self.held_targets
        if held is None:
            return []
        self.held = self.held_targets = None
        self.bridged = 0
        return self._complete(held, targets)

    def _complete(self, held: Line, targets: Sequence[Target] | None) -> list[tuple[Run, int, Match]]:
        """Process a complete entry, then the other program's lines queued behind it."""
        done = self._entry(held, targets)
        queue, self.bridge_queue = self.bridge_queue, []
        for line, tgt in queue:
            done.extend(self._entry(line, tgt))
        return done

    def preamble_has_signatures(self) -> bool:
        """Whether an entry buffered until the next server start could complete a match."""
        return any(t.kind == "sig" for s in self.streams.values() for _, tgt in s.preamble for t in tgt)

    def current_runs(self) -> list[Run]:
        """The run each instance is in now; every other run has ended (a new start replaced it)."""
        return [s.run for s in self.streams.values()]

    def retire(self, run: Run) -> None:
        """Forget an ended run (bounded memory for endless streams)."""
        self.runs = [r for r in self.runs if r is not run]

    def flush(self) -> list[tuple[Run, int, Match]]:
        """Process the entry held for continuations, and any buffered preamble."""
        done = self.release_held()
        for stream in self.streams.values():
            pending, stream.preamble = stream.preamble, []
            for entry, targets in pending:
                done.extend(self._process(stream.run, entry, targets))
        return done

    def physical_line(
        self, line: Line, is_cont: bool, targets: Sequence[Target] | None = None
    ) -> list[tuple[Run, int, Match]]:
        """A peeled physical line: joined to the held entry, or held itself."""
        held = self.held
        if (
            is_cont
            and held is not None
            and line.number - 1 in (held.end, self.bridged)
            and line.instance == held.instance
            and line.number - held.number < MAX_JOINED
            and not self._from_embedder(held, line)  # never continued by a llama line
        ):
            held.text += "\n" + line.text
            held.end = line.number
            return []
        env = self.envelope
        if is_cont:
            env.parse_llama(line)
        elif held is not None and self._from_embedder(line, held):
            # a line of the program embedding llama.cpp, between llama's lines: an entry of its own,
            # processed after the held entry, whose continuation lines may still follow it
            if line.number - 1 in (held.end, self.bridged):
                self.bridged = line.number
            self.bridge_queue.append((line, targets))
            if len(self.bridge_queue) < MAX_JOINED:
                return []
            return self.release_held()
        else:
            cut, hidden = env.elision(line.text)
            if cut:  # not a log line: the held entry is complete, and the run remembers the cut
                done = self.release_held()
                run = self._stream(line.instance, line.number).run
                run.gaps.append((line.number, hidden))
                if len(run.gaps) > MAX_GAPS:
                    del run.gaps[0]
                return done
        done = self.release_held()
        self.held, self.held_targets = line, targets
        return done

    def _from_embedder(self, line: Line, beside: Line) -> bool:
        """Whether `line` is a line of the program embedding llama.cpp (ollama's `time=... msg=...`,
        `[GIN]`) written among llama's lines, `beside` being one of another source. Such a line is
        bridged, not joined; and when it is held (a block began before it and no llama entry was
        held), the llama continuation line after it starts an entry of its own, as it does when
        the llama entry is held and the foreign lines bridged."""
        env = self.envelope
        if not env.transparent or line.wrappers == beside.wrappers:
            return False
        return not env.transparent.isdisjoint(line.wrappers)

    # -- segmentation ----------------------------------------------------------
    def _stream(self, instance: str | None, first_line: int) -> Stream:
        stream = self.streams.get(instance)
        if stream is None:
            stream = Stream(self._new_run(instance, first_line))
            self.streams[instance] = stream
        return stream

    def _new_run(self, instance: str | None, first_line: int) -> Run:
        run = Run(self.run_count, instance, first_line, FactState(self.k.facts))
        self.run_count += 1
        self.instances.add(instance)
        self.runs.append(run)
        return run

    def _entry(self, line: Line, targets: Sequence[Target] | None = None) -> list[tuple[Run, int, Match]]:
        if targets is None or line.end != line.number:  # no hint, or continuations joined
            targets = self.index.targets(line.text)
        kinds = {t.kind for t in targets if t.kind in SEGMENT_KINDS and t.pattern.search(line.text)}
        stream = self._stream(line.instance, line.number)
        if self.on_entry is not None:
            self.on_entry(line, targets)
        if ("preamble" in kinds or "cmdline" in kinds) and "start" not in kinds:
            stream.preamble.append((line, targets))
            if len(stream.preamble) > PREAMBLE_LIMIT:
                old, tgt = stream.preamble.pop(0)
                return self._process(stream.run, old, tgt)
            return []
        done: list[tuple[Run, int, Match]] = []
        if "start" in kinds:
            # Some eras print two start lines back to back (build: then system info:); only a
            # start after other output is a restart.
            if stream.run.has_start and stream.run.since_start > 0:
                first = stream.preamble[0][0].number if stream.preamble else line.number
                compact(stream.run)
                if self.on_matches is None and self.fold_runs:  # (watch drops ended runs itself)
                    self.fold(stream.run)
                stream.run = self._new_run(line.instance, first)
            stream.run.has_start = True
        pending, stream.preamble = stream.preamble, []
        for entry, tgt in pending:
            done.extend(self._process(stream.run, entry, tgt))
        if "start" in kinds:
            stream.run.since_start = -1  # counts what follows the start line, not its preamble
        done.extend(self._process(stream.run, line, targets))
        return done

    # -- per-run processing ------------------------------------------------------
    def _process(self, run: Run, line: Line, targets: Sequence[Target]) -> list[tuple[Run, int, Match]]:
        self.processed += 1
        run.last_line = max(run.last_line, line.end)
        run.since_start += 1
        facts = run.facts
        if line.wrappers:
            facts.wrappers.update(line.wrappers)
        sig_hits: dict[tuple[int, int], set[int]] = {}
        text = line.text
        for t in targets:
            kind = t.kind
            if kind in ("elision", "bridge"):  # read by the envelope, not here
                continue
            if kind == "sig":
                rule_i, sig_i, entry_i = t.ref
                sig_hits.setdefault((rule_i, sig_i), set()).add(entry_i)
                continue
            if kind == "stat":  # a statistic per physical line, also of an entry with continuations
                for part in text.split("\n"):
                    m = t.pattern.search(part)
                    if m is not None:
                        run.stats.observe(t.ref, m.groupdict())
                continue
            m = t.pattern.search(text)
            if m is None:
                continue
            if kind == "fact":
                facts.observe_fact(t.ref[0], t.ref[1], m.groupdict(), line.number)
            elif kind == "absent_block":
                facts.block_absent(t.ref)
            elif kind == "version":
                facts.observe_version(m.groupdict(), line.number, t.ref)
            elif kind == "era":
                name, lo, hi = t.ref
                facts.observe_era(name, lo, hi, line.number)
            elif kind == "startup":
                run.startup_seen = True
            elif kind == "exclude":
                run.excluded.setdefault(t.ref[0], (line.number, t.ref[1]))
            elif kind == "argv_spawn":
                self._argv_port, self._argv_last = m.group("instance"), -1
            elif kind == "argv_header" and self._argv_port is not None:
                self.child_argv[self._argv_port] = []
                self._argv_last = line.end
            elif kind == "argv_item" and self._argv_port in self.child_argv and line.number == self._argv_last + 1:
                self.child_argv[self._argv_port].append(m.group("arg"))
                self._argv_last = line.end
            elif kind == "cmdline":
                parsed = self.flag_table.parse(text[m.start() :])
                # `llama-server --version` is not the serving command line; keep the richest one
                useful = set(parsed.values) - {"version", "list-devices"}
                if len(useful) > len(run.cmdline.values if run.cmdline else {}):
                    run.cmdline = parsed
        done: list[tuple[Run, int, Match]] = []
        for (rule_i, sig_i), hits in sorted(sig_hits.items()):
            if self.scanner.deferred:
                self.scanner.deferred.replay(run, (rule_i, sig_i))  # signature starts held back by the scanner
            matcher = self.matcher(run, rule_i, sig_i)
            for match in matcher.observe(line, hits):
                self._record(run, rule_i, match)
                done.append((run, rule_i, match))
        if done and self.on_matches is not None:
            self.on_matches(run, done)
        return done

    def matcher(self, run: Run, rule_i: int, sig_i: int) -> SignatureMatcher:
        """The matcher of one signature of one rule in a run, created on first use."""
        matcher = run.matchers.get((rule_i, sig_i))
        if matcher is None:
            sig = self.k.rules[rule_i].rule.signatures[sig_i]
            patterns = [compile_pattern(e.regex) for e in sig.entries]
            matcher = run.matchers[(rule_i, sig_i)] = SignatureMatcher(sig_i, sig, patterns, run.gaps)
        return matcher

    @staticmethod
    def _record(run: Run, rule_i: int, match: Match) -> None:
        current = run.hits.get(rule_i)
        if current is None:
            run.hits[rule_i] = RuleHits(match, 1, match.last)
            return
        best = current.best
        overlaps = match.first <= best.last + best.signature.within
        if best.signature.partial and not match.signature.partial:
            run.hits[rule_i] = RuleHits(match, 1, max(current.last_line, match.last))
        elif overlaps and match.sig_index < best.sig_index and match.signature.partial == best.signature.partial:
            # signatures are listed best first: a richer one completing on the same evidence wins
            run.hits[rule_i] = RuleHits(match, current.count, max(current.last_line, match.last))
        elif match.sig_index == best.sig_index:
            if best.elided and not match.elided:  # the same evidence seen whole: no cut to ask about
                current.best = match
            current.count += 1
            current.last_line = max(current.last_line, match.last)

    # -- evaluation ---------------------------------------------------------------
    def run_facts(self, run: Run) -> dict[str, FactValue]:
        """A run's facts, with the command line (the run's own, or ours filling its gaps) and version."""
        if run.cmdline is None and run.instance in self.child_argv:
            run.cmdline = self.flag_table.parse(" ".join(_quote(a) for a in self.child_argv[run.instance]))
        flags = run.cmdline if run.cmdline else self.cli_flags
        if run.cmdline and self.cli_flags:  # flags given on our command line fill gaps
            merged = ParsedFlags(
                values={**self.cli_flags.values, **run.cmdline.values},
                sources={**self.cli_flags.sources, **run.cmdline.sources},
                old_spellings=run.cmdline.old_spellings,
                unknown=run.cmdline.unknown,
                text=run.cmdline.text,
            )
            flags = merged
        return run.facts.finalize(
            self.k.versions, run.startup_seen, flags, self.version_text, self.build, self.live_facts(run)
        )

    def live_facts(self, run: Run) -> dict[str, FactValue] | None:
        """What the live server said, for the run it describes: the last run of its instance
        (a router child by its port); the server's own facts go to the last run of the log
        when no run is outside an instance."""
        if not self.server_facts:
            return None
        instance = run.instance
        if instance not in self.server_facts:
            if None not in self.server_facts or None in self.instances:
                return None
            if run is not self.runs[-1]:
                return None
            return dict(self.server_facts[None])
        last = max((r.index for r in self.runs if r.instance == instance), default=run.index)
        return dict(self.server_facts[instance]) if run.index == last else None

    def live_differences(self, run: Run, facts: dict[str, FactValue]) -> list[str]:
        """Facts on which the live server disagrees with the log (the log's value is used)."""
        live = self.live_facts(run) or {}
        differ = []
        for name, told in sorted(live.items()):
            have = facts.get(name)
            if have is None or have.source == told.source:
                continue
            if name not in run.facts.defs and name not in ("build", "commit"):
                continue
            if str(have.value) != str(told.value):
                differ.append(f"{name} ({have.value} in the log, {told.value} from {told.source})")
        return differ

    def assess_run(
        self, run: Run, rule_indices: Iterable[int] | None = None, facts: dict[str, FactValue] | None = None
    ) -> tuple[list[Finding], list[RuledOut]]:
        """Evaluate a run's rules (those hit, or `rule_indices`): findings and the rules ruled out."""
        if facts is None:
            facts = self.run_facts(run)
        findings: list[Finding] = []
        ruled_out: list[RuledOut] = []
        for rule_i in sorted(rule_indices if rule_indices is not None else run.hits):
            rule = self.k.rules[rule_i].rule
            result = assess(
                self.k.versions.question,
                rule,
                run.index,
                run.hits[rule_i],
                facts,
                run.excluded.get(rule_i),
                None if run.has_start else self.k.runs.snippet_question,
                self.k.envelope.elision_question,
            )
            if isinstance(result, Finding):
                result.source_file = self.k.rules[rule_i].source_file()
                findings.append(result)
            else:
                ruled_out.append(result)
        return apply_supersedes(findings, self.k), ruled_out

    def run_out(self, run: Run, facts: dict[str, FactValue] | None = None) -> RunOut:
        """A run as the JSON contract shows it: facts with their source lines, statistics."""
        if facts is None:
            facts = self.run_facts(run)
        return RunOut(
            index=run.index,
            instance=run.instance,
            first_line=run.first_line,
            last_line=run.last_line,
            startup_seen=run.startup_seen,
            facts=facts_for_output(facts),
            fact_sources={k: FactUse.of(v) for k, v in sorted(facts.items())},
            stats=run.stats.summary(),
        )

    def fold(self, run: Run) -> None:
        """Assess an ended run and fold it into the grouped summary; the run itself is let go."""
        # (the runs the scanner skipped as repeats of this one are merged right after it)
        self.summary = self.scanner.replay.fold(self.summary, run, self.run_summary(run))
        self.retire(run)

    def run_summary(self, run: Run, facts: dict[str, FactValue] | None = None) -> Summary:
        """One run assessed: its entry, findings and ruled-out rules as a summary to combine."""
        if facts is None:
            facts = self.run_facts(run)
        findings, ruled = self.assess_run(run, facts=facts)
        build = facts.get("build")
        number = build.value if build is not None and isinstance(build.value, int) else None
        return one_run(self.run_out(run, facts), findings, ruled, number)

    def report(self, input_info: dict[str, Any] | None = None, notes: list[str] | None = None) -> Report:
        """Flush held input and evaluate every rule on every run: the complete report."""
        notes = list(notes or [])
        return report_of(self.k, self.final_summary(notes), input_info, notes)

    def final_summary(self, notes: list[str]) -> Summary:
        """Flush held input and fold the runs still open into the grouped summary: the summary
        of all input fed. What the live server added is appended to `notes`."""
        self.flush()
        if not self.runs and (
            self.line_number or self.cli_flags or self.version_text or self.build or self.server_facts
        ):
            run = self._new_run(None, 1 if self.line_number else 0)  # lines but no entry, or options alone
            run.last_line = self.line_number
        merged = 0
        summary = self.summary  # the runs folded as they ended; the runs still open are added here
        for run in self.runs:
            facts = self.run_facts(run)
            summary = combine(summary, self.run_summary(run, facts))
            live = self.live_facts(run) if self.server_facts else None
            if live is not None:
                merged += 1
                sources = {v.source for v in live.values()}
                used = sorted(k for k, v in facts.items() if v.source in sources and k in live)
                notes.append(
                    f"run {run.index}: from the live server: {', '.join(used[:12])}"
                    + (" ..." if len(used) > 12 else "")
                    if used
                    else f"run {run.index}: the live server added nothing the log did not say"
                )
                differ = self.live_differences(run, facts)
                if differ:
                    notes.append(
                        f"run {run.index}: the live server differs from the log on "
                        + "; ".join(differ[:6])
                        + ("; ..." if len(differ) > 6 else "")
                        + ": the log's values are used (the server may have been restarted since)"
                    )
        if self.server_facts and not merged:
            notes.append("the live server's facts fit no run of the log (its instances differ)")
        return summary


def report_of(k: Knowledge, summary: Summary, input_info: dict[str, Any] | None, notes: list[str]) -> Report:
    """The report of a whole input from its grouped summary (one analyzer's, or byte ranges' combined)."""
    runs_out, findings, ruled = finish(summary)
    return Report(
        version=__version__,
        rules_version=k.digest,
        input=input_info or {},
        runs=runs_out,
        run_count=summary.run_count,
        findings=rank_findings(findings, k),
        ruled_out=ruled,
        notes=notes,
    )



def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) and '"' not in arg else arg


def _as_block(lines: list[str]) -> bytes:
    """Lines already decoded (a paste, an inline example, a live stream) as one block."""
    if not lines:
        return b""
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
