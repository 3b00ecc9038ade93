#!/usr/bin/env python3
"""Build the real llama-server (CPU) from the pinned llama-cpp-python sdist, once per machine.

The sdist vendors llama.cpp at commit 0c1e57098 (build b11312). Nothing of llama.cpp is
committed: the source and the binary live in the cache,
``${XDG_CACHE_HOME:-~/.cache}/llamadiag/llama-server/<commit>/``, in a folder keyed by the
sdist version, the commit and the cmake flags. The script prints the path of the binary.

    python tests/realserver/build.py                 # build (or reuse) and print the binary
    python tests/realserver/build.py --if-toolchain  # skip with one line when cmake/g++ are missing
    python tests/realserver/build.py --where         # print where the binary would be; no build
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

SDIST = "llama-cpp-python"
SDIST_VERSION = "0.3.36"
BUILD_NUMBER = 11312
COMMIT = "0c1e57098"
CMAKE_FLAGS = [
    f"-DLLAMA_BUILD_NUMBER={BUILD_NUMBER}",
    f"-DLLAMA_BUILD_COMMIT={COMMIT}",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    # ON only so that the test-llama-archs target exists; only the targets below are built
    "-DLLAMA_BUILD_TESTS=ON",
    "-DGGML_NATIVE=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
]
TARGETS = ["llama-server"]
# random-weight models of real architectures; optional (a failure here does not fail the build)
EXTRA_TARGETS = ["test-llama-archs"]
JOBS = "2"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "llamadiag" / "llama-server" / COMMIT


def build_key() -> str:
    blob = json.dumps([SDIST, SDIST_VERSION, COMMIT, CMAKE_FLAGS, TARGETS], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def build_dir() -> Path:
    return cache_root() / f"{SDIST_VERSION}-{build_key()}"


def server_path() -> Path:
    return build_dir() / "build" / "bin" / "llama-server"


def source_dir() -> Path:
    return build_dir() / "src"


def archs_path() -> Path:
    return build_dir() / "build" / "bin" / "test-llama-archs"


def toolchain_missing() -> list[str]:
    return [t for t in ("cmake", "g++") if shutil.which(t) is None]


def _has_numpy() -> bool:
    import importlib.util

    if importlib.util.find_spec("numpy"):
        return True
    py = shutil.which("python3")
    return bool(py) and subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode == 0


def live_missing() -> str | None:
    """Why the live tests cannot run here (one line), or None when they can."""
    if not server_path().exists():
        missing = toolchain_missing()
        if missing:
            return f"real llama-server tests skipped: {', '.join(missing)} missing (committed corpus still runs)"
        return (f"real llama-server tests skipped: no binary at {server_path()}; "
                "run python tests/realserver/build.py (committed corpus still runs)")
    if not _has_numpy():
        return "real llama-server tests skipped: numpy (for the tiny models) missing (committed corpus still runs)"
    return None


def log(msg: str) -> None:
    print(f"realserver-build: {msg}", file=sys.stderr, flush=True)


def fetch_source(dest: Path) -> None:
    """pip download the sdist and unpack its vendor/llama.cpp into dest."""
    with tempfile.TemporaryDirectory() as tmp:
        log(f"downloading {SDIST}=={SDIST_VERSION} (sdist, ~77 MB)")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             "-d", tmp, f"{SDIST}=={SDIST_VERSION}"],
            check=True,
        )
        archives = list(Path(tmp).glob("*.tar.gz"))
        if len(archives) != 1:
            raise SystemExit(f"expected one sdist archive, found {archives}")
        with tarfile.open(archives[0]) as tf:
            members = [m for m in tf.getmembers() if "/vendor/llama.cpp/" in m.name + "/"]
            try:
                tf.extractall(tmp, members=members, filter="data")
            except TypeError:  # Python < 3.11.4 has no extraction filters
                tf.extractall(tmp, members=members)
        vend = next(Path(tmp).glob("*/vendor/llama.cpp"))
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(vend), str(dest))


def run_build(force: bool = False) -> Path:
    exe = server_path()
    if exe.exists() and not force:
        return exe
    bdir = build_dir()
    bdir.mkdir(parents=True, exist_ok=True)
    src = source_dir()
    if not (src / "CMakeLists.txt").exists():
        fetch_source(src)
    t0 = time.monotonic()
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []
    subprocess.run(["cmake", "-S", str(src), "-B", str(bdir / "build"), *gen, *CMAKE_FLAGS],
                   check=True, stdout=subprocess.DEVNULL)
    t1 = time.monotonic()
    subprocess.run([*nice, "cmake", "--build", str(bdir / "build"), "-j", JOBS, "--target", *TARGETS],
                   check=True)
    t2 = time.monotonic()
    extra_ok = {}
    for tgt in EXTRA_TARGETS:
        r = subprocess.run([*nice, "cmake", "--build", str(bdir / "build"), "-j", JOBS, "--target", tgt])
        extra_ok[tgt] = r.returncode == 0
    t3 = time.monotonic()
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60)
    info = {
        "sdist": f"{SDIST}=={SDIST_VERSION}",
        "commit": COMMIT,
        "build_number": BUILD_NUMBER,
        "cmake_flags": CMAKE_FLAGS,
        "targets": TARGETS,
        "extra_targets": extra_ok,
        "configure_s": round(t1 - t0, 1),
        "build_server_s": round(t2 - t1, 1),
        "build_extra_s": round(t3 - t2, 1),
        "nproc": os.cpu_count(),
        "jobs": JOBS,
        "version": (version.stdout + version.stderr).strip().splitlines()[-2:],
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (bdir / "build-info.json").write_text(json.dumps(info, indent=2) + "\n")
    log(f"built in {info['configure_s'] + info['build_server_s']:.0f} s (+{info['build_extra_s']:.0f} s extras)")
    return exe


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--if-toolchain", action="store_true", help="skip (exit 0, one line) without cmake/g++")
    ap.add_argument("--where", action="store_true", help="print the binary's path; build nothing")
    ap.add_argument("--force", action="store_true", help="rebuild even if cached")
    args = ap.parse_args()
    if args.where:
        print(server_path())
        return 0 if server_path().exists() else 1
    if server_path().exists() and not args.force:
        print(server_path())
        return 0
    missing = toolchain_missing()
    if missing:
        msg = f"real llama-server not built: {', '.join(missing)} missing; live tests will be skipped"
        if args.if_toolchain:
            print(f"realserver-build: {msg}")
            return 0
        log(msg)
        return 1
    try:
        exe = run_build(force=args.force)
    except (subprocess.CalledProcessError, OSError) as e:
        if args.if_toolchain:
            print(f"realserver-build: build failed ({e}); live tests will be skipped")
            return 0
        raise
    print(exe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
