#!/usr/bin/env python3
"""Tiny random-weight GGUF models for the real llama-server, made on this machine.

Written with the `gguf` package (the copy vendored in the llama.cpp source of build.py, else
PyPI's `gguf`); the tokenizer keys are copied from the vendored vocab-only files
`models/ggml-vocab-*.gguf`. Nothing here is committed: models go to
``<build dir>/models/`` (or --out). Needs numpy.

Recipes (the names are what scenarios.py and provenance.yaml refer to):
  llama-spm     llama, llama-spm vocab (32000), n_embd 128, 2 heads (head size 64), 2 blocks
  qwen3-gpt2    qwen3 (q/k norms), gpt-2 vocab (50257), n_embd 128, 2 heads, 2 blocks
  draft-gpt2    llama, gpt-2 vocab: a draft whose vocab differs from llama-spm's
  bert-bge      bert (mean pooling), bert-bge vocab: an embedding model
  broken-truncated   llama-spm cut at 60 % of its size
  broken-lfs         a git-LFS pointer file in place of the model
  broken-magic       llama-spm with its first four bytes replaced by "GGMF"
  broken-arch        llama-spm with general.architecture = "llama9000"
  split-missing      llama-spm as 2 split shards; only shard 1 of 2 is on disk
  pre-unknown        draft-gpt2 with tokenizer.ggml.pre = "llamadiag-unknown"
  pre-missing        draft-gpt2 without tokenizer.ggml.pre (a BPE vocab)
  template-broken    llama-spm whose chat template has an unclosed {% for %}
  glm4moe-mtp        glm4moe (GLM-4.5 family), llama-spm vocab, n_embd 128, 2 heads (64), 2 trunk blocks
                     (dense + MoE, 4 experts) + 1 MTP (nextn) block
  step35-mtp         step35 (Step-3.x-Flash family), llama-spm vocab, n_embd 128, 2 heads (64), 2 dense
                     trunk blocks (the first sliding-window) + 1 MTP (nextn) block, no M-RoPE
  mmproj-mlp-256     the same mmproj projecting to 256 dimensions (text models here have 128)
  mmproj-mlp         LLaVA-style mmproj (projector mlp), 32x32 images, 16x16 patches -> 4 tokens, 1 block
  lora-other-base    a LoRA adapter (attn_q of 2 blocks, rank 8) made for a llama base of n_embd 256
  lora-other-arch    the same for a qwen3 base of n_embd 128 (general.architecture qwen3)
  empty-gguf         empty.gguf, a file of 0 bytes (a download that never wrote anything)
  html-page          html-page.gguf, an HTML page saved under a .gguf name (a "blob" page, not the file)
  safetensors-model  model.safetensors, a small Hugging Face safetensors checkpoint (not converted)
  peft-lora          adapter_model.safetensors, a PEFT LoRA adapter in safetensors (not converted)
  template-file-broken  broken-template.jinja, a chat template file with an unclosed {% for %}
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build  # noqa: E402

LLAMA_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\nYou may call functions. Tools:\n<tools>\n"
    "{%- for tool in tools %}{{ tool | tojson }}\n{%- endfor %}</tools>\n"
    'Answer with <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>\n{%- endif %}'
    "{%- for message in messages %}<|im_start|>{{ message.role }}\n"
    "{%- if message.content is string %}{{ message.content }}{%- endif %}"
    "{%- if message.tool_calls %}{%- for tc in message.tool_calls %}<tool_call>\n"
    '{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}\n'
    "</tool_call>{%- endfor %}{%- endif %}<|im_end|>\n{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)

RECIPES = {
    "llama-spm": dict(arch="llama", vocab="llama-spm", n_embd=128, n_head=2, n_ff=256, n_layer=2, ctx=4096),
    "qwen3-gpt2": dict(arch="qwen3", vocab="gpt-2", n_embd=128, n_head=2, n_ff=256, n_layer=2, ctx=4096),
    "draft-gpt2": dict(arch="llama", vocab="gpt-2", n_embd=128, n_head=2, n_ff=256, n_layer=1, ctx=4096),
    "bert-bge": dict(arch="bert", vocab="bert-bge", n_embd=128, n_head=2, n_ff=256, n_layer=2, ctx=512),
}
BROKEN = [
    "broken-truncated", "broken-lfs", "broken-magic", "broken-arch", "split-missing",
    "pre-unknown", "pre-missing", "template-broken",
]
# a Jinja template that does not parse (an unclosed for block)
BROKEN_TEMPLATE = "{%- for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"


def _gguf():
    src = build.source_dir() / "gguf-py"
    if src.is_dir():
        sys.path.insert(0, str(src))
    import gguf

    return gguf


def models_dir() -> Path:
    return build.build_dir() / "models"


def _copy_tokenizer(gguf, w, vocab_name: str, pre: str | None = None) -> None:
    path = build.source_dir() / "models" / f"ggml-vocab-{vocab_name}.gguf"
    r = gguf.GGUFReader(path)
    for name, field in r.fields.items():
        if not name.startswith("tokenizer."):
            continue
        if name == "tokenizer.chat_template":
            continue
        if name == "tokenizer.ggml.pre" and pre is not None:
            if pre:
                w.add_string(name, pre)
            continue
        vtype = field.types[0]
        if vtype == gguf.GGUFValueType.ARRAY:
            w.add_key_value(name, field.contents(), vtype, sub_type=field.types[-1])
        else:
            w.add_key_value(name, field.contents(), vtype)


def _vocab_size(gguf, vocab_name: str) -> int:
    r = gguf.GGUFReader(build.source_dir() / "models" / f"ggml-vocab-{vocab_name}.gguf")
    return len(r.fields["tokenizer.ggml.tokens"].data)


def write_model(
    name: str,
    out: Path,
    *,
    arch_override: str | None = None,
    split: int = 1,
    pre: str | None = None,
    template: str | None = None,
) -> list[Path]:
    import numpy as np

    gguf = _gguf()
    rc = RECIPES[name]
    arch = rc["arch"]
    n_embd, n_head, n_ff, n_layer, ctx = rc["n_embd"], rc["n_head"], rc["n_ff"], rc["n_layer"], rc["ctx"]
    hd = n_embd // n_head
    n_vocab = _vocab_size(gguf, rc["vocab"])
    rng = np.random.default_rng(1234)

    def rnd(*shape, dtype=np.float16):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(dtype)

    def ones(n):
        return np.ones((n,), dtype=np.float32)

    tensors: list[tuple[str, object]] = [("token_embd.weight", rnd(n_vocab, n_embd))]
    if arch == "bert":
        tensors += [
            ("token_types.weight", rnd(2, n_embd, dtype=np.float32)),
            ("position_embd.weight", rnd(ctx, n_embd, dtype=np.float32)),
            ("token_embd_norm.weight", ones(n_embd)),
            ("token_embd_norm.bias", np.zeros((n_embd,), np.float32)),
        ]
    else:
        tensors += [("output_norm.weight", ones(n_embd)), ("output.weight", rnd(n_vocab, n_embd))]
    for i in range(n_layer):
        b = f"blk.{i}."
        tensors += [
            (b + "attn_q.weight", rnd(n_embd, n_embd)),
            (b + "attn_k.weight", rnd(n_embd, n_embd)),
            (b + "attn_v.weight", rnd(n_embd, n_embd)),
            (b + "attn_output.weight", rnd(n_embd, n_embd)),
            (b + "ffn_up.weight", rnd(n_ff, n_embd)),
            (b + "ffn_down.weight", rnd(n_embd, n_ff)),
        ]
        if arch == "bert":
            zeros = np.zeros((n_embd,), np.float32)
            tensors += [
                (b + "attn_output_norm.weight", ones(n_embd)),
                (b + "attn_output_norm.bias", zeros),
                (b + "layer_output_norm.weight", ones(n_embd)),
                (b + "layer_output_norm.bias", zeros),
            ]
        else:
            tensors += [
                (b + "attn_norm.weight", ones(n_embd)),
                (b + "ffn_norm.weight", ones(n_embd)),
                (b + "ffn_gate.weight", rnd(n_ff, n_embd)),
            ]
        if arch == "qwen3":
            tensors += [(b + "attn_q_norm.weight", ones(hd)), (b + "attn_k_norm.weight", ones(hd))]

    out.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    per = -(-len(tensors) // split)
    for part in range(split):
        path = out if split == 1 else out.with_name(f"{out.stem}-{part + 1:05d}-of-{split:05d}.gguf")
        w = gguf.GGUFWriter(path, arch_override or arch)
        if part == 0:
            w.add_name(f"llamadiag tiny {name}")
            w.add_context_length(ctx)
            w.add_embedding_length(n_embd)
            w.add_block_count(n_layer)
            w.add_feed_forward_length(n_ff)
            w.add_head_count(n_head)
            w.add_head_count_kv(n_head)
            if arch == "bert":
                w.add_layer_norm_eps(1e-12)
                w.add_causal_attention(False)
                w.add_pooling_type(gguf.PoolingType.MEAN)
                w.add_token_type_count(2)
            else:
                w.add_layer_norm_rms_eps(1e-5)
                w.add_rope_freq_base(10000.0)
                w.add_rope_dimension_count(hd)
            w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
            _copy_tokenizer(gguf, w, rc["vocab"], pre)
            if arch != "bert":
                w.add_chat_template(template or LLAMA_TEMPLATE)
        if split > 1:
            w.add_uint16("split.no", part)
            w.add_uint16("split.count", split)
            w.add_int32("split.tensors.count", len(tensors))
        for tname, data in tensors[part * per : (part + 1) * per]:
            w.add_tensor(tname, data)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        paths.append(path)
    return paths


def write_glm4moe_mtp(out: Path) -> Path:
    """glm4moe (GLM-4.5 family) with one MTP (nextn) block: 2 trunk blocks (dense, MoE) + blk.2 nextn."""
    import numpy as np

    gguf = _gguf()
    n_embd, n_head, n_ff, n_ff_exp, n_expert, n_trunk, ctx = 128, 2, 256, 64, 4, 2, 4096
    hd = n_embd // n_head
    n_vocab = _vocab_size(gguf, "llama-spm")
    rng = np.random.default_rng(4321)

    def rnd(*shape, dtype=np.float16):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(dtype)

    def ones(n):
        return np.ones((n,), dtype=np.float32)

    t = [("token_embd.weight", rnd(n_vocab, n_embd)), ("output_norm.weight", ones(n_embd)),
         ("output.weight", rnd(n_vocab, n_embd))]
    for i in range(n_trunk + 1):
        b = f"blk.{i}."
        t += [(b + "attn_norm.weight", ones(n_embd)), (b + "attn_q.weight", rnd(n_embd, n_embd)),
              (b + "attn_k.weight", rnd(n_embd, n_embd)), (b + "attn_v.weight", rnd(n_embd, n_embd)),
              (b + "attn_output.weight", rnd(n_embd, n_embd)), (b + "post_attention_norm.weight", ones(n_embd))]
        if i == 0:
            t += [(b + "ffn_gate.weight", rnd(n_ff, n_embd)), (b + "ffn_up.weight", rnd(n_ff, n_embd)),
                  (b + "ffn_down.weight", rnd(n_embd, n_ff))]
        else:
            t += [(b + "ffn_gate_inp.weight", rnd(n_expert, n_embd, dtype=np.float32)),
                  (b + "exp_probs_b.bias", np.zeros((n_expert,), np.float32)),
                  (b + "ffn_gate_exps.weight", rnd(n_expert, n_ff_exp, n_embd)),
                  (b + "ffn_up_exps.weight", rnd(n_expert, n_ff_exp, n_embd)),
                  (b + "ffn_down_exps.weight", rnd(n_expert, n_embd, n_ff_exp))]
        if i == n_trunk:
            t += [(b + "nextn.eh_proj.weight", rnd(n_embd, 2 * n_embd)), (b + "nextn.enorm.weight", ones(n_embd)),
                  (b + "nextn.hnorm.weight", ones(n_embd)), (b + "nextn.shared_head_norm.weight", ones(n_embd))]
    w = gguf.GGUFWriter(out, "glm4moe")
    w.add_name("llamadiag tiny glm4moe-mtp")
    w.add_context_length(ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_trunk + 1)
    w.add_feed_forward_length(n_ff)
    w.add_expert_feed_forward_length(n_ff_exp)
    w.add_expert_count(n_expert)
    w.add_expert_used_count(2)
    w.add_expert_shared_count(0)
    w.add_leading_dense_block_count(1)
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    w.add_uint32("glm4moe.nextn_predict_layers", 1)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(hd)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    _copy_tokenizer(gguf, w, "llama-spm")
    w.add_chat_template(LLAMA_TEMPLATE)
    for name, data in t:
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def write_step35_mtp(out: Path) -> Path:
    """step35 (Step-3.x-Flash family) with one MTP block: 2 dense trunk blocks + blk.2 (dense + nextn)."""
    import numpy as np

    gguf = _gguf()
    n_embd, n_head, n_ff, n_trunk, ctx = 128, 2, 256, 2, 4096
    hd = n_embd // n_head
    n_vocab = _vocab_size(gguf, "llama-spm")
    rng = np.random.default_rng(5678)

    def rnd(*shape, dtype=np.float16):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(dtype)

    def ones(n):
        return np.ones((n,), dtype=np.float32)

    t = [("token_embd.weight", rnd(n_vocab, n_embd)), ("output_norm.weight", ones(n_embd)),
         ("output.weight", rnd(n_vocab, n_embd))]
    for i in range(n_trunk + 1):
        b = f"blk.{i}."
        t += [(b + "attn_norm.weight", ones(n_embd)), (b + "attn_q.weight", rnd(n_embd, n_embd)),
              (b + "attn_k.weight", rnd(n_embd, n_embd)), (b + "attn_v.weight", rnd(n_embd, n_embd)),
              (b + "attn_output.weight", rnd(n_embd, n_embd)), (b + "ffn_norm.weight", ones(n_embd)),
              (b + "ffn_gate.weight", rnd(n_ff, n_embd)), (b + "ffn_up.weight", rnd(n_ff, n_embd)),
              (b + "ffn_down.weight", rnd(n_embd, n_ff))]
        if i == n_trunk:
            t += [(b + "nextn.eh_proj.weight", rnd(n_embd, 2 * n_embd)), (b + "nextn.enorm.weight", ones(n_embd)),
                  (b + "nextn.hnorm.weight", ones(n_embd)), (b + "nextn.shared_head_norm.weight", ones(n_embd))]
    w = gguf.GGUFWriter(out, "step35")
    w.add_name("llamadiag tiny step35-mtp")
    w.add_context_length(ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_trunk + 1)
    w.add_feed_forward_length(n_ff)
    w.add_expert_feed_forward_length(0)
    w.add_uint32("step35.nextn_predict_layers", 1)
    w.add_uint32("step35.attention.sliding_window", 512)
    w.add_array("step35.attention.sliding_window_pattern", [1] + [0] * n_trunk)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_rope_dimension_count(hd)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    _copy_tokenizer(gguf, w, "llama-spm")
    w.add_chat_template(LLAMA_TEMPLATE)
    for name, data in t:
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def write_mmproj_mlp(out: Path, n_embd_text: int = 128) -> Path:
    """A LLaVA-style mmproj (projector "mlp"): 32x32 images, 16x16 patches (4 image tokens), 1 ViT block."""
    import numpy as np

    gguf = _gguf()
    n_embd, n_ff, patch, image = 64, 128, 16, 32
    n_pos = (image // patch) ** 2
    rng = np.random.default_rng(99)

    def rnd(*shape, dtype=np.float16):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(dtype)

    def ones(n):
        return np.ones((n,), dtype=np.float32)

    def zeros(n):
        return np.zeros((n,), dtype=np.float32)

    t = [("v.patch_embd.weight", rnd(n_embd, 3, patch, patch)), ("v.patch_embd.bias", zeros(n_embd)),
         ("v.position_embd.weight", rnd(n_pos, n_embd, dtype=np.float32))]
    b = "v.blk.0."
    t += [(b + "attn_q.weight", rnd(n_embd, n_embd)), (b + "attn_k.weight", rnd(n_embd, n_embd)),
          (b + "attn_v.weight", rnd(n_embd, n_embd)), (b + "attn_out.weight", rnd(n_embd, n_embd)),
          (b + "ln1.weight", ones(n_embd)), (b + "ln1.bias", zeros(n_embd)),
          (b + "ln2.weight", ones(n_embd)), (b + "ln2.bias", zeros(n_embd)),
          (b + "ffn_up.weight", rnd(n_ff, n_embd)), (b + "ffn_down.weight", rnd(n_embd, n_ff))]
    t += [("mm.0.weight", rnd(n_embd_text, n_embd)), ("mm.0.bias", zeros(n_embd_text)),
          ("mm.2.weight", rnd(n_embd_text, n_embd_text)), ("mm.2.bias", zeros(n_embd_text))]
    w = gguf.GGUFWriter(out, "clip")
    w.add_name("llamadiag tiny mmproj-mlp")
    w.add_string("clip.projector_type", "mlp")
    w.add_bool("clip.has_vision_encoder", True)
    w.add_bool("clip.use_gelu", True)
    w.add_uint32("clip.vision.image_size", image)
    w.add_uint32("clip.vision.patch_size", patch)
    w.add_uint32("clip.vision.embedding_length", n_embd)
    w.add_uint32("clip.vision.feed_forward_length", n_ff)
    w.add_uint32("clip.vision.projection_dim", n_embd_text)
    w.add_uint32("clip.vision.block_count", 1)
    w.add_uint32("clip.vision.attention.head_count", 1)
    w.add_float32("clip.vision.attention.layer_norm_epsilon", 1e-6)
    w.add_array("clip.vision.image_mean", [0.5, 0.5, 0.5])
    w.add_array("clip.vision.image_std", [0.5, 0.5, 0.5])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for name, data in t:
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def write_lora(out: Path, arch: str = "llama", n_embd: int = 256, rank: int = 8) -> Path:
    """A LoRA adapter GGUF (general.type adapter, adapter.type lora) for attn_q of 2 blocks of a base
    model with this arch and n_embd: 256 is another base than llama-spm (128), a foreign arch is refused."""
    import numpy as np

    gguf = _gguf()
    rng = np.random.default_rng(99)
    w = gguf.GGUFWriter(str(out), arch)
    w.add_string("general.type", "adapter")
    w.add_string("adapter.type", "lora")
    w.add_float32("adapter.lora.alpha", float(rank))
    for i in range(2):
        # numpy (rows, cols) is ggml ne [cols, rows]: lora_a ne [n_in, r], lora_b ne [r, n_out]
        w.add_tensor(f"blk.{i}.attn_q.weight.lora_a", (rng.standard_normal((rank, n_embd)) * 0.01).astype(np.float32))
        w.add_tensor(f"blk.{i}.attn_q.weight.lora_b", np.zeros((n_embd, rank), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def make_all(out_dir: Path | None = None) -> dict[str, Path]:
    """Write every recipe (skipping ones already there) and return name -> path."""
    d = out_dir or models_dir()
    d.mkdir(parents=True, exist_ok=True)
    got: dict[str, Path] = {}
    for name in RECIPES:
        p = d / f"{name}.gguf"
        if not p.exists():
            write_model(name, p)
        got[name] = p
    good = got["llama-spm"].read_bytes()
    p = d / "broken-truncated.gguf"
    if not p.exists():
        p.write_bytes(good[: int(len(good) * 0.6)])
    got["broken-truncated"] = p
    p = d / "broken-lfs.gguf"
    if not p.exists():
        p.write_text(
            "version https://git-lfs.github.com/spec/v1\n"
            "oid sha256:4d2f3b1c0a9e8f7d6c5b4a3928171605f4e3d2c1b0a99887766554433221100f\n"
            f"size {len(good)}\n"
        )
    got["broken-lfs"] = p
    p = d / "broken-magic.gguf"
    if not p.exists():
        p.write_bytes(b"GGMF" + good[4:])
    got["broken-magic"] = p
    p = d / "broken-arch.gguf"
    if not p.exists():
        write_model("llama-spm", p, arch_override="llama9000")
    got["broken-arch"] = p
    first = d / "split-missing-00001-of-00002.gguf"
    if not first.exists():
        parts = write_model("llama-spm", d / "split-missing.gguf", split=2)
        for extra in parts[1:]:
            extra.unlink()
    got["split-missing"] = first
    for name, kw in (
        ("pre-unknown", dict(pre="llamadiag-unknown")),
        ("pre-missing", dict(pre="")),
    ):
        p = d / f"{name}.gguf"
        if not p.exists():
            write_model("draft-gpt2", p, **kw)
        got[name] = p
    p = d / "template-broken.gguf"
    if not p.exists():
        write_model("llama-spm", p, template=BROKEN_TEMPLATE)
    got["template-broken"] = p
    for name, fn in (("glm4moe-mtp", write_glm4moe_mtp), ("step35-mtp", write_step35_mtp),
                     ("mmproj-mlp", write_mmproj_mlp), ("mmproj-mlp-256", lambda q: write_mmproj_mlp(q, 256)),
                     ("lora-other-base", write_lora), ("lora-other-arch", lambda q: write_lora(q, "qwen3", 128))):
        p = d / f"{name}.gguf"
        if not p.exists():
            fn(p)
        got[name] = p
    for name, fname, data in _NOT_GGUF:
        p = d / fname
        if not p.exists():
            p.write_bytes(data)
        got[name] = p
    return got


def _safetensors(tensors: dict[str, list[int]]) -> bytes:
    """A valid safetensors file (8-byte header length, JSON header, F16 zeros) with these tensors."""
    import json
    import math

    header: dict = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in tensors.items():
        size = 2 * math.prod(shape)
        header[name] = {"dtype": "F16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    head = json.dumps(header).encode()
    head += b" " * (-len(head) % 8)
    return len(head).to_bytes(8, "little") + head + bytes(offset)


_HTML_PAGE = (
    "<!DOCTYPE html>\n<html class=\"\" lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n"
    "<title>model.gguf - a model repository page</title>\n</head>\n<body>\n"
    "<p>This is the web page that shows a file, saved in place of the file itself.</p>\n"
    "</body>\n</html>\n"
) * 40

_NOT_GGUF = [
    ("empty-gguf", "empty.gguf", b""),
    ("html-page", "html-page.gguf", _HTML_PAGE.encode()),
    ("safetensors-model", "model.safetensors", _safetensors({
        "model.embed_tokens.weight": [256, 64], "model.layers.0.self_attn.q_proj.weight": [64, 64],
        "lm_head.weight": [256, 64]})),
    ("peft-lora", "adapter_model.safetensors", _safetensors({
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": [8, 128],
        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": [128, 8]})),
    ("template-file-broken", "broken-template.jinja", BROKEN_TEMPLATE.encode()),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=None, help="folder for the models (default: beside the build)")
    args = ap.parse_args()
    for name, path in make_all(args.out).items():
        print(f"{name}\t{path}\t{os.path.getsize(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
