"""The calls of `bench/profile`: waits for a server under callgrind, zeroes its counters, sends
`message/send` calls then `tasks/get` calls over one keep-alive connection, and dumps the
counters after each phase (dump 1 = sends, dump 2 = gets). Against our server it also saves the
first `message/send` answer as the floor's template and the last task id for `tasks/get`."""

import argparse
import http.client
import json
import subprocess
import sys
import time
import uuid


def connect(port: int) -> http.client.HTTPConnection:
    deadline = time.time() + 180
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.connect()
            return conn
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/api/v1/a2a")
    parser.add_argument("--token", default="")
    parser.add_argument("--calls", type=int, required=True)
    parser.add_argument("--pid", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()

    conn = connect(args.port)
    headers = {"Authorization": f"Bearer {args.token}", "Content-Type": "application/json"}

    def call(body: dict) -> dict:
        conn.request("POST", args.path, body=json.dumps(body), headers=headers)
        reply = json.loads(conn.getresponse().read())
        if "result" not in reply:
            raise SystemExit(f"bench: unexpected reply from {args.name}: {reply}")
        return reply

    def send(i: int) -> dict:
        return call({"jsonrpc": "2.0", "id": i, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
            "parts": [{"kind": "data", "data": {"date": "2026-12-08"}}],
            "metadata": {"skillId": "saints_of_the_day"}}}})

    def dump(what: str) -> None:
        subprocess.run(["callgrind_control", what, args.pid], check=True,
                       stdout=subprocess.DEVNULL)

    # Warm up (caches, lazily built tables), then count from zero.
    first = None
    for i in range(50):
        first = send(i)
    if args.name == "server":
        with open(f"{args.work}/template.json", "w") as f:
            json.dump(first, f)
    task_id = first["result"]["id"]
    get_body = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": task_id}}
    call(get_body)
    dump("-z")
    for i in range(args.calls):
        send(i)
    dump("-d")
    for i in range(args.calls):
        call(dict(get_body, id=i))
    dump("-d")
    print(f"bench: {args.calls} message/send and {args.calls} tasks/get calls to {args.name}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
