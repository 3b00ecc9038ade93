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


# -- pasted shapes (issue 15) --------------------------------------------------------------

PASTED = [
    # (physical line, expected text, level, tag, wrappers)
    (
        "> > E srv        decode: failed to process speculative batch",
        "srv        decode: failed to process speculative batch",
        "E",
        "srv",
        ("markdown-quote", "markdown-quote"),
    ),
    (">> 0.00.100.000 W srv  x: y", "srv  x: y", "W", "srv", ("markdown-quote", "markdown-quote")),
    (
        "| 0.41.772.031 E srv        decode: failed to process speculative batch |",
        "srv        decode: failed to process speculative batch",
        "E",
        "srv",
        ("markdown-table",),
    ),
    (
        "| slot launch_slot_: id  0 | task 7 | processing task |",
        "slot launch_slot_: id  0 | task 7 | processing task",
        None,
        "slot",
        ("markdown-table",),
    ),
    (
        "[2025-07-24 18:11:43.513] [error] llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        None,
        None,
        ("lmstudio",),
    ),
    ("3. E srv        decode: failed", "srv        decode: failed", "E", "srv", ("paste-list",)),
    ("- srv  update_slots: all slots are idle", "srv  update_slots: all slots are idle", None, "srv", ("paste-list",)),
    ("* main: model loaded", "main: model loaded", None, None, ("paste-list",)),
    (
        "Jun 19 05:43:44 machine ollama[1265]: time=2024-06-19T05:43:44.656Z level=INFO source=server.go:567"
        ' msg="waiting for server to become available" status="llm server loading model"',
        'waiting for server to become available status="llm server loading model"',
        None,
        None,
        ("journald", "ollama"),
    ),
    (
        'time=2024-06-19T05:43:44.656Z level=ERROR source=server.go:1 msg="llama_model_load: error loading'
        ' model: unknown model architecture: \\"gemma3\\""',
        'llama_model_load: error loading model: unknown model architecture: "gemma3"',
        None,  # ollama's level is its own, not the message's
        None,
        ("ollama",),
    ),
    (
        'time=2025-02-19T05:53:47.838Z level=INFO source=runner.go:9 msg="0.00.512.345 I srv  llama_server: model loaded"',
        "srv  llama_server: model loaded",
        "I",
        "srv",
        ("ollama",),
    ),
    (
        "Dec 24 23:48:35 vm ollama[3974]: [GIN] 2023/12/24 - 23:48:35 | 500 |  1.332430527s |       127.0.0.1 |"
        ' POST     "/api/generate"',
        '500 |  1.332430527s |       127.0.0.1 | POST     "/api/generate"',
        None,
        "gin",
        ("journald", "gin"),
    ),
    (
        "2025-01-19 19:47:08 [GIN] 2025/01/19 - 17:47:08 | 500 |  5.257673085s |      172.22.0.3 | POST"
        '     "/api/chat"',
        '500 |  5.257673085s |      172.22.0.3 | POST     "/api/chat"',
        None,
        "gin",
        ("desktop-time", "gin"),
    ),
    (
        "2023/12/24 23:48:35 llama.go:459: error starting llama runner: llama runner process has terminated",
        "error starting llama runner: llama runner process has terminated",
        None,
        "go",
        ("go-log",),
    ),
    (
        "openai.NotFoundError: Error code: 501 - {'error': {'code': 501, 'message': 'This server does not"
        " support metrics endpoint. Start it with `--metrics`', 'type': 'not_supported_error'}}",
        '{"error":{"code":501,"message":"This server does not support metrics endpoint. Start it with'
        ' `--metrics`","type":"not_supported_error"}}',
        None,
        None,
        ("python-exception",),
    ),
    (
        "openai.BadRequestError: Error code: 400 - {'error': {'code': 400, 'message': 'JSON schema conversion"
        " failed:\\nUnrecognized schema: {\"type\":\"x\"}', 'type': 'invalid_request_error'}}",
        '{"error":{"code":400,"message":"JSON schema conversion failed:\\nUnrecognized schema: {\\"type\\":\\"x\\"}",'
        '"type":"invalid_request_error"}}',
        None,
        None,
        ("python-exception",),
    ),
]


@pytest.mark.parametrize("physical,text,level,tag,wrappers", PASTED)
def test_peel_pasted_shapes(parser, physical, text, level, tag, wrappers) -> None:
    line, cont = parser.peel(7, physical)
    assert line is not None and not cont
    assert (line.text, line.level, line.tag, line.wrappers) == (text, level, tag, wrappers)


@pytest.mark.parametrize("physical", ["> ```", "> > ```text", "  ```", "~~~"])
def test_fences_dropped_inside_quotes(parser, physical) -> None:
    assert parser.peel(1, physical) == (None, False)


def test_exception_without_a_literal_is_left_alone(parser) -> None:
    line, _ = parser.peel(1, "ValueError: Requested tokens (5000) exceed context window of 4096")
    assert line is not None and line.text == "ValueError: Requested tokens (5000) exceed context window of 4096"
    assert line.wrappers == ()


