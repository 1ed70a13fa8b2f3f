"""A slow OpenAI-compatible answering backend on loopback, so that `catholic_qa` tasks stay
`working` long enough for clients to stream, resubscribe to, poll and cancel them.

`POST /v1/chat/completions` answers from the first numbered passage of the system message,
citing it as `[1]` (as the server's citation checker expects). With `"stream": true` the answer
goes out as Server-Sent Events, one `chat.completion.chunk` delta per piece with a pause between
pieces, then a finish reason and `[DONE]`; otherwise as one `chat.completion`.

Usage: llm_server.py PORT_FILE [PIECES] [PAUSE_MS]. Binds 127.0.0.1 on a free port, writes the
port to PORT_FILE once it listens, and serves until killed, printing one line per streamed
answer: `finished`, or `dropped` when the caller closed the connection before the end (as the
server does when a task is cancelled). Standard library only.
"""

import json
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE = sys.argv[1]
PIECES = int(sys.argv[2]) if len(sys.argv) > 2 else 20
PAUSE = (int(sys.argv[3]) if len(sys.argv) > 3 else 150) / 1000
MODEL = "interop-slow-model"
# The first passage block of the system message: "[1] <description>\n<text>".
FIRST_PASSAGE = re.compile(r"^\[1\] [^\n]*\n(.+?)(?:\n\n\[2\] |\Z)", re.S | re.M)


def answer(messages):
    """The answer to the chat: the opening words of passage [1], cited."""
    system = next((m.get("content", "") for m in messages if m.get("role") == "system"), "")
    found = FIRST_PASSAGE.search(system)
    if not found:
        return "The library's passages do not answer this question."
    words = found.group(1).split()
    quoted = " ".join(words[:24])
    return f"The first passage answers it: {quoted} [1]. Nothing else in the library bears on it [1]."


def pieces(text, count):
    """`text` cut into `count` consecutive pieces of nearly equal length, none empty."""
    count = max(1, min(count, len(text)))
    size, extra = divmod(len(text), count)
    out, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        out.append(text[start:end])
        start = end
    return out


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-interop",
        "object": "chat.completion.chunk",
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        """Quiet: the suite's output is the clients' report."""

    def reply_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):  # noqa: N802 - the base class's naming
        if self.path != "/v1/chat/completions":
            self.reply_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            text = answer(body["messages"])
        except (ValueError, KeyError, TypeError) as e:
            self.reply_json(400, {"error": {"message": f"bad request: {e}"}})
            return
        if body.get("stream") is not True:
            self.reply_json(
                200,
                {
                    "id": "chatcmpl-interop",
                    "object": "chat.completion",
                    "model": MODEL,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                },
            )
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        events = [chunk({"content": piece}) for piece in pieces(text, PIECES)]
        events[0]["choices"][0]["delta"]["role"] = "assistant"
        events.append(chunk({}, "stop"))
        try:
            for index, event in enumerate(events):
                if index > 0:
                    time.sleep(PAUSE)
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            print("finished", flush=True)
        except (BrokenPipeError, ConnectionResetError):
            # The server dropped the request (a cancelled task): nothing more to send.
            print("dropped", flush=True)
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
# Renamed into place, so a reader never sees a half-written port.
os.replace(PORT_FILE + ".tmp", PORT_FILE)
server.serve_forever()
