"""Drives the server with Strands Agents (`strands-agents[a2a]`): an `A2AAgent` per skill, called
as its documentation shows (`await agent.invoke_async(prompt)`), no language model. Strands has
no way to add message metadata, so each skill is reached through its own agent (the base URL
`/agents/{skill}`, whose card Strands finds at the well-known path); a question about the
calendar sent to the whole agent goes to `catholic_qa`, which answers it from the calendar.
The answer is read from the `AgentResult`, as a Strands application reads it.
Env: A2A_BASE, A2A_TOKEN_PRO. Prints `PASS <check>`, `FAIL <check>: <why>` and `SEEN <case>: ...`.
"""

import common
from common import BASE, failure_detail, report
from frameworks import CALENDAR, SKILLS, calls, check_calls, check_text, http, skill_agent
from a2a.client import ClientConfig
from strands.agent.a2a_agent import A2AAgent


async def case(label, endpoint, text, must_hold, path):
    since = len(calls)
    try:
        async with http() as client:
            agent = A2AAgent(endpoint, client_config=ClientConfig(httpx_client=client))
            card = await agent.get_agent_card()
            result = await agent.invoke_async(text)
        answer = str(result)
        print(f"SEEN {label}: {answer[:160]!r} (agent {card.name!r})")
        check_text(f"{label}: the result holds the answer", answer, must_hold)
        report(
            f"{label}: completed",
            result.stop_reason == "end_turn" and result.state.get("a2a_task_state") == "completed",
            f"stop reason {result.stop_reason}, state {result.state}",
        )
        check_calls(f"{label}: 0.3 wire to {path}", since, path, None)
    except Exception:  # noqa: BLE001
        report(f"{label}: the result holds the answer", False, failure_detail())


async def main():
    for skill, spec in SKILLS.items():
        await case(f"{skill} through its own agent", skill_agent(skill), spec["ask"], spec["holds"], f"/agents/{skill}")
    await case("a calendar question without a skill", BASE, CALENDAR["ask"], CALENDAR["holds"], "/api/v1/a2a")


common.run(main)
