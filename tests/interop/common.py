"""What the Python SDK clients share, whatever the SDK version: the skills and inputs, the
report lines, the bearer credential, and the record of which wire each call used."""

import json
import os
import sys
import traceback

import httpx
from a2a.client import A2ACardResolver
from a2a.client.auth.credentials import CredentialService

BASE = os.environ["A2A_BASE"]
SKILLS = {
    "catholic_qa": "What does the Church teach about grace?",
    "document_search": "grace",
    "document_fetch": "catechism",
    "liturgical_readings": "2026-12-08",
    "saints_of_the_day": "2026-12-08",
}

failures = 0


def failure_detail():
    """The exception's one-line summary first (shown in the suite's summary), then the traceback."""
    summary = "".join(traceback.format_exception_only(*sys.exc_info()[:2])).strip()
    return f"{summary}\n{traceback.format_exc()}"


def report(name, ok, why=""):
    global failures
    if ok:
        print(f"PASS {name}")
    else:
        failures += 1
        print(f"FAIL {name}: {why}")


class Token(CredentialService):
    """Returns one bearer token for every scheme the card names."""

    def __init__(self, token):
        self.token = token

    async def get_credentials(self, security_scheme_name, context):
        return self.token


# (JSON-RPC method, A2A-Version header) of every call, to check which wire the SDK chose.
calls = []


async def record(request):
    if request.method == "POST":
        method = json.loads(request.content or b"{}").get("method")
        calls.append((method, request.headers.get("a2a-version")))


def http():
    return httpx.AsyncClient(timeout=60, event_hooks={"request": [record]})


async def resolve(card_path):
    async with http() as h:
        return await A2ACardResolver(h, BASE).get_agent_card(relative_card_path=card_path)
