"""The envelope peels every wrapper we know, in every era, and joins continuations."""

from __future__ import annotations

import pytest

from llamadiag.engine.envelope import EnvelopeParser
from llamadiag.lines import strip_controls


@pytest.fixture(scope="module")
def parser(knowledge) -> EnvelopeParser:
    return EnvelopeParser(knowledge.envelope)


CASES = [
    # (physical line, expected text, level, tag, wrappers, instance)
    ("srv  update_slots: all slots are idle", "srv  update_slots: all slots are idle", None, "srv", (), None),
    (
        "0.01.226.338 W srv  llama_server: CORS is set to allow all origins ('*') and no API key is set",
        "srv  llama_server: CORS is set to allow all origins ('*') and no API key is set",
        "W",
        "srv",
        (),
        None,
    ),
    (
        "E srv        decode: failed to process speculative batch",
        "srv        decode: failed to process speculative batch",
        "E",
        "srv",
        (),
        None,
    ),
    (
        "\x1b[34m0.00.073.302\x1b[0m \x1b[32mI \x1b[0msrv    load_model: loading model '/m/x.gguf'",
        "srv    load_model: loading model '/m/x.gguf'",
        "I",
        "srv",
        (),
        None,
    ),
    ("\x1b[0m0.00.100.000 \x1b[31mE init: bad", "init: bad", "E", None, (), None),
    (
        "Nov 28 10:11:12 strix llama-server[4242]: 0.41.772.010 E srv        decode: failed",
        "srv        decode: failed",
        "E",
        "srv",
        ("journald",),
        None,
    ),
    (
        "5月 07 06:59:38 master llama-server[176672]: srv  update_slots: all slots are idle",
        "srv  update_slots: all slots are idle",
        None,
        "srv",
        ("journald",),
        None,
    ),
    (
        "2026-08-28T18:11:25+08:00 ai llama-server[55646]: 50.44.267.087 I slot      release: id  0 | task 5 | stop",
        "slot      release: id  0 | task 5 | stop",
        "I",
        "slot",
        ("journald",),
        None,
    ),
    (
        '{"log":"srv    load_model: loading model \'/m/x.gguf\'\\n","stream":"stderr","time":"2026-05-23T18:06:10Z"}',
        "srv    load_model: loading model '/m/x.gguf'",
        None,
        "srv",
        ("docker-json",),
        None,
    ),
    (
        "2026-08-14T12:34:56.123456789Z 0.00.512.345 I srv  llama_server: model loaded",
        "srv  llama_server: model loaded",
        "I",
        "srv",
        ("rfc3339",),
        None,
    ),
    (
        "2019-04-30T02:12:41.8443515Z stderr F srv  update_slots: all slots are idle",
        "srv  update_slots: all slots are idle",
        None,
        "srv",
        ("cri",),
        None,
    ),
    ("[pod/llama-0/server] main: model loaded", "main: model loaded", None, None, ("kubectl-prefix",), "llama-0"),
    (
        "llama-1  | srv  update_slots: all slots are idle",
        "srv  update_slots: all slots are idle",
        None,
        "srv",
        ("compose",),
        "llama-1",
    ),
    (
        "Nov 28 10:11:12 host dockerd[77]: llama-1  | 0.00.100.000 W srv  x: y",
        "srv  x: y",
        "W",
        "srv",
        ("journald", "compose"),
        "llama-1",
    ),
    (
        "[49457] 0.00.512.345 I srv    load_model: loading model 'q.gguf'",
        "srv    load_model: loading model 'q.gguf'",
        "I",
        "srv",
        ("router",),
        "49457",
    ),
    (
        "2026-05-23 18:06:10.321 | 0.01.193.760 I srv  llama_server: model loaded",
        "srv  llama_server: model loaded",
        "I",
        "srv",
        ("gui-time",),
        None,
    ),
    (
        '[INFO] Request 10.0.1.135 "POST /upstream/qwen/infill HTTP/1.1" 200 15667 "axios/1.8.4" 190.3ms',
        'Request 10.0.1.135 "POST /upstream/qwen/infill HTTP/1.1" 200 15667 "axios/1.8.4" 190.3ms',
        "I",
        "llama-swap",
        ("llama-swap",),
        None,
    ),
    (
        "> E srv        decode: failed to process speculative batch",
        "srv        decode: failed to process speculative batch",
        "E",
        "srv",
        ("markdown-quote",),
        None,
    ),
    (
        "llama-server.exe : error: invalid argument: --draft-max",
        "error: invalid argument: --draft-max",
        "E",
        None,
        ("powershell-error",),
        None,
    ),
    (
        "4:23PM DBG GRPC(qwen-127.0.0.1:40121): stderr llama_model_load: error loading model",
        "llama_model_load: error loading model",
        None,
        None,
        ("localai",),
        "qwen-127.0.0.1:40121",
    ),
    (
        '{"tid":"1404","timestamp":1717000000,"level":"INFO","function":"main","line":2940,"msg":"build info","build":3000}',
        '{"tid":"1404","timestamp":1717000000,"level":"INFO","function":"main","line":2940,"msg":"build info","build":3000}',
        None,
        None,
        (),
        None,
    ),
    (
        "slot launch_slot_: id  0 | task 7 | processing task, is_child = 0",
        "slot launch_slot_: id  0 | task 7 | processing task, is_child = 0",
        None,
        "slot",
        (),
        None,
    ),
    (
        "D:\\a\\llama.cpp\\llama.cpp\\ggml\\src\\ggml-cuda\\ggml-cuda.cu:88: CUDA error",
        "D:\\a\\llama.cpp\\llama.cpp\\ggml\\src\\ggml-cuda\\ggml-cuda.cu:88: CUDA error",
        "E",
        None,
        (),
        None,
    ),
]


