"""llamadiag.api: the documented example runs, and the API gives what the command line gives."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from llamadiag import api
from tests.paths import DOCS, ROOT, SAMPLES


def test_the_documented_example_runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code = re.search(r"```python\n(.*?)```", (DOCS / "api.md").read_text(), re.S)
    assert code is not None
    monkeypatch.chdir(ROOT)
    exec(compile(code.group(1), "docs/api.md", "exec"), {})
    out = capsys.readouterr().out.split("\n")
    assert out[0] == "spec-vision-draft-position-gap confirmed error"
    assert out[-2].startswith("spec-vision-draft-position-gap ")


def test_diagnose_equals_explain_json(knowledge: api.Knowledge) -> None:
    log = SAMPLES / "seed-ticket.txt"
    mine = api.dump(api.diagnose(log, knowledge=knowledge).report, json=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "llamadiag", "explain", "-f", "json", "--no-redact", "--why", str(log)],
        capture_output=True, text=True, env=env, timeout=120,
    )
    theirs = json.loads(out.stdout)
    theirs.pop("redaction")
    theirs.pop("schema_version")  # the output wraps the report in its contract's version
    assert theirs == mine


def test_text_stream_and_file_agree(knowledge: api.Knowledge, tmp_path) -> None:
    text = (SAMPLES / "seed-b11503-lv4.log").read_text()
    by_text = api.diagnose_text(text, knowledge=knowledge).report
    path = tmp_path / "x.log"
    path.write_text(text)
    by_file = api.diagnose(path, knowledge=knowledge).report
    with path.open("rb") as stream:
        by_stream = api.diagnose_stream(stream, knowledge=knowledge).report
    ids = [f.rule_id for f in by_file.findings]
    assert ids == ["spec-vision-draft-position-gap"]
    assert [f.rule_id for f in by_text.findings] == ids == [f.rule_id for f in by_stream.findings]


def test_unreadable_input_raises_input_error(knowledge: api.Knowledge, tmp_path) -> None:
    with pytest.raises(api.InputError):
        api.diagnose(tmp_path / "absent.log", knowledge=knowledge)


def test_public_names_are_exported() -> None:
    for name in api.__all__:
        assert hasattr(api, name), name


def test_the_package_top_exports_the_api_lazily() -> None:
    code = "import sys, llamadiag; assert 'llamadiag.engine.analyze' not in sys.modules; " \
        "assert llamadiag.diagnose is llamadiag.api.diagnose; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "ok", out.stderr
