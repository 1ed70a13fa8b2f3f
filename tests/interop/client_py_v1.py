"""Drives the server with a2a-sdk 1.x (default settings: A2A 1.0 once the card lists it).

The bearer token goes through the SDK's documented AuthInterceptor, which reads the card's
securitySchemes. Env: A2A_BASE, A2A_TOKEN_PRO, A2A_TOKEN_FREE, A2A_TOKEN_LIMITED, and
A2A_BINDING: `jsonrpc` (default: the SDK's default settings, which speak JSON-RPC),
`http+json` (ClientConfig offers HTTP+JSON first, then JSON-RPC, with the client's preference
over the card's order), which also lists tasks and meets the errors only that binding can show,
or `grpc` (ClientConfig offers gRPC alone, with a plain-text channel to the card's target), which
lists tasks and calls every push-config RPC too.
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
from common import BASE_TARGET
from a2a.client import ClientConfig, create_client
from a2a.client.auth.interceptor import AuthInterceptor
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
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
BINDING = os.environ.get("A2A_BINDING", "jsonrpc")
REST = BINDING == "http+json"
GRPC = BINDING == "grpc"
# The settings that select the HTTP+JSON binding: offered first, with the client's preference
# over the card's order (which lists JSON-RPC first).
REST_SETTINGS = {"supported_protocol_bindings": ["HTTP+JSON", "JSONRPC"], "use_client_preference": True}
# The settings that select the gRPC binding: offered alone, over a plain-text channel to the
# `host:port` the card names (each call recorded, as the HTTP taps record the others).
GRPC_SETTINGS = {"supported_protocol_bindings": ["GRPC"], "grpc_channel_factory": common.grpc_channel}
# A tenant the server does not serve: the SDK puts it in front of the resource path.
TENANT = "acme"


async def client(token, card_path="/.well-known/agent-card.json", streaming=False, polling=False, settings=None):
    if settings is None:
        settings = REST_SETTINGS if REST else GRPC_SETTINGS if GRPC else {}
    config = ClientConfig(httpx_client=http(), streaming=streaming, polling=polling, **settings)
    return await create_client(
        await resolve(card_path),
        client_config=config,
        interceptors=[AuthInterceptor(Token(token))],
    )


def message(skill, text, parts=None):
    parts = [Part(text=text)] if parts is None else parts
    msg = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=parts)
    msg.metadata.update({"skillId": skill})
    return SendMessageRequest(message=msg)


async def send(c, skill, text, parts=None):
    task = None
    async for event in c.send_message(message(skill, text, parts)):
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
        if REST or GRPC:
            await push_configs(polling, config)
    except Exception:  # noqa: BLE001
        report("push config created", False, failure_detail())


async def push_configs(c, config):
    """The other push-config calls on a task's config: get, list, delete, then get again."""
    task_id, config_id = config.task_id, config.id
    got = await c.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id))
    listed = await c.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=task_id))
    report(
        "push config get and list",
        got.id == config_id and got.url == config.url and [x.id for x in listed.configs] == [config_id],
        f"got {got}, listed {listed}",
    )
    await c.delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id))
    listed = await c.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id=task_id))
    report("push config deleted", len(listed.configs) == 0, f"listed {listed}")
    await expect_error(
        "deleted push config",
        lambda: c.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)),
        "InvalidParamsError",
        lambda e: "has no push notification config" in str(e),
    )


def transport_of(c):
    """The class name and URL of the transport the SDK chose for a client."""
    transport = getattr(c, "_transport", None)
    while hasattr(transport, "_base"):  # a decorator (tenant) around the transport
        transport = transport._base
    return type(transport).__name__, getattr(transport, "url", None)


