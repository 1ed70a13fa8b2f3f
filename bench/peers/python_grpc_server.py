"""The Python gRPC peer: the official A2A SDK (a2a-sdk[grpc] 1.3.0) `GrpcHandler` over its
`DefaultRequestHandler`, with a trivial executor that completes every task at once (the same
answer as the JSON-RPC peer), on a `grpc.aio` server (one process, cleartext HTTP/2).

Usage: python_grpc_server.py PORT
"""

import asyncio
import sys
import uuid

import grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    Part,
    Task,
    TaskState,
    TaskStatus,
    a2a_pb2_grpc,
)

ANSWER = "8 December 2026: The Immaculate Conception of the Blessed Virgin Mary (solemnity)."


class CompleteAtOnce(AgentExecutor):
    """Answers every message with a completed task holding one text artifact."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        history = [context.message] if context.message else []
        await event_queue.enqueue_event(
            Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
                artifacts=[
                    Artifact(artifact_id=str(uuid.uuid4()), name="saints",
                             parts=[Part(text=ANSWER)])
                ],
                history=history,
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise RuntimeError("tasks complete at once")


async def serve(port: int) -> None:
    card = AgentCard(
        name="bench peer",
        description="A2A SDK gRPC peer for the load benchmark",
        version="0.0.0",
        supported_interfaces=[AgentInterface(url=f"127.0.0.1:{port}", protocol_binding="GRPC",
                                             protocol_version="1.0")],
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=False),
        skills=[AgentSkill(id="saints_of_the_day", name="saints",
                           description="saints of the day", tags=["bench"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=CompleteAtOnce(), task_store=InMemoryTaskStore(), agent_card=card
    )
    server = grpc.aio.server()
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(f"python gRPC peer listening on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
