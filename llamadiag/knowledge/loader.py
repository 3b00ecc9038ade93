"""Loading everything under rules/: formats, facts, flags and failure rules.

A broken rule file does not stop the others from loading; it is reported with file,
line and reason in `Knowledge.errors`. Shipped rules come from the package (wheel) or
the checkout; user folders (--rules DIR, `rules` in the user config folder) add to them
or override them by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llamadiag.knowledge.files import (
    builtin_rules_dir,
    knowledge_digest,
    rule_files_in,
    rule_folders,
    source_files,
    user_rules_dirs,
)
from llamadiag.knowledge.yamlio import RuleFileError, load_yaml, validate

if TYPE_CHECKING:  # the model classes are built only when knowledge is parsed (not from the start-up cache)
    from llamadiag.knowledge import formatmodel as fm
    from llamadiag.knowledge.rulemodel import Rule

# re-exported: where the knowledge files are is asked of the loader too
__all__ = ["Knowledge", "LoadedRule", "builtin_rules_dir", "load_knowledge", "source_files", "user_rules_dirs"]


@dataclass
class LoadedRule:
    """A rule, the file it came from, its YAML line positions, and whether it ships with llamadiag."""

    rule: Rule
    path: Path
    positions: dict[tuple, int]
    builtin: bool
    overrides: Path | None = None  # the shipped rule file this user rule replaces

    def source_file(self) -> str:
        """Where the rule is written: rules/<category>/<id>.yaml for a shipped rule (the same on every
        installation), the path as given for a user rule."""
        if self.builtin:
            try:
                return "rules/" + self.path.relative_to(builtin_rules_dir()).as_posix()
            except ValueError:
                pass
        return str(self.path)

    def overrides_note(self) -> str | None:
        """One line saying which shipped rule this user rule replaces, or None."""
        if self.overrides is None:
            return None
        return f"user rule {self.path} overrides the shipped rule {self.rule.id!r} ({self.overrides})"


@dataclass
class Knowledge:
    """Everything loaded from rules/: the formats, facts, flags and rules, and their digest."""

    envelope: fm.Envelope
    versions: fm.Versions
    eras: fm.Eras
    runs: fm.Runs
    stats: fm.Stats
    facts: list[fm.Fact]
    flags: fm.Flags
    rules: list[LoadedRule]
    errors: list[RuleFileError] = field(default_factory=list)
    digest: str = ""
    # what the engine derives from the knowledge once per knowledge (the literal index), kept
    # with it in the start-up cache; the engine owns the values
    derived: dict[str, Any] = field(default_factory=dict)

    def rule(self, rule_id: str) -> LoadedRule | None:
        """The loaded rule with this id, or None."""
        return next((r for r in self.rules if r.rule.id == rule_id), None)

    def override_notes(self, folders: Sequence[Path]) -> list[str]:
        """One note per rule of these folders that replaces a shipped rule of the same id."""
        roots = [f.resolve() for f in folders]
        notes = []
        for loaded in self.rules:
            note = loaded.overrides_note()
            if note and any(loaded.path.resolve().is_relative_to(root) for root in roots):
                notes.append(note)
        return notes


def _load_model(model: type, path: Path):
    data, positions = load_yaml(path)
    return validate(model, data, path, positions)


def load_rule_file(path: Path, root: Path, builtin: bool) -> LoadedRule:
    """Load and validate one rule file; its id must match its file name and folder its category."""
    from llamadiag.knowledge.rulemodel import Rule

    data, positions = load_yaml(path)
    rule = validate(Rule, data, path, positions)
    if path.stem != rule.id:
        raise RuleFileError(path, positions.get(("id",)), f"id {rule.id!r} differs from the file name {path.stem!r}")
    folder = "/".join(path.relative_to(root).parts[:-1])
    if folder and folder != rule.category:
        raise RuleFileError(
            path, positions.get(("category",)), f"category {rule.category!r} differs from its folder {folder!r}"
        )
    return LoadedRule(rule, path, positions, builtin)


def load_knowledge(extra_dirs: list[Path] | None = None, builtin: bool = True) -> Knowledge:
    """The formats, facts and flags of rules/, the builtin rules unless `builtin` is False, and `extra_dirs`."""
    from llamadiag.knowledge import formatmodel as fm

    root = builtin_rules_dir()
    errors: list[RuleFileError] = []
    formats = root / "formats"
    facts: list[fm.Fact] = []
    for path in sorted((root / "facts").glob("*.yaml")):
        facts.extend(_load_model(fm.Facts, path).facts)
    names = [f.name for f in facts]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuleFileError(root / "facts", None, f"fact names defined twice: {', '.join(sorted(dup))}")
    loaded: dict[str, LoadedRule] = {}
    for folder, is_builtin in rule_folders(extra_dirs, builtin):
        if not folder.is_dir():
            errors.append(RuleFileError(folder, None, "rule folder does not exist"))
            continue
        for path in rule_files_in(folder):
            try:
                item = load_rule_file(path, folder, is_builtin)
            except RuleFileError as exc:
                errors.append(exc)
                continue
            previous = loaded.get(item.rule.id)
            if previous is not None and previous.builtin == is_builtin:
                errors.append(
                    RuleFileError(
                        path,
                        item.positions.get(("id",)),
                        f"duplicate rule id {item.rule.id!r} (also in {previous.path})",
                    )
                )
                continue
            if previous is not None:  # a user folder overrides a shipped rule of the same id
                item.overrides = previous.overrides or previous.path
            loaded[item.rule.id] = item
    flags_path = root / "flags" / "llama-server.yaml"
    return Knowledge(
        envelope=_load_model(fm.Envelope, formats / "envelope.yaml"),
        versions=_load_model(fm.Versions, formats / "versions.yaml"),
        eras=_load_model(fm.Eras, formats / "eras.yaml"),
        runs=_load_model(fm.Runs, formats / "runs.yaml"),
        stats=_load_model(fm.Stats, formats / "stats.yaml"),
        facts=facts,
        flags=_load_model(fm.Flags, flags_path),
        rules=sorted(loaded.values(), key=lambda r: r.rule.id),
        errors=errors,
        digest=knowledge_digest(extra_dirs, builtin),
    )
