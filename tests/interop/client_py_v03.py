"""Drives the server with a2a-sdk 0.3.x, which speaks A2A 0.3 natively.

The bearer token goes through the SDK's documented AuthInterceptor, which reads the card's
securitySchemes. Env: A2A_BASE, A2A_TOKEN_PRO, A2A_TOKEN_FREE, A2A_TOKEN_LIMITED.
Prints `PASS <check>`, `FAIL <check>: <why>` and `SEEN <case>: <what the caller got>`.
"""

import os
import secrets
import uuid

import common
from common import (
    SKILLS,
    Receiver,
    Token,
    calls,
    check_push,
    check_stream,
    event,
    failure_detail,
    http,
    poll,
    report,
    resolve,
    streams,
)
from a2a.client import ClientConfig, ClientFactory
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.types import (
    Message,
    MessageSendConfiguration,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)

TERMINAL = {TaskState.completed, TaskState.failed, TaskState.canceled, TaskState.rejected}
COMPLETED = TaskState.completed
QUESTION = SKILLS["catholic_qa"]


async def client(token, card_path="/.well-known/agent-card.json", streaming=False, polling=False):
    config = ClientConfig(httpx_client=http(), streaming=streaming, polling=polling)
    return await ClientFactory.connect(
        await resolve(card_path),
        client_config=config,
        interceptors=[AuthInterceptor(Token(token))],
    )


def message(skill, text):
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        metadata={"skillId": skill},
    )


async def send(c, skill, text, configuration=None):
    task = None
    async for event in c.send_message(message(skill, text), configuration=configuration):
        if isinstance(event, tuple):
            task = event[0]
        elif isinstance(event, Task):
            task = event
    return task


def rpc_code(e):
    error = getattr(e, "error", None)
    return getattr(error, "code", None)


def rpc_data(e):
    error = getattr(e, "error", None)
    return getattr(error, "data", None) or {}


def neutral(item):
    """One (task, update) pair the SDK yields, in the form the lifecycle checks read."""
    task, update = item
    if isinstance(update, TaskStatusUpdateEvent):
        return event("status", state=update.status.state.value, final=update.final)
    if isinstance(update, TaskArtifactUpdateEvent):
        return event(
            "artifact",
            artifact_id=update.artifact.artifact_id,
            texts=[p.root.text for p in update.artifact.parts if isinstance(p.root, TextPart)],
            append=bool(update.append),
            last=bool(update.last_chunk),
        )
    return event("task", state=task.status.state.value)


def artifacts(task):
    return [
        (a.artifact_id, [p.root.text for p in a.parts if isinstance(p.root, TextPart)])
        for a in task.artifacts or []
    ]


async def lifecycle(pro):
    """Streaming, resubscribing, polling and cancelling a `catholic_qa` task that the slow
    answering backend keeps working for a few seconds, as the SDK's documentation shows."""
    streaming = await client(pro, streaming=True)
    polling = await client(pro, polling=True)

    try:
        # Each event is read as it arrives: the SDK's task tracker appends later pieces to the
        # artifact object of the first one.
        events, tid = [], None
        async for item in streaming.send_message(message("catholic_qa", QUESTION)):
            events.append(neutral(item))
            tid = item[0].id
        stored = await streaming.get_task(TaskQueryParams(id=tid))
        check_stream("stream", events, artifacts(stored), streams[-1])
    except Exception:  # noqa: BLE001
        report("stream", False, failure_detail())

    try:
        sent = await send(polling, "catholic_qa", QUESTION)
        started = sent.status.state.value
        report("non-blocking send answers before the end", started in ("submitted", "working"), started)

        async def current():
            got = await polling.get_task(TaskQueryParams(id=sent.id))
            return got.status.state.value, artifacts(got)

        await poll(current, "non-blocking: tasks/get polled until completed")
    except Exception:  # noqa: BLE001
        report("non-blocking", False, failure_detail())

    try:
        sent = await send(polling, "catholic_qa", QUESTION)
        started = sent.status.state.value
        events = [neutral(item) async for item in streaming.resubscribe(TaskIdParams(id=sent.id))]
        stored = await streaming.get_task(TaskQueryParams(id=sent.id))
        report("resubscribe to a working task", started in ("submitted", "working"), started)
        check_stream("resubscribe", events, artifacts(stored), streams[-1])
    except Exception:  # noqa: BLE001
        report("resubscribe", False, failure_detail())

    try:
        events, tid, canceled, entry = [], None, None, None
        async for item in streaming.send_message(message("catholic_qa", QUESTION)):
            events.append(neutral(item))
            tid = item[0].id
            if canceled is None and events[-1]["kind"] == "artifact":
                entry = streams[-1]
                canceled = await streaming.cancel_task(TaskIdParams(id=tid))
        report("cancel a working task", canceled and canceled.status.state.value == "canceled", f"{canceled}")
        check_stream("cancel", events, [], entry, end_state="canceled")
        got = await streaming.get_task(TaskQueryParams(id=tid))
        report("tasks/get after cancel", got.status.state.value == "canceled", got.status.state.value)
    except Exception:  # noqa: BLE001
        report("cancel", False, failure_detail())


