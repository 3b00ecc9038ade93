"""Where the knowledge files are, and their digest, without parsing them.

Light on purpose (no pydantic, no YAML): `--version` and the start-up cache key need the
file list and its digest before, or instead of, loading the knowledge (loader.py).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

KNOWLEDGE_DIRS = ("formats", "facts", "flags")
FORMAT_FILES = ("envelope", "versions", "eras", "runs", "stats")


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
    from llamadiag.userdirs import config_dir  # platformdirs: only when asked

    extra = [Path(p) for p in os.environ.get("LLAMADIAG_RULES_PATH", "").split(os.pathsep) if p]
    default = config_dir() / "rules"
    return [*extra, *([default] if default.is_dir() else [])]


def files_under(root: Path, suffix: str, skip: tuple[str, ...] = ()) -> list[Path]:
    """The files ending in `suffix` under `root`, in path order, leaving out the top-level folders
    named in `skip` (os.walk: pathlib's rglob costs ~10 ms more per start-up on ~250 files)."""
    found: list[tuple[list[str], str]] = []
    for folder, dirs, names in os.walk(root):
        if folder == str(root):
            dirs[:] = [d for d in dirs if d not in skip]
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(folder, root)
        parts = [] if rel == "." else rel.split(os.sep)
        found.extend(([*parts, name], os.path.join(folder, name)) for name in names if name.endswith(suffix))
    return [Path(path) for _, path in sorted(found)]


def rule_files_in(root: Path) -> list[Path]:
    """The rule files of one rule folder (its knowledge folders left out), sorted."""
    return files_under(root, ".yaml", KNOWLEDGE_DIRS)


def rule_folders(extra_dirs: list[Path] | None = None, builtin: bool = True) -> list[tuple[Path, bool]]:
    """Every rule folder asked for, in loading order (later ones override by id), with whether it ships."""
    dirs = [(builtin_rules_dir(), True)] if builtin else []
    return dirs + [(d, False) for d in [*user_rules_dirs(), *(extra_dirs or [])]]


def rule_files(extra_dirs: list[Path] | None = None, builtin: bool = True) -> list[Path]:
    """Every rule file of every existing rule folder, in loading order."""
    return [p for folder, _ in rule_folders(extra_dirs, builtin) if folder.is_dir() for p in rule_files_in(folder)]


def source_files(extra_dirs: list[Path] | None = None, builtin: bool = True) -> list[Path]:
    """Every file `load_knowledge` reads, in the order its digest hashes them."""
    root = builtin_rules_dir()
    files = sorted((root / "facts").glob("*.yaml"))
    files.extend(rule_files(extra_dirs, builtin))
    files.extend(root / "formats" / f"{name}.yaml" for name in FORMAT_FILES)
    files.append(root / "flags" / "llama-server.yaml")
    return files


def knowledge_digest(extra_dirs: list[Path] | None = None, builtin: bool = True) -> str:
    """The digest `Knowledge.digest` has: of the bytes of every knowledge file, in loading order."""
    digest = hashlib.sha256()
    for path in source_files(extra_dirs, builtin):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def checkout_root(start: Path) -> Path | None:
    """The llamadiag source checkout that holds `start` (a folder with pyproject.toml naming the
    project and rules/formats/envelope.yaml), or None."""
    for folder in [start, *start.parents]:
        project = folder / "pyproject.toml"
        if (folder / "rules" / "formats" / "envelope.yaml").is_file() and project.is_file():
            try:
                if 'name = "llamadiag"' in project.read_text(encoding="utf-8", errors="replace"):
                    return folder
            except OSError:
                return None
    return None


def tree_digest(root: Path) -> str:
    """A digest of every YAML file under `root`, names included."""
    digest = hashlib.sha256()
    for path in files_under(root, ".yaml"):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def stale_install(cwd: Path) -> tuple[Path, Path, str] | None:
    """(the checkout's rules/, the installed rules/, a key of both states) when `cwd` is in a
    llamadiag checkout whose rules differ from those of the llamadiag that runs (`pip install .`
    copies them: edits in the checkout are not used until a reinstall). None otherwise, and for
    an editable install (`pip install -e .`), which reads the checkout's rules."""
    root = checkout_root(cwd)
    if root is None:
        return None
    mine, installed = (root / "rules").resolve(), builtin_rules_dir().resolve()
    if mine == installed:
        return None
    ours, theirs = tree_digest(mine), tree_digest(installed)
    if ours == theirs:
        return None
    return mine, installed, hashlib.sha256(f"{mine}\0{ours}\0{theirs}".encode()).hexdigest()[:16]


def user_overrides() -> list[Path]:
    """The rule files of the user rule folders ($LLAMADIAG_RULES_PATH, ~/.config/llamadiag/rules)
    whose id (the file name) is that of a shipped rule: they replace it."""
    folders = [d for d in user_rules_dirs() if d.is_dir()]
    if not folders:  # the common case, at every command's start: no listing of the shipped rules
        return []
    shipped = {p.stem for p in rule_files_in(builtin_rules_dir())}
    return [p for d in folders for p in rule_files_in(d) if p.stem in shipped]


# each model of a feature format file and the file under rules/formats/ that holds it
FEATURE_FORMAT_FILES = {
    "RedactionSpec": "redaction.yaml",
    "TemplatingSpec": "templating.yaml",
    "LookupWords": "lookup.yaml",
    "OsHints": "bugreport.yaml",
    "ProbeSpec": "probe.yaml",
    "Unsettled": "unsettled.yaml",
}
