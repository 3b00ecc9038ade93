"""`llamadiag rules new ID --category CAT`: a rule file to fill in.

The skeleton is a valid rule file (it loads, so `rules lint` can point at every line) whose
every text is a TODO; the lint check `unfinished` reports each TODO left, so the rule is refused
until it is written. docs/rule-format.md describes every field.
"""

from __future__ import annotations

import re
from pathlib import Path

from llamadiag.knowledge.files import checkout_root
from llamadiag.userdirs import config_dir

ID = re.compile(r"[a-z0-9][a-z0-9-]*")
CATEGORY = re.compile(r"[a-z0-9][a-z0-9-]*(?:/[a-z0-9][a-z0-9-]*)*")
MARK = "TODO"

SKELETON = """\
# A new rule: replace every TODO (`llamadiag rules lint` lists those left), then run
# `llamadiag rules lint` and `llamadiag rules test`. Fields: docs/rule-format.md.
id: {id}
title: "TODO: what fails, in the words of the person who meets it"
category: {category}
severity: error                 # info | warning | error | critical
summary: "TODO: one sentence: what the user sees."
signatures:
  - name: TODO-signature-name
    entries:
      # a line only this failure prints; regex groups capture values, e.g. (?P<n_ctx>\\d+)
      - regex: "TODO: the failing log line, as a regular expression"
        literal: "TODO"         # text every matching line holds (at least 4 characters)
    within: 1
conditions: []                  # facts that must hold, e.g. - fact: has_mmproj / equals: true
versions:
  introduced_in: null           # first build that can show the failure, when known
  fixed_in: null                # first build with the fix (then a reference with role: fix and build:)
  fix_note: "TODO: what is known about a fix (or remove this line when fixed_in is set)"
diagnosis: "TODO: what happened in this log, in plain words (a captured value by its name in braces)."
root_cause: "TODO: why it happens."
references: []                  # - {{kind: issue, id: "12345", role: report, title: "..."}} (real numbers only)
remediation:
  - text: "TODO: the first thing to do"
    command: null               # a command line for it, or remove this line
verification:
  steps:
    - "TODO: how the user sees the fix worked"
examples:
  - name: "TODO: a log that shows the failure"
    expect: likely              # confirmed | regression | likely | possible
    log: |
      TODO: paste the lines of a real log that show the failure
  - name: "TODO: a similar log that is not this failure"
    expect: none
    log: |
      TODO: paste lines of a log without the failure
"""


class SkeletonError(Exception):
    """The skeleton cannot be written (a bad id or category, or the file exists)."""


def default_folder(cwd: Path) -> Path:
    """Where a new rule goes: rules/ of the llamadiag checkout `cwd` is in, else the user rule folder."""
    root = checkout_root(cwd)
    if root is not None:
        return root / "rules"
    return config_dir() / "rules"  # read by every command, as user_rules_dirs() says


def write_skeleton(rule_id: str, category: str, folder: Path) -> Path:
    """Write FOLDER/CATEGORY/ID.yaml from the skeleton; refuse a bad id or category or an existing file."""
    if not ID.fullmatch(rule_id):
        raise SkeletonError(f"rule id {rule_id!r}: use lowercase letters, digits and hyphens (e.g. spec-draft-oom)")
    if not CATEGORY.fullmatch(category):
        raise SkeletonError(f"category {category!r}: use lowercase words, folders joined by / (e.g. backends/cuda)")
    path = folder / category / f"{rule_id}.yaml"
    if path.exists():
        raise SkeletonError(f"{path} exists already")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SKELETON.format(id=rule_id, category=category), encoding="utf-8")
    return path
