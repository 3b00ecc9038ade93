"""Pydantic models of the non-rule knowledge files: log envelopes, version shapes,
era fingerprints, run boundaries, statistics lines, facts and flags."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import Field, model_validator

from llamadiag.knowledge.rulemodel import Strict


class PatternSpec(Strict):
    """A pattern with its optional required literal and the value it sets."""

    regex: str
    literal: str | None = None
    value: Any = None


class Wrapper(Strict):
    """An outer prefix added by whatever carried the line (journald, docker, router ...).

    kind=prefix: `regex` matches at the start and is removed; named groups are recorded
    (a group named `instance` separates servers in one stream, `level` sets the level).
    kind=json: the line is a JSON object and `field` holds the message.
    kind=quoted: `regex` matches a head ending where a quoted value begins (logfmt `msg=`); the
    value is unquoted (`\\"` and the other escapes undone) and the rest of the line kept after it.
    kind=pyliteral: after `regex`, the rest is a Python literal (a dict an exception printed);
    it is written as compact JSON, the way the server sent it.
    """

    name: str
    kind: Literal["prefix", "json", "quoted", "pyliteral"] = "prefix"
    regex: str
    field: str | None = None
    suffix: str | None = Field(None, description="Also removed at the end of the line when the wrapper matched.")
    transparent: bool = Field(
        False,
        description=(
            "A line of another program interleaved with llama's (ollama, its HTTP access log): it does not "
            "end the entry before it, so continuation lines after it still join that entry."
        ),
    )
    literal: str | None = Field(None, description="Text every such line holds (a transparent wrapper needs one).")
    level_map: dict[str, str] = Field(default_factory=dict)
    tag: str | None = Field(None, description="Tag given to lines of this wrapper (e.g. proxy lines).")
    terminal: bool = Field(False, description="Stop peeling after this wrapper (its rest is not a llama line).")


class Envelope(Strict):
    """rules/formats/envelope.yaml: wrappers, dropped lines, llama's prefix and continuation lines."""

    wrappers: list[Wrapper]
    drop: list[str] = Field(default_factory=list, description="Lines that carry nothing (fences, shell decoration).")
    llama_prefix: list[str] = Field(description="llama's own prefix forms; groups time, level.")
    tag_column: str = Field(description="Module tag column; groups tag, func.")
    slot_fields: str = Field(description="Slot line fields after the tag column; groups slot_id, task_id.")
    continuations: list[PatternSpec] = Field(description="Lines that continue the previous entry.")
    level_words: dict[str, str] = Field(
        default_factory=dict, description="Lines with no level letter: regex -> level (raw error lines)."
    )
    elisions: list[PatternSpec] = Field(
        default_factory=list,
        description=(
            "Lines where the poster cut the log (`...`, `<snip>`); a group `lines` gives how many were cut. "
            "Not entries: a signature spanning one counts the cut lines when known, else only the shown ones, "
            "and is at most likely."
        ),
    )
    elision_question: str = Field(
        "Lines were cut between the evidence lines: paste the lines in between to confirm.",
        description="Asked when a finding's evidence spans an elision.",
    )


class VersionShape(Strict):
    """A version line's shape and where such lines come from."""

    name: str
    regex: str
    literal: str | None = None
    source: Literal["log", "version-output", "api"] = "log"


class Unusable(Strict):
    """A version pattern that marks a build as unusable, and why."""

    regex: str
    reason: str


class Versions(Strict):
    """rules/formats/versions.yaml: version line shapes, the build question and unusable builds."""

    shapes: list[VersionShape]
    question: str = Field(description="Asked when a rule's fix window needs the build; {fixed} is the fix build.")
    unusable: list[Unusable] = Field(default_factory=list)


class EraFingerprint(Strict):
    """A line that only builds in a range print."""

    name: str
    regex: str
    literal: str | None = None
    min_build: int | None = None
    max_build: int | None = None


class Eras(Strict):
    """rules/formats/eras.yaml: fingerprints that bound the build."""

    fingerprints: list[EraFingerprint]


class ChildArgv(Strict):
    """A router logging a child's argv one element per line: the only command line a log holds."""

    spawn: PatternSpec = Field(description="Names the child; group `instance` is its stream key (the port).")
    header: PatternSpec = Field(description="The line after which argv elements follow.")
    item: PatternSpec = Field(description="One argv element; group `arg`.")


class Runs(Strict):
    """rules/formats/runs.yaml: entries that start a run, precede a start, or complete startup."""

    start: list[PatternSpec] = Field(description="An entry that opens a new server run.")
    preamble: list[PatternSpec] = Field(
        default_factory=list, description="Entries just before a start that belong to the new run."
    )
    startup_complete: list[PatternSpec] = Field(
        default_factory=list, description="Entries proving the run printed its whole startup."
    )
    commandline: list[PatternSpec] = Field(default_factory=list, description="A pasted shell command line.")
    child_argv: ChildArgv | None = None
    snippet_question: str = Field(
        "The input starts after the server started: paste the log from its start to confirm.",
        description=(
            "Asked when a run shows no start line (a snippet): its findings stay at 'likely' at most, "
            "since the lines before the excerpt could change the verdict."
        ),
    )


