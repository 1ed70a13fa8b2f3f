"""A client author's test suite, as the CI recipe of docs/client-testing.md runs it: the
official Python SDK (a2a-sdk 0.3.x) against the server's conformance kit, one run per scenario
(`A2A-Client-Run: ci-<scenario>`), each test checking that the client handles the failure
well. With `--misbehave` it also retries a simulated 429 at once, which the report must flag.

Env: A2A_BASE, A2A_TOKEN. Prints `PASS <test>` / `FAIL <test>: <why>`; exits 1 on a failure.
"""

import asyncio
import os
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.auth.credentials import CredentialService
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.types import Message, Part, Role, Task, TaskQueryParams, TaskState, TextPart

BASE = os.environ["A2A_BASE"]
TOKEN = os.environ["A2A_TOKEN"]
failures = 0


class Token(CredentialService):
    async def get_credentials(self, security_scheme_name, context):
        return TOKEN


def report(name, ok, why=""):
    global failures
    print(f"PASS {name}" if ok else f"FAIL {name}: {why}")
    failures += 0 if ok else 1


async def client(scenario, simulate=None):
    """An SDK client whose calls name the run, and ask for `simulate` when given."""
    headers = {"A2A-Client-Run": f"ci-{scenario}"}
    if simulate:
        headers["A2A-Simulate"] = simulate
    http = httpx.AsyncClient(timeout=30, headers=headers)
    card = await A2ACardResolver(http, BASE).get_agent_card()
    config = ClientConfig(httpx_client=http, streaming=False)
    return await ClientFactory.connect(
        card, client_config=config, interceptors=[AuthInterceptor(Token())]
    )


def message(text, message_id=None):
    return Message(
        message_id=message_id or str(uuid.uuid4()),
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        metadata={"skillId": "saints_of_the_day"},
    )


async def send(c, msg):
    async for event in c.send_message(msg):
        if isinstance(event, tuple):
            return event[0]
        if isinstance(event, Task):
            return event
    return None


def retry_after(error):
    """How long the server said to wait: the SDK keeps the HTTP response on the cause."""
    response = getattr(getattr(error, "__cause__", None), "response", None)
    if response is not None and response.headers.get("retry-after"):
        return int(response.headers["retry-after"])
    return None


async def test_skill_failed():
    c = await client("skill_failed", "skill_failed")
    task = await send(c, message("today"))
    report("skill_failed gives a failed task", task is not None and task.status.state == TaskState.failed)


async def test_rate_limited(misbehave):
    c = await client("rate_limited", "rate_limited;retry_after=1")
    msg = message("today")
    try:
        await send(c, msg)
        report("rate_limited raises", False, "no error")
        return
    except Exception as e:  # noqa: BLE001 - whatever the SDK raises
        wait = retry_after(e)
        report("rate_limited exposes Retry-After", wait == 1, f"{type(e).__name__}: {e}")
    calm = await client("rate_limited")
    if not misbehave:
        await asyncio.sleep(wait or 1)
    task = await send(calm, msg)
    report("the retry after waiting completes", task is not None and task.status.state == TaskState.completed)


async def test_error(scenario, simulate=None):
    c = await client(scenario, simulate or scenario)
    try:
        await c.get_task(TaskQueryParams(id=str(uuid.uuid4())))
        report(f"{scenario} raises", False, "no error")
    except Exception as e:  # noqa: BLE001
        report(f"{scenario} raises", True)


async def test_disconnect():
    msg = message("today")
    c = await client("disconnect", "disconnect")
    try:
        await send(c, msg)
        report("disconnect raises", False, "an answer arrived")
    except Exception:  # noqa: BLE001
        report("disconnect raises", True)
    retry = await client("disconnect")
    task = await send(retry, msg)
    report("the retry with the same messageId gets the task", task is not None and task.status.state == TaskState.completed)


async def main():
    misbehave = "--misbehave" in sys.argv
    await test_skill_failed()
    await test_rate_limited(misbehave)
    for scenario in ["unauthorized", "expired_token", "plan_required", "overloaded",
                     "internal_error", "task_not_found", "malformed_response"]:
        await test_error(scenario)
    await test_disconnect()
    print(f"client tests: {failures} failed")
    sys.exit(1 if failures else 0)


asyncio.run(main())
