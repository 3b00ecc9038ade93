"""`explain --format jsonl`: one finding per line, each the same object as in the JSON output's
`findings` (for `jq -c`, log shippers and line-oriented tools). Nothing else is written: a log
with no finding gives no line."""

from __future__ import annotations

import json
from typing import IO, Any


def write_findings_jsonl(data: dict[str, Any], out: IO[str]) -> None:
    """Write each finding of report data (`render.json.report_data`) as one line of JSON."""
    for finding in data["findings"]:
        out.write(json.dumps(finding, ensure_ascii=False, separators=(",", ":")) + "\n")