class StatLine(Strict):
    """A per-request statistic line and its pattern."""

    name: Literal["prompt", "generation", "draft", "http", "error", "restart"]
    regex: str
    literal: str | None = None


class Stats(Strict):
    """rules/formats/stats.yaml: the statistic lines aggregated per run."""

    lines: list[StatLine]


class Fact(Strict):
    """A fact: its type, how the log or a flag sets it, and its value when absent."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: Literal["str", "int", "float", "bool", "list", "count"]
    describe: str
    flag: str | None = None
    flag_value: Any = Field(None, description="Value when the flag is present (for switch flags).")
    flag_unknown: list[str] = Field(
        default_factory=list,
        description="Flag values that do not give the fact's value (-c 0: the context comes from the model).",
    )
    patterns: list[PatternSpec] = Field(default_factory=list)
    absent: Any = Field(None, description="Value when a complete startup shows no pattern.")
    absent_unless: list[PatternSpec] = Field(
        default_factory=list, description="Lines that, when seen, forbid using `absent`."
    )
    absent_from_cmdline: Any = Field(None, description="Value when a given command line lacks the flag.")
    unknown_with_flags: list[str] = Field(
        default_factory=list, description="Flags that make absence from the command line meaningless."
    )


class Facts(Strict):
    """A file of fact definitions under rules/facts/."""

    facts: list[Fact]


class Flag(Strict):
    """A llama-server command-line flag: its aliases, environment variables and value."""

    name: str = Field(description="Canonical name: the long option without dashes.")
    aliases: list[str] = Field(min_length=1)
    env: list[str] = Field(default_factory=list)
    takes_value: Literal["yes", "no", "optional"] = "yes"
    choices: list[str] | None = None
    old_spellings: list[str] = Field(default_factory=list, description="Removed or renamed spellings.")
    note: str | None = None


class Flags(Strict):
    """rules/flags/llama-server.yaml: program names, container images and flags."""

    program: list[str] = Field(description="Program names that start a llama-server command line.")
    images: list[str] = Field(
        default_factory=list, description="Container image names whose arguments go to the server."
    )
    shell_prompt: str = Field(
        description="A shell prompt in front of a pasted command line (`user@host:~$ `), removed before parsing."
    )
    flags: list[Flag]


# -- formats read by the features (redaction, unmatched-line templates, lookup words, bug reports)

class SecretPattern(Strict):
    """A pattern of a secret to mask, and its category."""

    name: str
    category: str
    regex: str


class ContentSpec(Strict):
    """Keys and shapes of prompt and response content to mask."""

    keys: list[str]
    base64: str
    lines: list[str] = Field(default_factory=list)


class PseudonymPattern(Strict):
    """A pattern of an address or name to replace with a stable pseudonym."""

    kind: Literal["ip", "host", "pod"]
    regex: str


class RedactionSpec(Strict):
    """rules/formats/redaction.yaml: what redaction replaces and what it keeps."""

    secrets: list[SecretPattern]
    keep_secret: list[str] = Field(default_factory=list)
    secret_keys: list[str] = Field(default_factory=list)
    secret_facts: list[str] = Field(default_factory=list)
    content: ContentSpec
    paths: list[str] = Field(default_factory=list)
    keep_user: list[str] = Field(default_factory=list)
    pseudonyms: list[PseudonymPattern] = Field(default_factory=list)
    keep_values: list[str] = Field(default_factory=list)


class Mask(Strict):
    """A pattern replaced by a token when lines are grouped into templates."""

    token: str
    regex: str


class TemplatingSpec(Strict):
    """rules/formats/templating.yaml: error and warning words and the masks of variable parts."""

    error_like: str
    warning_like: str
    benign: str | None = None
    masks: list[Mask]


class LookupWords(Strict):
    """rules/formats/lookup.yaml: the words support people use, and words that carry nothing."""

    synonyms: dict[str, list[str]] = Field(default_factory=dict)
    stopwords: list[str] = Field(default_factory=list)


class OsHints(Strict):
    """rules/formats/bugreport.yaml: words and wrappers that name the operating system."""

    os_words: list[tuple[str, str]]
    wrapper_os: dict[str, str]


# -- rules/formats/probe.yaml: what a running llama-server says on its HTTP endpoints ---------


class ProbeTimeouts(Strict):
    """Time-outs of a probe: per connect, per read, and for the whole probe."""

    connect_s: float = Field(gt=0, le=60, description="Time-out of the TCP connect, per request.")
    read_s: float = Field(gt=0, le=60, description="Time-out of each read, per request.")
    total_s: float = Field(gt=0, le=300, description="Bound on the whole probe, every request together.")


class ProbeEndpoint(Strict):
    """One endpoint a probe asks (GET only), and whether it is required."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    path: str = Field(pattern=r"^/[\w/.-]*$", description="Asked with GET only; never a request that generates.")
    kind: Literal["json", "prometheus"] = "json"
    required: bool = Field(False, description="The probe fails when this endpoint does not answer 200.")
    per_model: bool = Field(
        False, description="In router mode, asked again with ?model=ID for each model that is already loaded."
    )


