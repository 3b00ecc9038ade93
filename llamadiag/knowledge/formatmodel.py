"""Pydantic models of the non-rule knowledge files: log envelopes, version shapes,
era fingerprints, run boundaries, statistics lines, facts and flags."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

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
    """rules/formats/stats.yaml: statistic lines and the routine lines of a healthy server."""

    lines: list[StatLine]
    routine: list[str] = Field(
        default_factory=list,
        description="Lines a healthy server prints per request, of every era. Literals found in them are "
        "handled a stretch of lines at a time (the bulk path); this only changes speed, never findings.",
    )


class Fact(Strict):
    """A fact: its type, how the log or a flag sets it, and its value when absent."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    type: Literal["str", "int", "float", "bool", "list", "count"]
    describe: str
    flag: str | None = None
    flag_value: Any = Field(None, description="Value when the flag is present (for switch flags).")
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
