#!/usr/bin/env python3
"""Capture the CUDA scenarios (cuda_scenarios.py) with a CUDA build of llama-server b11312.

Runs on the GPU machine (cuda_job.sh calls it after the build); reuses capture.run_scenario, so the
logs and provenance have the CPU corpus's shape, plus `backend`, `gpu`, `nvcc`, `cmake_flags` and
`env`. The provenance is rewritten after every scenario, so a run cut short keeps what it did.

    python3 capture_cuda.py --exe BUILD/bin/llama-server --models DIR --out DIR [--info env.json] [-s NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import capture  # noqa: E402
import cuda_scenarios as cs  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exe", type=Path, required=True)
    ap.add_argument("--models", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--info", type=Path, help="JSON with gpu, nvcc, cmake_flags, build_s (from cuda_job.sh)")
    ap.add_argument("-s", "--scenario", action="append")
    args = ap.parse_args()
    import yaml

    info = json.loads(args.info.read_text()) if args.info and args.info.exists() else {}
    chosen = [cs.BY_NAME[n] for n in args.scenario] if args.scenario else cs.CUDA_SCENARIOS
    args.out.mkdir(parents=True, exist_ok=True)
    prov: dict[str, dict] = {}
    for s, env in chosen:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        t0 = time.monotonic()
        try:
            rec = capture.run_scenario(s, args.exe.resolve(), args.models.resolve(), args.out / f"{s.name}.log")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        rec = {**rec, "backend": "CUDA",
               **{k: json.loads(json.dumps(info[k])) for k in ("gpu", "driver", "nvcc", "cmake_flags") if k in info},
               "env": env or None}
        if not rec["env"]:
            del rec["env"]
        prov[s.name] = rec
        print(f"{s.name}: {rec['startup']}, exit {rec['exit_code']}, statuses "
              f"{[r['status'] for r in rec['requests']]}, {time.monotonic() - t0:.1f} s", flush=True)
        doc = {"about": "Provenance of the CUDA logs (tests/realserver/capture_cuda.py).",
               "logs": [prov[k] for k in sorted(prov)]}
        (args.out / "provenance-cuda.yaml").write_text(
            yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=110))
    return 0


if __name__ == "__main__":
    sys.exit(main())
