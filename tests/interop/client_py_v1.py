"""Drives the server with a2a-sdk 1.x (default settings: A2A 1.0 once the card lists it).

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
from a2a.client import ClientConfig, create_client
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)

TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
COMPLETED = TaskState.TASK_STATE_COMPLETED
QUESTION = SKILLS["catholic_qa"]


async def client(token, card_path="/.well-known/agent-card.json", streaming=False, polling=False):
    config = ClientConfig(httpx_client=http(), streaming=streaming, polling=polling)
    return await create_client(
        await resolve(card_path),
        client_config=config,
        interceptors=[AuthInterceptor(Token(token))],
    )


def message(skill, text):
    msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    msg.metadata.update({"skillId": skill})
    return SendMessageRequest(message=msg)


async def send(c, skill, text):
    task = None
    async for event in c.send_message(message(skill, text)):
        if event.HasField("task"):
            task = event.task
    return task


def state(value):
    """A 1.0 state in its 0.3 spelling (TASK_STATE_INPUT_REQUIRED -> input-required)."""
    return TaskState.Name(value).removeprefix("TASK_STATE_").lower().replace("_", "-")


def neutral(response):
    """One StreamResponse in the form the lifecycle checks read (see common.event)."""
    kind = response.WhichOneof("payload")
    if kind == "task":
        return event("task", state=state(response.task.status.state))
    if kind == "status_update":
        return event("status", state=state(response.status_update.status.state), final=None)
    if kind == "artifact_update":
        update = response.artifact_update
        return event(
            "artifact",
            artifact_id=update.artifact.artifact_id,
            texts=[p.text for p in update.artifact.parts if p.HasField("text")],
            append=update.append,
            last=update.last_chunk,
        )
    return event(kind or "empty")


def artifacts(task):
    return [(a.artifact_id, [p.text for p in a.parts if p.HasField("text")]) for a in task.artifacts]


def task_id(response):
    kind = response.WhichOneof("payload")
    if kind == "task":
        return response.task.id
    return getattr(response, kind).task_id


async def lifecycle(pro):
    """Streaming, resubscribing, polling and cancelling a `catholic_qa` task that the slow
    answering backend keeps working for a few seconds, as the SDK's documentation shows."""
    streaming = await client(pro, streaming=True)
    polling = await client(pro, polling=True)

    try:
        events, tid = [], None
        async for response in streaming.send_message(message("catholic_qa", QUESTION)):
            events.append(neutral(response))
            tid = tid or task_id(response)
        stored = await streaming.get_task(GetTaskRequest(id=tid))
        check_stream("stream", events, artifacts(stored), streams[-1])
    except Exception:  # noqa: BLE001
        report("stream", False, failure_detail())

    try:
        sent = [r async for r in polling.send_message(message("catholic_qa", QUESTION))][0]
        started = state(sent.task.status.state)
        report("non-blocking send answers before the end", started in ("submitted", "working"), started)

        async def current():
            got = await polling.get_task(GetTaskRequest(id=sent.task.id))
            return state(got.status.state), artifacts(got)

        await poll(current, "non-blocking: tasks/get polled until completed")
    except Exception:  # noqa: BLE001
        report("non-blocking", False, failure_detail())

    try:
        sent = [r async for r in polling.send_message(message("catholic_qa", QUESTION))][0]
        started = state(sent.task.status.state)
        events = [neutral(r) async for r in streaming.subscribe(SubscribeToTaskRequest(id=sent.task.id))]
        stored = await streaming.get_task(GetTaskRequest(id=sent.task.id))
        report("resubscribe to a working task", started in ("submitted", "working"), started)
        check_stream("resubscribe", events, artifacts(stored), streams[-1])
    except Exception:  # noqa: BLE001
        report("resubscribe", False, failure_detail())

    try:
        events, tid, canceled, entry = [], None, None, None
        async for response in streaming.send_message(message("catholic_qa", QUESTION)):
            events.append(neutral(response))
            tid = tid or task_id(response)
            if canceled is None and events[-1]["kind"] == "artifact":
                entry = streams[-1]
                canceled = await streaming.cancel_task(CancelTaskRequest(id=tid))
        report("cancel a working task", canceled and state(canceled.status.state) == "canceled", f"{canceled}")
        check_stream("cancel", events, [], entry, end_state="canceled")
        got = await streaming.get_task(GetTaskRequest(id=tid))
        report("tasks/get after cancel", state(got.status.state) == "canceled", state(got.status.state))
    except Exception:  # noqa: BLE001
        report("cancel", False, failure_detail())


