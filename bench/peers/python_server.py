"""The Python peer: the official A2A SDK (a2a-sdk 0.3.26) Starlette JSON-RPC application with a
trivial executor that completes every task at once, under uvicorn (one worker, no access log).

Usage: python_server.py PORT
"""

import sys
import uuid

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    Part,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
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
                status=TaskStatus(state=TaskState.completed),
                artifacts=[
                    Artifact(
                        artifact_id=str(uuid.uuid4()),
                        name="saints",
                        parts=[Part(root=TextPart(text=ANSWER))],
                    )
                ],
                history=history,
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise RuntimeError("tasks complete at once")


def main() -> None:
    port = int(sys.argv[1])
    card = AgentCard(
        name="bench peer",
        description="A2A SDK peer for the load benchmark",
        url=f"http://127.0.0.1:{port}/",
        version="0.0.0",
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        capabilities=AgentCapabilities(streaming=False),
        skills=[
            AgentSkill(
                id="saints_of_the_day",
                name="saints",
                description="saints of the day",
                tags=["bench"],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=CompleteAtOnce(), task_store=InMemoryTaskStore()
    )
    app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    print(f"python peer listening on http://127.0.0.1:{port}", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
