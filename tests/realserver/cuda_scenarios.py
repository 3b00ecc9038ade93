"""The CUDA scenarios: the same b11312 llama-server built with -DGGML_CUDA=ON for an H200.

Run on a GPU machine by cuda_job.sh (build) and capture_cuda.py (capture); not part of
scenarios.SCENARIOS, so the CPU capture and test_live.py never try them. Each entry is a Scenario
(see scenarios.py) and the environment variables set for that run (recorded in provenance.yaml
under `env`). The model is the tiny llama-spm recipe (2 blocks, n_embd 128, f16): its KV cache
takes 1 KiB per token, so -c 400000000 asks for ~381 GiB of KV cache, far over the H200's 141 GB.
"""

from __future__ import annotations

from scenarios import Req, Scenario, chat, completion

OOM_CTX = "400000000"

REQS = [
    Req("GET", "/health"),
    Req("GET", "/props"),
    Req("POST", "/v1/chat/completions", chat()),
    Req("POST", "/completion", completion()),
]

CUDA_SCENARIOS: list[tuple[Scenario, dict[str, str]]] = [
    (Scenario("cuda-healthy-ngl99", ["llama-spm"], ["-m", "llama-spm.gguf", "-c", "2048", "-ngl", "99"],
              "a healthy CUDA start with every layer offloaded (-ngl 99), default verbosity", REQS), {}),
    (Scenario("cuda-oom-ctx-fit-off", ["llama-spm"],
              ["-m", "llama-spm.gguf", "-c", OOM_CTX, "-ngl", "99", "--fit", "off"],
              "a KV cache of ~381 GiB on a 141 GB GPU with --fit off: cudaMalloc out of memory", ready=False), {}),
    (Scenario("cuda-oom-ctx-fit-on", ["llama-spm"],
              ["-m", "llama-spm.gguf", "-c", OOM_CTX, "-ngl", "99", "--fit", "on"],
              "the same with --fit on: the fit gives up (-ngl set by user), then the KV cache allocation fails",
              ready=False), {}),
    (Scenario("cuda-no-device-visible", ["llama-spm"], ["-m", "llama-spm.gguf", "-c", "2048", "-ngl", "99"],
              "CUDA_VISIBLE_DEVICES empty: the CUDA backend finds no device, the server runs on the CPU", REQS),
     {"CUDA_VISIBLE_DEVICES": ""}),
    (Scenario("cuda-healthy-ngl99-lv4", ["llama-spm"],
              ["-m", "llama-spm.gguf", "-c", "2048", "-ngl", "99", "-lv", "4"],
              "a healthy CUDA start at -lv 4 (build line, device list, fit trace, buffers)", REQS), {}),
    (Scenario("cuda-oom-ctx-fit-off-lv4", ["llama-spm"],
              ["-m", "llama-spm.gguf", "-c", OOM_CTX, "-ngl", "99", "--fit", "off", "-lv", "4"],
              "the --fit off out-of-memory at -lv 4", ready=False), {}),
    (Scenario("cuda-oom-ctx-fit-on-lv4", ["llama-spm"],
              ["-m", "llama-spm.gguf", "-c", OOM_CTX, "-ngl", "99", "--fit", "on", "-lv", "4"],
              "the --fit on out-of-memory at -lv 4 (the fitter's projection lines are trace level)", ready=False), {}),
    (Scenario("cuda-oom-ctx-fit-ot-lv4", ["llama-spm"],
              ["-m", "llama-spm.gguf", "-c", OOM_CTX, "-ot", "blk\\.=CUDA0", "--fit", "on", "-lv", "4"],
              "--fit on with a tensor override (-ot) and no -ngl: the fit aborts on the override, "
              "then the KV cache allocation fails", ready=False), {}),
    (Scenario("cuda-no-device-visible-lv4", ["llama-spm"],
              ["-m", "llama-spm.gguf", "-c", "2048", "-ngl", "99", "-lv", "4"],
              "the same at -lv 4", REQS), {"CUDA_VISIBLE_DEVICES": ""}),
    (Scenario("cuda-healthy-ngl0", ["llama-spm"], ["-m", "llama-spm.gguf", "-c", "2048", "-ngl", "0"],
              "CUDA build, no layer offloaded (-ngl 0): weights on the CPU, the GPU still used for compute",
              REQS), {}),
    (Scenario("cuda-device-invalid", ["llama-spm"], ["-m", "llama-spm.gguf", "-c", "2048", "-dev", "CUDA3"],
              "--device naming a GPU that does not exist (one GPU: CUDA0)", ready=False), {}),
]

BY_NAME = {s.name: (s, env) for s, env in CUDA_SCENARIOS}