@pytest.mark.parametrize(
    "text,hidden",
    [
        ("...", None),
        ("....", None),
        ("  [...]", None),
        ("(...)", None),
        ("…", None),
        ("[…]", None),
        ("<snip>", None),
        ("--- snip ---", None),
        ("[snipped]", None),
        ("(truncated)", None),
        ("[output truncated]", None),
        ("... 40 lines omitted ...", 40),
        ("[... 12 more lines ...]", 12),
        ("<300 lines removed>", 300),
        ("> ...", None),
    ],
)
def test_elisions(parser, text, hidden) -> None:
    line, _ = parser.peel(1, text)
    assert line is not None
    assert parser.elision(line.text) == (True, hidden)


@pytest.mark.parametrize(
    "text",
    [
        "...........................................................................................",
        "srv  load_model: loading model ...",
        "cmn  common_init_: warming up the model with an empty run - please wait ... (--no-warmup to disable)",
        "slot update_slots: id  0 | task 1 | n_past = 10, truncated = 0",
        "llama_model_loader: - kv  14: tokenizer.ggml.tokens arr[str,256000] = [\"<PAD>\", ...",
    ],
)
def test_not_elisions(parser, text) -> None:
    line, _ = parser.peel(1, text)
    assert line is not None and parser.elision(line.text) == (False, None)


def _entries(knowledge, log: list[str]) -> list:
    from llamadiag.engine.analyze import Analyzer

    analyzer = Analyzer(knowledge, every_line=True)
    seen = []
    analyzer.on_entry = lambda line, targets: seen.append(line)
    analyzer.feed(log)
    analyzer.flush()
    return seen


SEQ_POSITIONS = [
    "0.41.772.010 E init: the tokens of sequence 3 in the input batch have inconsistent sequence positions:",
    " - the last position stored in the memory module of the context (i.e. the KV cache) for sequence 3 is X = 17",
    " - the tokens for sequence 3 in the input batch have a starting position of Y = 942",
    " it is required that the sequence positions remain consecutive: Y = X + 1",
    "0.41.772.031 E srv        decode: failed to process speculative batch",
]


def test_foreign_lines_do_not_break_continuations(knowledge) -> None:
    gin = '[GIN] 2024/05/01 - 10:00:00 | 200 |      41.983µs |       127.0.0.1 | HEAD     "/"'
    ollama = 'time=2024-05-01T10:00:00.000Z level=INFO source=server.go:123 msg="waiting for server" status="x"'
    log = [SEQ_POSITIONS[0], gin, SEQ_POSITIONS[1], ollama, gin, *SEQ_POSITIONS[2:]]
    seen = _entries(knowledge, log)
    llama = [ln for ln in seen if not ln.wrappers]
    assert [(ln.number, ln.end) for ln in llama] == [(1, 7), (8, 8)]
    assert llama[0].text.count("\n") == 3 and llama[0].level == "E"
    foreign = [ln for ln in seen if ln.wrappers]
    assert [(ln.number, ln.tag) for ln in foreign] == [(2, "gin"), (4, None), (5, "gin")]


def test_continuations_inside_ollama_msg_join(knowledge) -> None:
    def wrap(text: str) -> str:
        return 'time=2024-05-01T10:00:00.000Z level=INFO source=server.go:1 msg="' + text.replace('"', '\\"') + '"'

    seen = _entries(knowledge, [wrap(x) for x in SEQ_POSITIONS])
    assert [(ln.number, ln.end) for ln in seen] == [(1, 4), (5, 5)]


def test_elision_line_is_not_an_entry(knowledge) -> None:
    seen = _entries(knowledge, ["E srv  x: a", "[...]", "E srv  x: b"])
    assert [ln.text for ln in seen] == ["srv  x: a", "srv  x: b"]


def test_patterns_are_compiled_when_a_line_first_needs_them(knowledge) -> None:
    """Issue #11 point 4: a plain line compiles the scanner's combined test and llama's prefix,
    not the ~40 single wrapper, elision and continuation patterns (a few ms of every start)."""
    parser = EnvelopeParser(knowledge.envelope)
    line, is_cont = parser.peel(1, "main: loading model")
    assert line is not None and not is_cont and line.text == "main: loading model"
    assert parser.elision(line.text) == (False, None)
    compiled = set(vars(parser))
    assert {"wrappers", "elisions", "continuations", "suffixes", "any_wrapper"}.isdisjoint(compiled), compiled
    wrapped, _ = parser.peel(2, "Dec 01 10:00:00 host llama-server[42]: main: loading model")
    assert wrapped is not None and wrapped.text == "main: loading model" and "wrappers" in vars(parser)


def test_wrapped_says_what_the_combined_wrapper_test_says(knowledge) -> None:
    from tests.paths import ROOT

    parser = EnvelopeParser(knowledge.envelope)
    for path in sorted((ROOT / "sample_logs").rglob("*.log"))[:40]:
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines()[:400]:
            text = strip_controls(raw)
            assert parser.wrapped(text) == (parser.any_wrapper.match(text) is not None), (path, raw)
