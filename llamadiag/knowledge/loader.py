"""Loading everything under rules/: formats, facts, flags and failure rules.

A broken rule file does not stop the others from loading; it is reported with file,
line and reason in `Knowledge.errors`. Shipped rules come from the package (wheel) or
the checkout; user folders (--rules DIR, `rules` in the user config folder) add to them
or override them by id.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from llamadiag.knowledge import formatmodel as fm
from llamadiag.knowledge.rulemodel import Rule
from llamadiag.knowledge.yamlio import RuleFileError, load_yaml, validate
from llamadiag.userdirs import config_dir

KNOWLEDGE_DIRS = ("formats", "facts", "flags")


def builtin_rules_dir() -> Path:
    """rules/ inside the installed package, else beside the package in a checkout."""
    here = Path(__file__).resolve().parent.parent  # the llamadiag package
    for candidate in (here / "rules", here.parent / "rules"):
        if (candidate / "formats" / "envelope.yaml").is_file():
            return candidate
    raise FileNotFoundError("llamadiag's rules/ folder is missing from this installation")


def user_rules_dirs() -> list[Path]:
    """User rule folders: those in $LLAMADIAG_RULES_PATH, then `rules` in the user config folder
    (userdirs.config_dir) if it exists."""
    extra = [Path(p) for p in os.environ.get("LLAMADIAG_RULES_PATH", "").split(os.pathsep) if p]
    default = config_dir() / "rules"
    return [*extra, *([default] if default.is_dir() else [])]


@dataclass
class LoadedRule:
    """A rule, the file it came from, its YAML line positions, and whether it ships with llamadiag."""

    rule: Rule
    path: Path
    positions: dict[tuple, int]
    builtin: bool


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

    def rule(self, rule_id: str) -> LoadedRule | None:
        """The loaded rule with this id, or None."""
        return next((r for r in self.rules if r.rule.id == rule_id), None)


def _load_model(model: type, path: Path):
    data, positions = load_yaml(path)
    return validate(model, data, path, positions)


def _rule_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.yaml") if p.relative_to(root).parts[0] not in KNOWLEDGE_DIRS)


def load_rule_file(path: Path, root: Path, builtin: bool) -> LoadedRule:
    """Load and validate one rule file; its id must match its file name and folder its category."""
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


def source_files(extra_dirs: list[Path] | None = None, builtin: bool = True) -> list[Path]:
    """Every file `load_knowledge` reads, in the order its digest hashes them."""
    root = builtin_rules_dir()
    files = sorted((root / "facts").glob("*.yaml"))
    dirs = [root] if builtin else []
    for folder in [*dirs, *user_rules_dirs(), *(extra_dirs or [])]:
        if folder.is_dir():
            files.extend(_rule_files(folder))
    files.extend(root / "formats" / f"{name}.yaml" for name in ("envelope", "versions", "eras", "runs", "stats"))
    files.append(root / "flags" / "llama-server.yaml")
    return files


def load_knowledge(extra_dirs: list[Path] | None = None, builtin: bool = True) -> Knowledge:
    """The formats, facts and flags of rules/, the builtin rules unless `builtin` is False, and `extra_dirs`."""
    root = builtin_rules_dir()
    errors: list[RuleFileError] = []
    digest = hashlib.sha256()
    formats = root / "formats"
    facts: list[fm.Fact] = []
    for path in sorted((root / "facts").glob("*.yaml")):
        digest.update(path.read_bytes())
        facts.extend(_load_model(fm.Facts, path).facts)
    names = [f.name for f in facts]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RuleFileError(root / "facts", None, f"fact names defined twice: {', '.join(sorted(dup))}")
    loaded: dict[str, LoadedRule] = {}
    dirs = [(root, True)] if builtin else []
    dirs += [(d, False) for d in [*user_rules_dirs(), *(extra_dirs or [])]]
    for folder, is_builtin in dirs:
        if not folder.is_dir():
            errors.append(RuleFileError(folder, None, "rule folder does not exist"))
            continue
        for path in _rule_files(folder):
            digest.update(path.read_bytes())
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
            loaded[item.rule.id] = item  # a user folder overrides a shipped rule of the same id
    for name in ("envelope", "versions", "eras", "runs", "stats"):
        digest.update((formats / f"{name}.yaml").read_bytes())
    flags_path = root / "flags" / "llama-server.yaml"
    digest.update(flags_path.read_bytes())
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
        digest=digest.hexdigest()[:16],
    )