@pytest.mark.parametrize("physical,text,level,tag,wrappers,instance", CASES)
def test_peel(parser, physical, text, level, tag, wrappers, instance) -> None:
    line, cont = parser.peel(7, physical)
    assert line is not None and not cont
    assert (line.text, line.level, line.tag, line.wrappers, line.instance) == (text, level, tag, wrappers, instance)


def test_slot_fields_and_time(parser) -> None:
    line, _ = parser.peel(1, "807.46.387.263 I slot launch_slot_: id  3 | task 1042 | processing task")
    assert (line.slot_id, line.task_id) == (3, 1042)
    assert line.time == pytest.approx(807 * 60 + 46.387263)


@pytest.mark.parametrize(
    "physical",
    [
        "```",
        "```text",
        "At line:1 char:1",
        "    + CategoryInfo          : NotSpecified: (x:String) [], RemoteException",
    ],
)
def test_dropped(parser, physical) -> None:
    assert parser.peel(1, physical) == (None, False)


def test_continuations_join_into_one_entry(knowledge) -> None:
    from llamadiag.engine.analyze import Analyzer

    log = [
        "0.41.772.010 E init: the tokens of sequence 3 in the input batch have inconsistent sequence positions:",
        " - the last position stored in the memory module of the context (i.e. the KV cache) for sequence 3 is X = 17",
        " - the tokens for sequence 3 in the input batch have a starting position of Y = 942",
        " it is required that the sequence positions remain consecutive: Y = X + 1",
        "0.41.772.031 E srv        decode: failed to process speculative batch",
    ]
    analyzer = Analyzer(knowledge, every_line=True)
    seen = []
    analyzer.on_entry = lambda line, targets: seen.append(line)
    analyzer.feed(log)
    analyzer.flush()
    assert [(ln.number, ln.end) for ln in seen] == [(1, 4), (5, 5)]
    assert seen[0].text.count("\n") == 3 and seen[0].level == "E"


def test_strip_controls_removes_terminal_sequences() -> None:
    hostile = "a\x1b]0;owned\x07b\x1b[2Jc\x1b[31md\x07e\x9b31mf\x00g"
    assert strip_controls(hostile) == "abcdefg"
