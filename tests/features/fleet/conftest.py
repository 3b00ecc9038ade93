"""A small fleet built from the shipped sample logs: folders of instances, a file holding two
compose services, a tar archive of two logs, a gzip log, a broken gzip and an empty file; each
log's modification time is fixed (two days apart) so the "seen" times are reproducible."""

from __future__ import annotations

import gzip
import os
import tarfile
from pathlib import Path

import pytest

from tests.paths import SAMPLES

DAY0 = 1_780_000_000  # 2026-05-28
PODS = {
    "gpu-a/seed": "seed-b11503-default.log",
    "gpu-a/seed-lv4": "seed-b11503-lv4.log",
    "gpu-b/fixed": "seed-b11721-fixed-default.log",
    "gpu-b/oom": "memory-cuda-oom-b4589-raw.log",
    "gpu-c/vulkan": "backends-vulkan-device-lost-journald.log",
    "gpu-c/ticket": "seed-ticket.txt",
}


def _compose_two(dest: Path) -> None:
    first = (SAMPLES / "memory-fit-skipped-b10621-compose.log").read_text().splitlines()
    second = (SAMPLES / "model-loading-lfs-pointer-compose.log").read_text().splitlines()
    lines = [line for line in first if not line.startswith("Attaching")]
    lines += [line.replace("llama-1  | ", "llama-2  | ") for line in second if not line.startswith("Attaching")]
    dest.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="session")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fleet")
    for name, sample in sorted(PODS.items()):
        dest = root / f"{name}.log"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes((SAMPLES / sample).read_bytes())
    (root / "compose").mkdir()
    _compose_two(root / "compose" / "stack.log")
    with gzip.open(root / "gpu-b" / "rotated.log.gz", "wb") as gz:
        gz.write((SAMPLES / "seed-b11503-lv4.log").read_bytes())
    (root / "gpu-b" / "broken.log.gz").write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)) * 2)  # gzip magic, bad data
    (root / "gpu-c" / "core").write_bytes(bytes(range(256)) * 40)  # a core dump beside the logs: binary
    with tarfile.open(root / "archive.tar.gz", "w:gz") as tar:
        tar.add(SAMPLES / "server-port-in-use-b5060-windows.log", arcname="win/port.log")
        tar.add(SAMPLES / "templates-chatml-fallback-b5400-docker.log", arcname="docker/chatml.log")
    for n, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file())):
        t = DAY0 + (n % 3) * 2 * 86400
        os.utime(path, (t, t))
    return root