async def bindings(pro):
    """Which binding each setting picks: HTTP+JSON when offered first with the client's
    preference, JSON-RPC for a client that offers both in the card's order, and for a client
    with the default settings."""
    cases = [
        ("HTTP+JSON preferred", REST_SETTINGS, "RestTransport", "/api/v1/a2a/rest"),
        ("both offered, the card's order", {"supported_protocol_bindings": ["JSONRPC", "HTTP+JSON"]}, "JsonRpcTransport", "/api/v1/a2a"),
        ("default settings", {}, "JsonRpcTransport", "/api/v1/a2a"),
    ]
    for label, settings, cls, path in cases:
        try:
            got = transport_of(await client(pro, settings=settings))
            report(f"binding: {label}", got[0] == cls and str(got[1]).endswith(path), f"got {got}")
        except Exception:  # noqa: BLE001
            report(f"binding: {label}", False, failure_detail())


async def list_tasks(c, done):
    """ListTasks, two pages of two tasks (every skill was sent before)."""
    try:
        first = await c.list_tasks(ListTasksRequest(page_size=2))
        second = await c.list_tasks(ListTasksRequest(page_size=2, page_token=first.next_page_token))
        ids = [t.id for t in first.tasks] + [t.id for t in second.tasks]
        report(
            "list tasks: two pages",
            len(first.tasks) == 2 and first.next_page_token and len(second.tasks) == 2 and len(set(ids)) == 4,
            f"first {[t.id for t in first.tasks]} next {first.next_page_token!r}, second {[t.id for t in second.tasks]}",
        )
        finished = await c.list_tasks(ListTasksRequest(status=done.status.state, page_size=100))
        report(
            "list tasks: by state",
            done.id in [t.id for t in finished.tasks] and all(t.status.state == done.status.state for t in finished.tasks),
            f"{[(t.id, TaskState.Name(t.status.state)) for t in finished.tasks]}",
        )
    except Exception:  # noqa: BLE001
        report("list tasks", False, failure_detail())


async def rest_errors(c):
    """The errors a client meets through the SDK's own calls, beyond the ones both bindings
    share: bad params, a body over the size limit and a file part; and a message below a tenant
    (the SDK puts it in front of the path), which is served."""
    await expect_error(
        "bad params (a message without parts)",
        lambda: send(c, "saints_of_the_day", "", parts=[]),
        "InvalidParamsError",
        lambda e: "parts" in str(e),
    )
    await expect_error(
        "body over the size limit",
        lambda: send(c, "saints_of_the_day", "x" * (1 << 20)),
        "InvalidRequestError",
        lambda e: "larger than the limit" in str(e),
    )
    tenant = message("saints_of_the_day", "today")
    tenant.tenant = TENANT
    try:
        answered = await first_task(c.send_message(tenant))
        report(
            "a message below a tenant (every route is served below one; one tenant)",
            answered is not None and answered.HasField("task")
            and TaskState.Name(answered.task.status.state) == "TASK_STATE_COMPLETED",
            f"{answered}"[:300],
        )
    except Exception:  # noqa: BLE001
        report("a message below a tenant", False, failure_detail())
    await expect_error(
        "file part",
        lambda: send(c, "saints_of_the_day", "", parts=[Part(url="https://example.org/a.pdf", media_type="application/pdf")]),
        "ContentTypeNotSupportedError",
    )


async def grpc_binding(pro):
    """gRPC offered alone: the SDK's gRPC transport on the card's `host:port` target."""
    try:
        got = transport_of(await client(pro))
        target = BASE_TARGET
        report("binding: gRPC offered", got[0] == "GrpcTransport", f"got {got}, the card names {target}")
    except Exception:  # noqa: BLE001
        report("binding: gRPC offered", False, failure_detail())


async def grpc_errors(c):
    """The errors only a gRPC client meets through the SDK's calls: bad params and a file part,
    each as its status with the A2A ErrorInfo."""
    await expect_error(
        "bad params (a message without parts)",
        lambda: send(c, "saints_of_the_day", "", parts=[]),
        "InvalidParamsError",
        lambda e: "parts" in str(e),
    )
    await expect_error(
        "file part",
        lambda: send(c, "saints_of_the_day", "", parts=[Part(url="https://example.org/a.pdf", media_type="application/pdf")]),
        "ContentTypeNotSupportedError",
    )


