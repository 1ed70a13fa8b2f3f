"""What the Python agent-framework clients share: the question each skill is asked and what its
answer's text must hold (framework_cases.json, read by the JavaScript clients too), the record
of every call a framework made (path, JSON-RPC method, A2A-Version header, skillId sent), and
the check of the text a framework handed its caller."""

import json
import os

import httpx
from common import BASE, report

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "framework_cases.json"), encoding="utf-8") as cases_file:
    CASES = json.load(cases_file)
SKILLS = CASES["skills"]
CALENDAR = CASES["calendar_question"]
TOKEN = os.environ["A2A_TOKEN_PRO"]

# (path, JSON-RPC method, A2A-Version header, metadata.skillId of the message) of every POST.
calls = []


async def record(request):
    if request.method == "POST":
        body = json.loads(request.content or b"{}")
        message = (body.get("params") or {}).get("message") or {}
        calls.append(
            (
                request.url.path,
                body.get("method"),
                request.headers.get("a2a-version"),
                (message.get("metadata") or {}).get("skillId"),
            )
        )


def http():
    """An HTTP client that sends the bearer token with every call, as a user of a framework
    sets it up (a default header), and records each call."""
    return httpx.AsyncClient(
        timeout=60,
        headers={"Authorization": f"Bearer {TOKEN}"},
        event_hooks={"request": [record]},
    )


# Each skill's own agent as the main card gives it, in the extension that lists them.
AGENTS = next(
    extension["params"]["agents"]
    for extension in httpx.get(f"{BASE}/.well-known/agent-card.json").json()["capabilities"]["extensions"]
    if extension["uri"].endswith("/skill-agents/v1")
)


def skill_agent(skill):
    """The base URL of a skill's own agent, as the main card gives it."""
    return AGENTS[skill]


def check_text(label, text, must_hold):
    """The text the framework handed its caller holds the answer: every expected piece, it is
    prose, not the JSON of the answer's data part, and it holds the answer once (its opening
    words are not repeated)."""
    missing = [piece for piece in must_hold if piece not in text]
    opening = text.strip()[:40]
    times = text.count(opening) if opening else 0
    report(
        label,
        text.strip() != "" and not missing and not text.lstrip().startswith(("{", "[")) and times == 1,
        f"missing {missing}, opening {times} times, in {text[:300]!r}",
    )


def check_calls(label, since, path, skill_sent):
    """The calls made since index `since` went to `path` on the 0.3 wire (no A2A-Version header)
    and carried `skill_sent` as metadata.skillId (None: none sent)."""
    made = calls[since:]
    report(
        label,
        made != []
        and all(p == path and v is None and s == skill_sent for p, _, v, s in made)
        and all(m in ("message/send", "message/stream") for _, m, _, _ in made),
        f"calls {made}",
    )