class ProbeIdentify(Strict):
    """How an answer is known to be llama-server's (and not a proxy's or another server's)."""

    endpoint: str
    fields: list[str] = Field(
        min_length=1,
        description="Top-level JSON fields; llama-server's answer has at least one (old builds lack some).",
    )


class ProbeVersion(Strict):
    """Where a server's answer holds its build string, and how to read it."""

    endpoint: str
    path: str
    regex: str = Field(description="Named groups build, commit and optionally fork (a fork's own tag).")


class ProbeRouter(Strict):
    """Router mode: the models a router serves, and which child server runs each one."""

    endpoint: str
    when_path: str = Field(description="Path in `when_endpoint`'s answer that names router mode.")
    when_endpoint: str
    when_equals: Any
    models: str = Field(description="Path of the list of models in `endpoint`'s answer.")
    id: str
    status: str
    loaded: list[str] = Field(description="Status values of a model whose child server runs.")
    args: str = Field(description="Path of the child's argv in a model's entry.")
    port_flag: list[str] = Field(description="Spellings of the flag whose value is the child's port (its log prefix).")


class ProbeWhen(Strict):
    """A test on a server's answer (a field at a path, optionally matching a value)."""

    endpoint: str
    path: str
    equals: Any = None
    missing: bool = Field(False, description="True: the mapping applies when the path is missing.")


class ProbeFact(Strict):
    """One fact from one endpoint's answer.

    `path` is '/'-separated keys into the JSON answer (a number picks a list item, `*` every
    item, `#` the length of the list it follows); for a prometheus endpoint it is a metric name.
    """

    fact: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    endpoint: str
    path: str
    aggregate: Literal["first", "any", "count_true", "list"] = Field(
        "first", description="How the values of a `*` path become one fact."
    )
    split: str | None = Field(None, description="Keep the first part of a string value split at this.")
    values: dict[str, Any] | None = Field(
        None, description="Raw value (as lowercase text) -> fact value; a value not listed gives no fact."
    )
    skip: list[Any] = Field(default_factory=list, description="Raw values that say nothing (none, '').")
    when: ProbeWhen | None = None


class ProbeSpec(Strict):
    """rules/formats/probe.yaml: endpoints, time-outs, identification and the fact mapping."""

    timeouts: ProbeTimeouts
    max_body_bytes: int = Field(gt=0, le=64 * 1024 * 1024)
    user_agent: str
    api_key_env: list[str] = Field(
        default_factory=list, description="Variables llama-server reads its API key from; the key when none is given."
    )
    endpoints: list[ProbeEndpoint] = Field(min_length=1)
    identify: ProbeIdentify
    version: ProbeVersion
    router: ProbeRouter
    facts: list[ProbeFact]


class UnsettledLine(Strict):
    """A pattern of a distinctive line as the reports posted it."""

    regex: str
    literal: str = Field(description="A substring every matching line holds (checked before the regex).")


class UnsettledReport(Strict):
    """A llama.cpp report whose cause is not settled: open, or closed without a fix or a stated cause."""

    issue: int = Field(gt=0, description="The ggml-org/llama.cpp issue number.")
    title: str = Field(description="The issue's title as filed.")
    state: str = Field(description="A key of `states` (open, closed-stale, closed-unresolved).")
    subsystem: str
    lines: list[UnsettledLine] = Field(min_length=1, description="A line matches when any entry does.")
    examples: list[str] = Field(min_length=1, description="The line(s) verbatim as posted in the thread.")
    known: str = Field(description="What the thread establishes, and what it does not.")
    explained_by: list[str] = Field(
        default_factory=list,
        description="Rule ids whose finding, when present, settles these lines: the hint is then left out.",
    )
    checked: date = Field(description="When the thread's state was last looked at.")


class Unsettled(Strict):
    """rules/formats/unsettled.yaml: known reports of unexplained failures, for `--unmatched` and `report`."""

    states: dict[str, str] = Field(description="State -> the words shown for it (e.g. 'closed as stale').")
    reports: list[UnsettledReport]

    @model_validator(mode="after")
    def _known_states(self) -> Unsettled:
        for r in self.reports:
            if r.state not in self.states:
                raise ValueError(f"#{r.issue}: state {r.state!r} is not one of {sorted(self.states)}")
        numbers = [r.issue for r in self.reports]
        if len(numbers) != len(set(numbers)):
            raise ValueError("an issue is listed twice")
        return self
