"""The start-up cache holds light copies of the validated knowledge (issue #11 point 4): a hit
builds no pydantic model class, and the copies read exactly as the models do."""

from __future__ import annotations

import inspect
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pydantic

from llamadiag.knowledge import formatmodel, light, rulemodel
from llamadiag.knowledge.loader import load_knowledge
from llamadiag.ruletools.checked import checked_knowledge, lighten

ROOT = Path(__file__).resolve().parents[2]


def test_every_model_class_has_a_light_copy() -> None:
    models = {
        name
        for module in (rulemodel, formatmodel)
        for name, cls in vars(module).items()
        if inspect.isclass(cls) and issubclass(cls, pydantic.BaseModel) and cls.__module__ == module.__name__
    }
    assert models - {"Strict"} == set(light.light_names())


def test_light_knowledge_dumps_as_the_validated_models_do() -> None:
    validated = load_knowledge()
    dumps = [loaded.rule.model_dump() for loaded in validated.rules]
    envelope, facts, flags = (
        validated.envelope.model_dump(),
        [f.model_dump() for f in validated.facts],
        validated.flags.model_dump(),
    )
    k = lighten(validated)
    assert all(isinstance(loaded.rule, light.Light) for loaded in k.rules)
    assert [loaded.rule.model_dump() for loaded in k.rules] == dumps
    assert k.envelope.model_dump() == envelope and [f.model_dump() for f in k.facts] == facts
    assert k.flags.model_dump() == flags
    ref = next(r for loaded in k.rules for r in loaded.rule.references if r.kind == "issue")
    assert ref.url == f"https://github.com/{ref.repo}/issues/{ref.id}"


def test_light_copies_are_frozen_and_compare_by_value() -> None:
    k = lighten(load_knowledge())
    rule = k.rules[0].rule
    again = pickle.loads(pickle.dumps(rule))
    assert again == rule and again is not rule and again != k.rules[1].rule
    try:
        rule.title = "changed"
    except AttributeError:
        pass
    else:
        raise AssertionError("a light rule accepted a change")


def test_a_cache_hit_imports_no_model_class(tmp_path: Path) -> None:
    """In a fresh process: the second load comes from the cache and never imports the models."""
    code = (
        "import sys; from llamadiag.ruletools.checked import checked_knowledge; k = checked_knowledge(); "
        "print(len(k.rules), sorted(m for m in sys.modules if m.endswith(('rulemodel', 'formatmodel', 'yaml'))))"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    hit = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0 and hit.returncode == 0, first.stderr[-2000:] + hit.stderr[-2000:]
    count = int(first.stdout.split()[0])
    assert count > 50 and "rulemodel" in first.stdout  # the miss validated the files
    assert hit.stdout.strip() == f"{count} []"


def test_a_cache_hit_diagnoses_as_a_fresh_load(tmp_path: Path, monkeypatch) -> None:
    from llamadiag import api

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = checked_knowledge()  # a miss: validated, then lightened
    hit = checked_knowledge()
    assert hit is not first and [r.rule for r in hit.rules] == [r.rule for r in first.rules]
    validated = load_knowledge()  # the pydantic models themselves
    for name in ("templates-router-tool-parse-b9413.log", "seed-b11503-lv4.log", "memory-cuda-oom-b4589-raw.log"):
        log = ROOT / "sample_logs" / name
        with_models = api.diagnose(log, knowledge=validated).report
        with_light = api.diagnose(log, knowledge=hit).report
        assert with_light.findings and api.dump(with_light, json=True) == api.dump(with_models, json=True)
