// Drives the server with Google ADK for JavaScript (`@google/adk`): a `RemoteA2AAgent` run by an
// `InMemoryRunner` with its in-memory session service, no language model. The answer is read
// back from the session, as an ADK application reads it.
// Each skill is reached two ways: through the skill's own agent (its base URL: ADK appends the
// well-known card path; the message carries no skill), and through the whole agent with a
// `beforeRequestCallbacks` entry that puts the skill in `metadata.skillId`. A question about the
// calendar sent to the whole agent without a skill goes to `catholic_qa`, which answers it from
// the calendar. Usage: node client_adk.mjs <framework folder>. Env: A2A_BASE, A2A_TOKEN_PRO.
// Prints `PASS <check>`, `FAIL <check>: <why>` and `SEEN <case>: <what the session holds>`.
import {
  CASES, base, calls, check, checkCalls, checkText, detail, failed, load, serverFetch, skillAgent,
} from './frameworks.mjs';

const [folder] = process.argv.slice(2);
const { InMemoryRunner } = await load(folder, '@google/adk');
const { RemoteA2AAgent } = await load(folder, '@google/adk', './a2a');
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } = await load(folder, '@a2a-js/sdk', './client');

// The bearer token goes through the A2A SDK's transport, given to ADK as its client factory.
const clientFactory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl: serverFetch(fetch) })],
}));

// A text part that is the JSON of an object: ADK turns an A2A data part (the answer's structured
// form) into a text part holding its JSON.
function isDataJson(text) {
  try {
    const value = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

// Runs `agent` on `text` in a new in-memory session; the prose of the agent's events the session
// kept (its text parts that are not a data part's JSON), how many data parts came as JSON text,
// and any error they carry.
async function ask(agent, text) {
  const runner = new InMemoryRunner({ agent, appName: 'interop' });
  const session = await runner.sessionService.createSession({ appName: 'interop', userId: 'reader' });
  for await (const _ of runner.runAsync({ userId: 'reader', sessionId: session.id,
    newMessage: { role: 'user', parts: [{ text }] } })) { /* the session keeps what counts */ }
  const kept = (await runner.sessionService.getSession({ appName: 'interop', userId: 'reader', sessionId: session.id }))
    .events.filter((e) => e.author === agent.name);
  const errors = kept.filter((e) => e.errorMessage).map((e) => e.errorMessage);
  const texts = kept.filter((e) => !e.partial).flatMap((e) => e.content?.parts ?? [])
    .filter((p) => p.text && !p.thought).map((p) => p.text);
  return [texts.filter((t) => !isDataJson(t)).join(''), texts.filter(isDataJson).length, errors];
}

async function run(label, agent, text, mustHold, path, skillSent) {
  const since = calls.length;
  try {
    const [answer, dataParts, errors] = await ask(agent, text);
    console.log(`SEEN ${label}: ${JSON.stringify(answer.slice(0, 160))} and ${dataParts} data part(s) as JSON text`);
    if (errors.length) check(`${label}: the session holds the answer`, false, `errors ${JSON.stringify(errors)}`);
    else checkText(`${label}: the session holds the answer`, answer, mustHold);
    checkCalls(`${label}: 0.3 wire to ${path}`, since, path, skillSent);
  } catch (e) {
    check(`${label}: the session holds the answer`, false, detail(e));
  }
}

const withSkill = (skill) => [(ctx, params) => {
  params.message.metadata = { ...(params.message.metadata ?? {}), skillId: skill };
}];

try {
  for (const [skill, spec] of Object.entries(CASES.skills)) {
    const agent = new RemoteA2AAgent({ name: skill, agentCard: skillAgent(skill), clientFactory });
    await run(`${skill} through its own agent`, agent, spec.ask, spec.holds, `/agents/${skill}`, null);
  }
  for (const [skill, spec] of Object.entries(CASES.skills)) {
    const agent = new RemoteA2AAgent({ name: skill, agentCard: base, clientFactory, beforeRequestCallbacks: withSkill(skill) });
    await run(`${skill} through beforeRequestCallbacks`, agent, spec.ask, spec.holds, '/api/v1/a2a', skill);
  }
  const agent = new RemoteA2AAgent({ name: 'magisterium', agentCard: base, clientFactory });
  await run('a calendar question without a skill', agent, CASES.calendar_question.ask, CASES.calendar_question.holds, '/api/v1/a2a', null);
} catch (e) {
  check('client', false, detail(e));
}
process.exit(failed() ? 1 : 0);
