"""The scanning core: from a block of bytes to the entries that can change anything.

One multi-literal pass per block (`multimatch`) finds the candidate lines and the
literals each holds. Most candidates of a long log are routine: a progress line whose
era is already known, a fact already set, a statistics line, the first entry of a
multi-line signature that is rarely completed. Each candidate is decoded and its
patterns are tried on its message; then, in a single-stream log:

- no pattern can change the run's state -> counted, not turned into an entry;
- only statistics and first entries of multi-entry signatures -> the statistics are
  added at once, the signature start is kept in a short queue (bounded like the
  matcher's own partials) and replayed only when a later entry of it shows up;
- anything else -> the full path (`ScanHost.physical_line`), as before.

Every shortcut gives exactly what the full path gives; a state it cannot vouch for
(interleaved instances, a pending preamble, a possible continuation, an unseen wrapper)
takes the full path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llamadiag.engine.envelope import plain
from llamadiag.engine.facts import MAX_ERA_EVIDENCE
from llamadiag.engine.literals import Target
from llamadiag.engine.scan.deferred import DeferredStarts
from llamadiag.engine.scan.multimatch import Engine, make_engine
from llamadiag.engine.scan.replay import Replay
from llamadiag.lines import clean_line, strip_controls

if TYPE_CHECKING:
    from llamadiag.engine.run import Run
    from llamadiag.engine.scan.bulk import BulkPath
    from llamadiag.engine.scan.host import ScanHost

Done = list[tuple[Any, int, Any]]
BULK_FROM = 1 << 18  # a log this long pays the bulk path's set-up (a few ms, more on a first run)
# envelope.ANSI for UTF-8 bytes, never reaching past the end of a line
ANSI_BYTES = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\r\n]*(?:\x07|\x1b\\)?|\x1b[@-_]|\xc2\x9b[0-?]*[ -/]*[@-~]"
)


class Scanner:
    """Finds the lines of a block that hold a rule literal and hands them to the analyzer."""

    def __init__(self, analyzer: ScanHost, engine: str | None = None) -> None:
        self.a = analyzer
        index = analyzer.index
        self.literals = index.literals()
        self.by_id: list[Sequence[Target]] = [index.by_literal[lit] for lit in self.literals]
        self.engine: Engine = make_engine(self.literals, engine)
        self.shortcuts = True  # False: every candidate takes the full entry path (tests compare)
        # the bulk path (bulk.py) from this many bytes on: a small log never pays its set-up
        self.bulk_from = BULK_FROM
        self.bulk: BulkPath | None = None
        self.fed = 0
        # literals of continuation lines, and of lines another program interleaves (which do not
        # end the entry before them): either, right after a line, may extend its entry
        self.cont_ids = frozenset(i for i, ts in enumerate(self.by_id) if any(t.kind in ("cont", "bridge") for t in ts))
        self._targets: dict[frozenset[int], tuple[Target, ...]] = {}
        k = analyzer.k
        self.scalar_facts = {f.name for f in k.facts if f.type not in ("list", "count")}
        self.entries = {
            (ri, si): len(sig.entries) for ri, lr in enumerate(k.rules) for si, sig in enumerate(lr.rule.signatures)
        }
        # (run, rule, signature) -> first entries held back, bounded like matcher partials
        self.deferred = DeferredStarts(analyzer)
        self.replay = Replay(self)  # runs that repeat the run before them (crash loops): replayed
        self._inert_ids: dict[frozenset[int], tuple[bool, tuple[Any, ...]]] = {}
        self._inert_version: tuple[Any, ...] = ()
        self._eras_key: tuple[int, int] = (-1, -1)
        self._eras_seen: set[str] = set()

    # -- blocks ------------------------------------------------------------------
    def feed(self, block: bytes) -> Done:
        """Scan a block of whole lines; return the signature matches it completed."""
        a = self.a
        base = a.line_number
        if (b"\x1b" in block or b"\xc2\x9b" in block) and b"\r" not in block:
            # terminal colours: removed from the whole block at once, as peeling would remove
            # them from each line (not with CR redraws, which peeling resolves first)
            block = ANSI_BYTES.sub(b"", block)
        if not self.shortcuts or self.fed + len(block) < self.bulk_from:
            done = self._lines(block, 0, len(block), base)
            a.line_number = base + block.count(b"\n")
        else:
            done, a.line_number = self._feed_bulk(block, base)
        self.fed += len(block)
        return done

    def _feed_bulk(self, block: bytes, base: int) -> tuple[Done, int]:
        """Stretches of routine lines through the bulk path, the lines between them one by one."""
        if self.bulk is None:
            from llamadiag.engine.scan.bulk import BulkPath  # only logs past the first block need it

            self.bulk = BulkPath(self)
        bulk = self.bulk
        bulk.begin(block)
        replay = self.replay
        replay.begin()
        done: Done = []
        pos, number, size = 0, base, len(block)
        count = block.count
        while pos < size:
            pos, number = replay.at(block, pos, number)
            if pos >= size:
                break
            run = None if replay.looping(number) else self._bulk_run()
            if run is not None:
                pos, lines = bulk.stretch(run, pos, number)
                number += lines
                if pos >= size:
                    break
                if pos == replay.stop and lines:
                    continue  # a boundary where runs may be skipped
                end = block.find(b"\n", pos) + 1 or size
            else:  # not in a plain state: a few dozen lines the usual way, then look again
                end = block.find(b"\n", min(pos + 4096, size - 1)) + 1 or size
            if pos < replay.stop < end:
                end = replay.stop  # stop at the boundary
            done.extend(self._lines(block, pos, end, number))
            number += count(b"\n", pos, end)
            pos = end
            done.extend(self._release_if_complete(block, pos, number))
        return done, number

    def _bulk_run(self) -> Run | None:
        """The run of lines naming no instance, when the analyzer is in the plain state the
        bulk path needs (lines naming an instance are never part of a stretch)."""
        a = self.a
        if a.held is not None:
            return None
        stream = a.streams.get(None)
        return None if stream is None or stream.preamble else stream.run

    def _release_if_complete(self, block: bytes, pos: int, number: int) -> Done:
        """The entry held for continuations is complete when the next line does not continue
        it: process it now (as the next candidate line would) rather than wait."""
        held = self.a.held
        if held is None or pos >= len(block):
            return []
        if max(held.end, self.a.bridged) == number:
            raw = block[pos : block.find(b"\n", pos)].decode("utf-8", "replace")
            env = self.a.envelope
            line, is_cont = env.peel(number + 1, clean_line(raw))
            if line is not None and is_cont and line.instance == held.instance:
                return []
            if line is not None and not env.transparent.isdisjoint(line.wrappers):
                return []  # another program's line: a continuation may still follow it
        return self.a.release_held()

    def _lines(self, block: bytes, start: int, stop: int, base: int) -> Done:
        """Every candidate line of block[start:stop] (whole lines; `base` is the number of
        the line before `start`) through the per-line path."""
        whole = start == 0 and stop == len(block)
        part = block if whole else block[start:stop]
        hits = self.engine.scan(part)
        done: Done = []
        count = part.count
        cursor, number = 0, base
        last, size, cont_ids = len(hits) - 1, len(part), self.cont_ids
        raw_next: str | None = None
        for i, (begin, end, ids) in enumerate(hits):
            number += count(b"\n", cursor, begin)
            cursor = begin
            raw = raw_next if raw_next is not None else part[begin:end].decode("utf-8", "replace")
            raw_next = None
            if not self.shortcuts:
                done.extend(self._full(number + 1, raw, self.targets(ids)))
                continue
            if not plain(raw) and raw[:1] != "{":
                # colours, CR redraws, stray controls: what peeling does first, done once here,
                # and the literals looked up again in what is left (a colour code can split one)
                cleaned = strip_controls(clean_line(raw))
                if cleaned != raw:
                    raw, ids = cleaned, self.text_ids(cleaned)
            if i < last:
                nxt = hits[i + 1]
                guard = nxt[0] == end + 1 and not cont_ids.isdisjoint(nxt[2])
                if guard:  # the next line holds a continuation's literal: is it one?
                    raw_next = part[nxt[0] : nxt[1]].decode("utf-8", "replace")
                    guard = self._may_continue(raw_next)
            elif end + 1 < size:
                guard = False  # the next line holds no literal, so it continues nothing
            elif whole or stop >= len(block):
                guard = True  # the next line is in the next block: it may continue this one
            else:
                guard = self._may_continue(block[stop : block.find(b"\n", stop)].decode("utf-8", "replace"))
            if not guard and self._skip(number + 1, raw, ids):
                continue
            out = self.line(number + 1, raw, ids, guard)
            if out:
                done.extend(out)
        return done

    def _skip(self, number: int, raw: str, ids: frozenset[int]) -> bool:
        """The cheapest case, most lines of a long log: a plain line whose every target
        is inert, while no entry is held. Counted, and nothing else."""
        a = self.a
        stream = a.streams.get(None)
        if a.held is not None or stream is None or stream.preamble:
            return False
        run = stream.run
        if not self._all_inert(ids, run) or not plain(raw):
            return False
        quick = a.envelope.quick.match(raw)
        if quick is not None:
            if quick.lastgroup != "wrapper":
                return False
            # journald, docker -t ...: the wrappers must be ones the run has already seen
            text, wrappers, meta, _, _, _ = a.envelope.unwrap(raw)
            if "instance" in meta or not run.facts.wrappers.issuperset(wrappers) or not plain(text):
                return False
            quick = a.envelope.quick.match(text)
            if quick is not None:
                return quick.lastgroup == "drop"  # a dropped line leaves no trace at all
        run.since_start += 1
        run.last_line = max(run.last_line, number)
        return True

    def _may_continue(self, raw: str) -> bool:
        """False only when the line surely is not a continuation (a plain, unwrapped line
        that no continuation pattern starts)."""
        if not plain(raw):
            return True
        quick = self.a.envelope.quick.match(raw)
        return quick is not None and quick.lastgroup != "drop"

    def targets(self, ids: frozenset[int]) -> tuple[Target, ...]:
        """The targets of a set of literal ids, each once, in index order."""
        found = self._targets.get(ids)
        if found is None:
            unique = {t.serial: t for i in ids for t in self.by_id[i]}
            found = self._targets[ids] = tuple(unique[s] for s in sorted(unique))
        return found

    def text_ids(self, text: str) -> frozenset[int]:
        """The literals in one line of text."""
        hits = self.engine.scan(text.encode("utf-8", "surrogatepass") + b"\n")
        return hits[0][2] if hits else frozenset()

    def text_targets(self, text: str) -> tuple[Target, ...]:
        """Targets by the literals in an entry's own text (after JSON or ANSI peeling)."""
        return self.targets(self.text_ids(text))

    # -- one candidate line ----------------------------------------------------------
    def line(self, number: int, raw: str, ids: frozenset[int], guard: bool) -> Done:
        """Process one line that holds literals `ids`; return the matches it completed."""
        a = self.a
        targets = self.targets(ids)
        if guard:
            return self._full(number, raw, targets)
        env = a.envelope
        line = None
        wrappers: list[str] = []
        is_plain = plain(raw)
        quick = env.quick.match(raw) if is_plain else None
        if quick is not None and quick.lastgroup == "wrapper":  # journald, docker -t ...: peel them only
            inner, wrappers, meta, _, _, terminal = env.unwrap(raw)
            if "instance" in meta or terminal or not plain(inner) or not env.transparent.isdisjoint(wrappers):
                is_plain = False  # the full peel below
            else:
                quick = env.quick.match(inner)
                raw_text = inner
        else:
            raw_text = raw
        if is_plain:
            if quick is not None:
                return [] if quick.lastgroup == "drop" else self._full(number, raw, targets)
            text = raw_text
            for prefix in env.quick_prefixes:
                m = prefix.match(raw_text)
                if m:
                    text = raw_text[m.end() :]
                    break
        else:
            raw = clean_line(raw)
            line, is_cont = env.peel(number, raw)
            if line is None:
                return []
            hint = targets if plain(raw) else self.text_targets(line.text)  # a wrapped line can be plain
            if is_cont or (a.held is not None and not env.transparent.isdisjoint(line.wrappers)):
                return a.physical_line(line, is_cont, hint)
            targets, text, wrappers = hint, line.text, list(line.wrappers)
        # not a continuation: the held entry is complete, process it first
        done: Done = a.release_held()
        stream = a.streams.get(line.instance if line else None)
        if stream is None or stream.preamble or not stream.run.facts.wrappers.issuperset(wrappers):
            return done + self._peeled(number, raw, line, targets)
        run = stream.run
        live = self._live(targets, text, run)
        if not live:
            run.since_start += 1
            run.last_line = max(run.last_line, number)
            return done
        fast = True
        for t, _ in live:
            if t.kind == "sig":
                rule_i, sig_i, entry_i = t.ref
                if entry_i != 0 or self.entries[(rule_i, sig_i)] < 2:
                    fast = False
            elif t.kind != "stat":
                fast = False
        if not fast:
            return done + self._peeled(number, raw, line, targets)
        for t, m in live:
            if t.kind == "stat":
                run.stats.observe(t.ref, m.groupdict())
            else:
                self.deferred.add(run, t.ref[:2], number, raw)
        run.since_start += 1
        run.last_line = max(run.last_line, number)
        return done

    def inert(self, t: Target, run: Run) -> bool:
        """Would this target's effect leave the run unchanged, whatever the line says?"""
        kind, ref = t.kind, t.ref
        if kind in ("cont", "bridge"):
            # only asked for lines known not to continue an entry; another program's line
            # matters only right after a held entry, which never takes this shortcut
            return True
        if kind == "fact":
            return ref[0] in self.scalar_facts and ref[0] in run.facts.values
        if kind == "era":
            if ref[0] in self._eras(run):
                return True
            # a new name no longer joins a full evidence list: then only narrowing matters
            facts, (_, lo, hi) = run.facts, ref
            return (
                len(facts.era_evidence) >= MAX_ERA_EVIDENCE
                and (lo is None or (facts.era_min is not None and lo <= facts.era_min))
                and (hi is None or (facts.era_max is not None and hi >= facts.era_max))
            )
        if kind == "sig":
            return ref[2] != 0 and not self._waiting(run, ref)
        if kind == "startup":
            return run.startup_seen
        if kind == "exclude":
            return ref[0] in run.excluded
        if kind == "absent_block":
            return ref in run.facts.blocked_absent
        return False  # start, preamble, cmdline, stat, version: always matter

    def _eras(self, run: Run) -> set[str]:
        evidence = run.facts.era_evidence
        key = (run.index, len(evidence))
        if self._eras_key != key:
            self._eras_key, self._eras_seen = key, {name for name, _ in evidence}
        return self._eras_seen

    def _live(self, targets: tuple[Target, ...], text: str, run: Run) -> list[tuple[Target, Any]]:
        """Targets whose pattern matches and whose effect would change the run."""
        live = []
        for t in targets:
            if self.inert(t, run):
                continue
            m = t.pattern.search(text)
            if m is not None:
                live.append((t, m))
        return live

    def _all_inert(self, ids: frozenset[int], run: Run) -> bool:
        """Every target of these literals inert. The answer is cached until an entry is
        processed (only entries set facts, eras ...); whether a signature waits for a later
        entry is asked anew each time."""
        version = (run.index, self.a.processed)
        if self._inert_version != version:
            self._inert_version = version
            self._inert_ids.clear()
        found = self._inert_ids.get(ids)
        if found is None:
            targets = self.targets(ids)
            waiting = tuple(t.ref for t in targets if t.kind == "sig" and t.ref[2])
            static = all(self.inert(t, run) for t in targets if not (t.kind == "sig" and t.ref[2]))
            found = self._inert_ids[ids] = (static, waiting)
        return found[0] and not any(self._waiting(run, ref) for ref in found[1])

    def _waiting(self, run: Run, ref: tuple[int, int, int]) -> bool:
        """Could a line holding entry ref[2] of this signature advance a partial match?"""
        key = (ref[0], ref[1])
        if self.deferred.waiting(run, key):
            return True
        matcher = run.matchers.get(key)
        return matcher is not None and any(p.next == ref[2] for p in matcher.partials)

    def _full(self, number: int, raw: str, targets: tuple[Target, ...]) -> Done:
        line, is_cont = self.a.envelope.peel(number, clean_line(raw))
        if line is None:
            return []
        return self.a.physical_line(line, is_cont, targets if plain(raw) else self.text_targets(line.text))

    def _peeled(self, number: int, raw: str, line: Any, targets: tuple[Target, ...]) -> Done:
        if line is None:
            line, _ = self.a.envelope.peel(number, raw)
        return self.a.physical_line(line, False, targets)