async def push(pro):
    """Push notifications to a receiver this program runs on loopback: configured inline on a
    non-blocking send, and through the SDK's set method on a task already working."""
    receiver = Receiver()
    polling = await client(pro, polling=True)
    try:
        token = secrets.token_urlsafe(16)
        inline = PushNotificationConfig(url=receiver.url, token=token)
        sent = await send(
            polling, "catholic_qa", QUESTION, MessageSendConfiguration(push_notification_config=inline)
        )
        await check_push("push configured on the send", receiver, sent.id, token)
    except Exception:  # noqa: BLE001
        report("push configured on the send", False, failure_detail())
    try:
        token = secrets.token_urlsafe(16)
        sent = await send(polling, "catholic_qa", QUESTION)
        config = await polling.set_task_callback(
            TaskPushNotificationConfig(
                task_id=sent.id,
                push_notification_config=PushNotificationConfig(url=receiver.url, token=token),
            )
        )
        report(
            "push config set for a working task",
            config.task_id == sent.id and config.push_notification_config.url == receiver.url,
            f"{config}",
        )
        await check_push("push config set", receiver, sent.id, token)
    except Exception:  # noqa: BLE001
        report("push config set", False, failure_detail())


async def expect_error(name, run, cls, check=None):
    try:
        value = await run()
    except Exception as e:  # noqa: BLE001 - the point is to see what the SDK raises
        got = type(e).__name__
        detail = getattr(e, "error", None) or getattr(e, "status_code", None)
        print(f"SEEN {name}: {type(e).__module__}.{got} detail={detail!r:.200} message={str(e)[:160]!r}")
        problems = []
        if got != cls:
            problems.append(f"raised {got}, expected {cls}")
        if check and not check(e):
            problems.append(f"unexpected detail: {e!r}")
        report(name, not problems, "; ".join(problems))
        return
    report(name, False, f"expected {cls}, got a result: {str(value)[:200]}")


async def main():
    pro = os.environ["A2A_TOKEN_PRO"]
    main_client = None
    for path in ("/.well-known/agent.json", "/.well-known/agent-card.json"):
        try:
            card = await resolve(path)
            ids = [s.id for s in card.skills]
            report(f"card {path}", all(s in ids for s in SKILLS), f"skills {ids}")
            main_client = await client(pro, path)
        except Exception:  # noqa: BLE001
            report(f"card {path}", False, failure_detail())
    if main_client is None:
        return
    c = main_client

    done = None
    for skill, text in SKILLS.items():
        try:
            task = await send(c, skill, text)
            ok = (
                task is not None
                and task.id
                and task.kind == "task"
                and task.status.state in TERMINAL
                and (task.metadata or {}).get("skillId") == skill
                and len(task.history or []) == 2
            )
            report(f"send {skill}", ok, f"unexpected task {task}")
            print(f"SEEN send {skill}: state={task.status.state.value}")
            if done is None or (done.status.state != COMPLETED and task.status.state == COMPLETED):
                done = task
        except Exception:  # noqa: BLE001
            report(f"send {skill}", False, failure_detail())
    if done is None:
        return

    try:
        got = await c.get_task(TaskQueryParams(id=done.id, history_length=1))
        report(
            "get historyLength=1",
            got.id == done.id and len(got.history) == 1 and got.status.state == done.status.state,
            f"got {got}",
        )
    except Exception:  # noqa: BLE001
        report("get historyLength=1", False, failure_detail())

    await expect_error(
        "cancel finished task",
        lambda: c.cancel_task(TaskIdParams(id=done.id)),
        "A2AClientJSONRPCError",
        lambda e: rpc_code(e) == -32602 and "Invalid state transition" in str(e),
    )
    await expect_error(
        "unknown task",
        lambda: c.get_task(TaskQueryParams(id=str(uuid.uuid4()))),
        "A2AClientJSONRPCError",
        lambda e: rpc_code(e) == -32001,
    )
    await expect_error(
        "unknown skill",
        lambda: send(c, "no_such_skill", "hello"),
        "A2AClientJSONRPCError",
        lambda e: rpc_code(e) == -32002 and "saints_of_the_day" in rpc_data(e).get("availableSkills", []),
    )
    await lifecycle(pro)
    await push(pro)
    free = await client(os.environ["A2A_TOKEN_FREE"])
    await expect_error(
        "free plan",
        lambda: send(free, "saints_of_the_day", "today"),
        "A2AClientHTTPError",
        lambda e: e.status_code == 403,
    )
    limited = await client(os.environ["A2A_TOKEN_LIMITED"])
    try:
        first = await send(limited, "saints_of_the_day", "today")
        report("limited first call", first.status.state in TERMINAL, f"{first}")
    except Exception:  # noqa: BLE001
        report("limited first call", False, failure_detail())
    await expect_error(
        "rate limit exhausted",
        lambda: send(limited, "saints_of_the_day", "today"),
        "A2AClientHTTPError",
        lambda e: e.status_code == 429,
    )
    anonymous = await client("not-a-valid-token")
    await expect_error(
        "invalid token",
        lambda: send(anonymous, "saints_of_the_day", "today"),
        "A2AClientHTTPError",
        lambda e: e.status_code == 401,
    )
    methods = {method for method, _ in calls}
    versions = {version for _, version in calls}
    report(
        "0.3 wire",
        methods
        == {
            "message/send",
            "message/stream",
            "tasks/resubscribe",
            "tasks/get",
            "tasks/cancel",
            "tasks/pushNotificationConfig/set",
        }
        and versions == {None},
        f"methods {methods}, A2A-Version {versions}",
    )


common.run(main)