def retry_info(error):
    """The seconds of the RetryInfo in a gRPC error's status details (0 when none)."""
    from a2a.utils.grpc_status import status_from_call
    from google.rpc import error_details_pb2

    status = status_from_call(error.__cause__)
    for detail in status.details if status else []:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return info.retry_delay.seconds
    return 0


async def first_task(responses):
    async for response in responses:
        return response


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
    if GRPC:
        # SKILL_NOT_FOUND is not a reason the SDK knows: it raises a gRPC error with the status.
        await expect_error(
            "unknown skill",
            lambda: send(c, "no_such_skill", "hello"),
            "A2AClientError",
            lambda e: "INVALID_ARGUMENT" in str(e) and "saints_of_the_day" in str(e),
        )
    elif REST:
        # SKILL_NOT_FOUND is not a reason the SDK knows: it raises an HTTP error, with the
        # google.rpc.Status on the cause's response.
        await expect_error(
            "unknown skill",
            lambda: send(c, "no_such_skill", "hello"),
            "A2AClientError",
            lambda e: "400" in str(e) and "saints_of_the_day" in e.__cause__.response.text,
        )
    else:
        await expect_error(
            "unknown skill",
            lambda: send(c, "no_such_skill", "hello"),
            "InvalidParamsError",
            lambda e: "saints_of_the_day" in (e.data or {}).get("availableSkills", ""),
        )
    if REST:
        await bindings(pro)
        await list_tasks(c, done)
        await rest_errors(c)
    if GRPC:
        await grpc_binding(pro)
        await list_tasks(c, done)
        await grpc_errors(c)
    await lifecycle(pro)
    await push(pro)
    free = await client(os.environ["A2A_TOKEN_FREE"])
    await expect_error(
        "free plan",
        lambda: send(free, "saints_of_the_day", "today"),
        "A2AClientError",
        lambda e: ("PERMISSION_DENIED" if GRPC else "403") in str(e),
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
        # On HTTP+JSON the wait is on the cause's response too, as Retry-After; on gRPC in the
        # status's RetryInfo.
        lambda e: retry_info(e) > 0
        if GRPC
        else "429" in str(e) and (not REST or e.__cause__.response.headers.get("retry-after", "").isdigit()),
    )
    anonymous = await client("not-a-valid-token")
    await expect_error(
        "invalid token",
        lambda: send(anonymous, "saints_of_the_day", "today"),
        "A2AClientError",
        lambda e: ("UNAUTHENTICATED" if GRPC else "401") in str(e),
    )
    methods = {method for method, _ in calls}
    versions = {version for _, version in calls}
    expected = {
        "SendMessage",
        "SendStreamingMessage",
        "SubscribeToTask",
        "GetTask",
        "CancelTask",
        "CreateTaskPushNotificationConfig",
    }
    if GRPC:
        expected |= {
            "ListTasks",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
        }
    if REST:
        # Every call went to a resource URL of the binding (common.record names them); the
        # binding checks created JSON-RPC clients but called nothing through them.
        expected |= {
            "ListTasks",
            f"REST POST /{TENANT}/message:send",
            "REST GET /tasks/{task}/pushNotificationConfigs",
            "REST GET /tasks/{task}/pushNotificationConfigs/{config}",
            "REST DELETE /tasks/{task}/pushNotificationConfigs/{config}",
        }
    report(
        "HTTP+JSON binding, 1.0" if REST else "gRPC binding, 1.0" if GRPC else "1.0 wire",
        methods == expected and versions == {"1.0"} and common.bindings == {BINDING},
        f"methods {methods}, A2A-Version {versions}, bindings {common.bindings}",
    )


common.run(main)
