#!/usr/bin/env bash
# The CUDA stage of the real-server corpus, in one command on a GPU machine without network.
#
# Expects beside this script's folder (JOB = the folder above it, e.g. .cuda-job/):
#   JOB/src.tar.gz       the llama.cpp tree of build.py's sdist (commit 0c1e57098, b11312), trimmed
#                        to what a CUDA llama-server build needs (see docs/real-server.md)
#   JOB/models/          llama-spm.gguf from tinymodels.py
#   JOB/rs/              capture.py build.py scenarios.py tinymodels.py cuda_scenarios.py capture_cuda.py
# Builds llama-server with -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 (Ninja, all cores), runs
# the CUDA scenarios, and packs logs, provenance, build log and environment into
# $OUT/cuda-logs.tar.gz. BUDGET (seconds, default 560) bounds the whole job.
set -u
JOB=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/cuda-out}
BUDGET=${BUDGET:-560}
B=/tmp/llb
SRC=/tmp/llsrc
LOGS=/tmp/cuda-logs
START=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - START))); }
mkdir -p "$OUT" "$LOGS" "$SRC"
finish() { tar -czf "$OUT/cuda-logs.tar.gz" -C "$LOGS" .; ls -la "$LOGS"; }
trap finish EXIT

{
  date -u
  nvidia-smi
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  nvcc --version
  gcc --version | head -1
  cmake --version | head -1
  echo "ninja $(ninja --version)"
  echo "nproc $(nproc)"
  free -g
  python3 -c 'import yaml, numpy; print("python ok")'
  echo "overcommit_memory $(cat /proc/sys/vm/overcommit_memory)"
} > "$LOGS/env.txt" 2>&1
cat "$LOGS/env.txt"

tar -xzf "$JOB/src.tar.gz" -C "$SRC"
FLAGS=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90
       -DLLAMA_BUILD_NUMBER=11312 -DLLAMA_BUILD_COMMIT=0c1e57098
       -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF
       -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=OFF -DCMAKE_BUILD_TYPE=Release)
t0=$(date +%s)
cmake -S "$SRC" -B "$B" -G Ninja "${FLAGS[@]}" > "$LOGS/build.log" 2>&1
t1=$(date +%s)
timeout $(( $(left) - 100 )) ninja -C "$B" -j "$(nproc)" llama-server >> "$LOGS/build.log" 2>&1
rc=$?
t2=$(date +%s)
echo "configure_s=$((t1 - t0)) build_s=$((t2 - t1)) rc=$rc" | tee -a "$LOGS/build.log"
if [ $rc -ne 0 ]; then tail -40 "$LOGS/build.log"; exit 1; fi
"$B/bin/llama-server" --version > "$LOGS/version.txt" 2>&1
cat "$LOGS/version.txt"

python3 - "$LOGS/info.json" "${FLAGS[*]}" "$((t2 - t1))" <<'EOF'
import json, subprocess, sys
q = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                   capture_output=True, text=True).stdout.strip().split(", ")
nv = [ln for ln in subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.splitlines()
      if "release" in ln]
json.dump({"gpu": f"{q[0]} ({q[1]})" if len(q) > 1 else q[0], "driver": q[2] if len(q) > 2 else None,
           "nvcc": nv[0].strip() if nv else None, "cmake_flags": sys.argv[2].split(),
           "build_s": int(sys.argv[3])}, open(sys.argv[1], "w"), indent=1)
EOF
cat "$LOGS/info.json"
timeout "$(left)" python3 "$JOB/rs/capture_cuda.py" --exe "$B/bin/llama-server" --models "$JOB/models" \
  --out "$LOGS" --info "$LOGS/info.json"
echo "job_s=$(( $(date +%s) - START ))"