async def push(pro):
    """Push notifications to a receiver this program runs on loopback: configured inline on a
    non-blocking send, and through the SDK's create method on a task already working."""
    receiver = Receiver()
    polling = await client(pro, polling=True)
    try:
        token = secrets.token_urlsafe(16)
        request = message("catholic_qa", QUESTION)
        request.configuration.task_push_notification_config.CopyFrom(
            TaskPushNotificationConfig(url=receiver.url, token=token)
        )
        sent = [r async for r in polling.send_message(request)][0]
        await check_push("push configured on the send", receiver, sent.task.id, token)
    except Exception:  # noqa: BLE001
        report("push configured on the send", False, failure_detail())
    try:
        token = secrets.token_urlsafe(16)
        sent = [r async for r in polling.send_message(message("catholic_qa", QUESTION))][0]
        config = await polling.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=sent.task.id, url=receiver.url, token=token)
        )
        report(
            "push config created for a working task",
            config.task_id == sent.task.id and config.url == receiver.url and config.id,
            f"{config}",
        )
        await check_push("push config created", receiver, sent.task.id, token)
    except Exception:  # noqa: BLE001
        report("push config created", False, failure_detail())


async def expect_error(name, run, cls, check=None):
    try:
        value = await run()
    except Exception as e:  # noqa: BLE001 - the point is to see what the SDK raises
        got = type(e).__name__
        data = getattr(e, "data", None)
        print(f"SEEN {name}: {type(e).__module__}.{got} data={data} message={str(e)[:160]!r}")
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
                and task.status.state in TERMINAL
                and task.metadata["skillId"] == skill
                and len(task.history) == 2
            )
            report(f"send {skill}", ok, f"unexpected task {task}")
            print(f"SEEN send {skill}: state={TaskState.Name(task.status.state)}")
            if done is None or (done.status.state != COMPLETED and task.status.state == COMPLETED):
                done = task
        except Exception:  # noqa: BLE001
            report(f"send {skill}", False, failure_detail())
    if done is None:
        return

    try:
        got = await c.get_task(GetTaskRequest(id=done.id, history_length=1))
        report(
            "get historyLength=1",
            got.id == done.id and len(got.history) == 1 and got.status.state == done.status.state,
            f"got {got}",
        )
    except Exception:  # noqa: BLE001
        report("get historyLength=1", False, failure_detail())

    await expect_error(
        "cancel finished task",
        lambda: c.cancel_task(CancelTaskRequest(id=done.id)),
        "TaskNotCancelableError",
    )
    await expect_error(
        "unknown task",
        lambda: c.get_task(GetTaskRequest(id=str(uuid.uuid4()))),
        "TaskNotFoundError",
    )
    await expect_error(
        "unknown skill",
        lambda: send(c, "no_such_skill", "hello"),
        "InvalidParamsError",
        lambda e: "saints_of_the_day" in (e.data or {}).get("availableSkills", ""),
    )
    await lifecycle(pro)
    await push(pro)
    free = await client(os.environ["A2A_TOKEN_FREE"])
    await expect_error(
        "free plan",
        lambda: send(free, "saints_of_the_day", "today"),
        "A2AClientError",
        lambda e: "403" in str(e),
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
        "A2AClientError",
        lambda e: "429" in str(e),
    )
    anonymous = await client("not-a-valid-token")
    await expect_error(
        "invalid token",
        lambda: send(anonymous, "saints_of_the_day", "today"),
        "A2AClientError",
        lambda e: "401" in str(e),
    )
    methods = {method for method, _ in calls}
    versions = {version for _, version in calls}
    report(
        "1.0 wire",
        methods
        == {
            "SendMessage",
            "SendStreamingMessage",
            "SubscribeToTask",
            "GetTask",
            "CancelTask",
            "CreateTaskPushNotificationConfig",
        }
        and versions == {"1.0"},
        f"methods {methods}, A2A-Version {versions}",
    )


common.run(main)
