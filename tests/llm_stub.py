"""A local stand-in for an OpenAI-compatible chat endpoint: a real HTTP server on 127.0.0.1 (a
thread of this process) that records every request and answers in the shape of OpenAI's
`POST /v1/chat/completions` (as llama.cpp's server, vLLM and Ollama's /v1 answer it too):

    {"id": ..., "object": "chat.completion", "created": ..., "model": ...,
     "choices": [{"index": 0, "message": {"role": "assistant", "content": "..."},
                  "finish_reason": "stop"}],
     "usage": {"prompt_tokens": N, "completion_tokens": N, "total_tokens": N}}

By default it summarises by echoing the paper's title (so a test can tell which paper a
summary belongs to); `script` queues replies a test wants instead (a status, a raw body, a
delay longer than the client's timeout, what a compromised model would answer).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the assistant's message; None: the default summary
    body: bytes | None = None  # a raw body instead of a chat completion
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a timeout, when longer than the client's)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    json: dict | None


def default_content(body: dict) -> str:
    """The answer a well-behaved model would give: every asked language, every field, the
    English TL;DR naming the paper's title (so a test can tell whose summary it is)."""
    user = body["messages"][-1]["content"]
    paper = json.loads(user.split("\n", 1)[1])
    title = paper["title"]
    first = paper["abstract"].split(". ")[0].rstrip(".")
    return json.dumps(
        {
            "en": {
                "tldr": f"TLDR of {title}.",
                "motivation": f"Why {title} matters.",
                "method": f"The authors start from this: {first[:160]}.",
                "result": "What it found.",
                "conclusion": "What it means.",
            },
            "zh": {
                "tldr": f"本文提出{title}，并在多个基准上验证了其有效性。",
                "motivation": "现有方法在这一问题上仍有明显不足，作者希望找到更可靠、更高效的做法。",
                "method": "作者设计了新的模型与训练流程，并与现有方法做了系统的对比。",
                "result": "实验表明新方法在主要指标上优于已有基线。",
                "conclusion": "该工作为后续研究提供了一个简单有效的起点。",
            },
        },
        ensure_ascii=False,
    )


class LLMStub:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.script: deque[Reply] = deque()
        self.lock = threading.Lock()
        self.inflight = 0
        self.max_inflight = 0  # the most requests it was answering at once
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with stub.lock:
                    stub.requests.append(Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    reply = stub.script.popleft() if stub.script else Reply()
                    stub.inflight += 1
                    stub.max_inflight = max(stub.max_inflight, stub.inflight)
                try:
                    self._answer(reply, body)
                finally:
                    with stub.lock:
                        stub.inflight -= 1

            def _answer(self, reply: Reply, body: dict | None) -> None:
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.body is not None:
                    out = reply.body
                elif reply.status != 200:
                    out = json.dumps({"error": {"message": f"stub error {reply.status}"}}).encode()
                else:
                    content = reply.content if reply.content is not None else default_content(body)
                    out = json.dumps(
                        {
                            "id": "chatcmpl-stub",
                            "object": "chat.completion",
                            "created": int(time.time()),
                            "model": body.get("model"),
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 300, "completion_tokens": 200, "total_tokens": 500},
                        },
                        ensure_ascii=False,
                    ).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(out)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> LLMStub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def queue(self, *replies: Reply) -> None:
        with self.lock:
            self.script.extend(replies)
