"""Drives the server with Google ADK for Python (`google-adk`): a `RemoteA2aAgent` run by an
`InMemoryRunner` with its in-memory session service, no language model. The answer is read back
from the session, as an ADK application reads it.

Each skill is reached two ways: through the skill's own agent (its card URL; the message carries
no metadata), and through the whole agent with a request interceptor that puts the skill in
`metadata.skillId`. A question about the calendar sent to the whole agent without a skill goes to
`catholic_qa`, which answers it from the calendar. Env: A2A_BASE, A2A_TOKEN_PRO.
Prints `PASS <check>`, `FAIL <check>: <why>` and `SEEN <case>: <what the session holds>`.
"""

import warnings

import common
from common import BASE, failure_detail, report
from frameworks import CALENDAR, SKILLS, calls, check_calls, check_text, http, skill_agent
from a2a.client import ClientConfig, ClientFactory
from google.adk.a2a.agent.config import A2aRemoteAgentConfig, ParametersConfig, RequestInterceptor
from google.adk.agents.remote_a2a_agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

warnings.filterwarnings("ignore")  # ADK marks its A2A classes experimental on every use


def with_skill(skill):
    """The request interceptor that names the skill: ADK's way to add message metadata."""

    async def before_request(ctx, message, parameters: ParametersConfig):
        message.metadata = {**(message.metadata or {}), "skillId": skill}
        return message, parameters

    return A2aRemoteAgentConfig(request_interceptors=[RequestInterceptor(before_request=before_request)])


async def ask(agent, text):
    """Runs `agent` on `text` in a new in-memory session; returns the text of the agent's events
    the session kept (partial events are not kept) and any error they carry."""
    runner = InMemoryRunner(agent=agent, app_name="interop")
    session = await runner.session_service.create_session(app_name="interop", user_id="reader")
    message = types.Content(role="user", parts=[types.Part(text=text)])
    async for _ in runner.run_async(user_id="reader", session_id=session.id, new_message=message):
        pass
    session = await runner.session_service.get_session(app_name="interop", user_id="reader", session_id=session.id)
    kept = [e for e in session.events if e.author == agent.name]
    errors = [e.error_message for e in kept if e.error_message]
    texts = [p.text for e in kept if e.content for p in e.content.parts or [] if p.text and not p.thought]
    await runner.close()
    return "".join(texts), errors


def factory():
    return ClientFactory(ClientConfig(httpx_client=http(), streaming=True))


async def case(label, agent, text, must_hold, path, skill_sent):
    since = len(calls)
    try:
        answer, errors = await ask(agent, text)
        print(f"SEEN {label}: {answer[:160]!r}")
        if errors:
            report(f"{label}: the session holds the answer", False, f"errors {errors}")
        else:
            check_text(f"{label}: the session holds the answer", answer, must_hold)
        check_calls(f"{label}: 0.3 wire to {path}", since, path, skill_sent)
    except Exception:  # noqa: BLE001
        report(f"{label}: the session holds the answer", False, failure_detail())


async def main():
    for skill, spec in SKILLS.items():
        agent = RemoteA2aAgent(
            name=skill,
            agent_card=f"{skill_agent(skill).rstrip('/')}/.well-known/agent-card.json",
            a2a_client_factory=factory(),
        )
        await case(f"{skill} through its own agent", agent, spec["ask"], spec["holds"], f"/agents/{skill}", None)
    for skill, spec in SKILLS.items():
        agent = RemoteA2aAgent(
            name=skill,
            agent_card=f"{BASE}/.well-known/agent-card.json",
            a2a_client_factory=factory(),
            config=with_skill(skill),
        )
        await case(f"{skill} through an interceptor", agent, spec["ask"], spec["holds"], "/api/v1/a2a", skill)
    agent = RemoteA2aAgent(name="magisterium", agent_card=f"{BASE}/.well-known/agent-card.json", a2a_client_factory=factory())
    await case("a calendar question without a skill", agent, CALENDAR["ask"], CALENDAR["holds"], "/api/v1/a2a", None)


common.run(main)
