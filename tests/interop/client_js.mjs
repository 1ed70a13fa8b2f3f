// Drives the server with @a2a-js/sdk, as its documentation shows, and asserts what the SDK
// surfaces to its caller. Usage: node client_js.mjs <sdk folder> <mode>
//   default  - @a2a-js/sdk 1.x with default settings: reads supportedInterfaces, speaks A2A 1.0
//   legacy   - @a2a-js/sdk 1.x with legacyCompat, given the card's 0.3 fields: speaks A2A 0.3
//   native03 - @a2a-js/sdk 0.3.x: speaks A2A 0.3
// Env: A2A_BASE, A2A_TOKEN_PRO, A2A_TOKEN_FREE, A2A_TOKEN_LIMITED.
// Prints `PASS <check>`, `FAIL <check>: <why>`, and `SEEN <case> <what the caller got>`.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { randomUUID } from 'node:crypto';

const [sdkDir, mode] = process.argv.slice(2);
const require = createRequire(resolve(sdkDir, 'package.json'));
const sdk = require('@a2a-js/sdk/client');
const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry } = sdk;
const base = process.env.A2A_BASE;
const SKILLS = ['catholic_qa', 'document_search', 'document_fetch', 'liturgical_readings', 'saints_of_the_day'];
const INPUTS = {
  catholic_qa: 'What does the Church teach about grace?',
  document_search: 'grace',
  document_fetch: 'catechism',
  liturgical_readings: '2026-12-08',
  saints_of_the_day: '2026-12-08',
};
const v1 = mode === 'default';
const legacy = mode === 'legacy';

let failures = 0;
function pass(name) { console.log(`PASS ${name}`); }
function fail(name, why) { failures += 1; console.log(`FAIL ${name}: ${why}`); }
function check(name, condition, why) { if (condition) pass(name); else fail(name, why); }

// [JSON-RPC method, A2A-Version header] of every call, to check which wire the SDK chose.
const calls = [];
async function recordingFetch(url, init = {}) {
  if ((init.method ?? 'GET').toUpperCase() === 'POST') {
    const method = JSON.parse(String(init.body ?? '{}')).method;
    calls.push([method, new Headers(init.headers).get('a2a-version')]);
  }
  return fetch(url, init);
}

// The documented way to send a bearer token: an authenticating fetch around a plain one.
function authFetch(token) {
  const handler = {
    headers: async () => (token ? { Authorization: `Bearer ${token}` } : {}),
    shouldRetryWithHeaders: async () => undefined,
  };
  return createAuthenticatingFetchWithRetry(recordingFetch, handler);
}

async function client(token, cardPath = '/.well-known/agent-card.json') {
  const fetchImpl = authFetch(token);
  const compat = legacy ? { legacyCompat: { enabled: true } } : {};
  const resolver = new DefaultAgentCardResolver({ fetchImpl, ...compat });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl, ...compat })],
    cardResolver: resolver,
  }));
  if (!legacy) return factory.createFromUrl(base, cardPath);
  // A 1.x client with legacyCompat still picks the 1.0 interface when the card lists one; a
  // client that only has the 0.3 fields of the card (a cached 0.3 card, a 0.3 gateway) is the
  // case this mode covers, so the card is handed over without supportedInterfaces.
  const card = await (await fetchImpl(`${base}${cardPath}`)).json();
  delete card.supportedInterfaces;
  return factory.createFromAgentCard(card);
}

function message(skillId, text) {
  if (mode === 'native03') {
    return { kind: 'message', messageId: randomUUID(), role: 'user',
      parts: [{ kind: 'text', text }], metadata: { skillId } };
  }
  return { messageId: randomUUID(), role: 1 /* ROLE_USER */,
    parts: [{ content: { $case: 'text', value: text } }], metadata: { skillId } };
}

const TERMINAL = mode === 'native03'
  ? ['completed', 'failed', 'canceled', 'rejected']
  : [3, 4, 5, 7]; // TASK_STATE_COMPLETED, FAILED, CANCELED, REJECTED
const stateName = (s) => (typeof s === 'number' ? ['UNSPECIFIED', 'SUBMITTED', 'WORKING', 'COMPLETED',
  'FAILED', 'CANCELED', 'INPUT_REQUIRED', 'REJECTED', 'AUTH_REQUIRED'][s] ?? String(s) : s);

function caught(error) {
  const code = error.envelopeCode ?? error.errorResponse?.error?.code;
  const data = error.data ?? error.errorResponse?.error?.data;
  return { cls: error.constructor?.name ?? 'Error', name: error.name, code, data, message: String(error.message) };
}

async function expectError(name, run, expected) {
  let error;
  try {
    const value = await run();
    fail(name, `expected ${expected.cls}, got a result: ${JSON.stringify(value).slice(0, 200)}`);
    return;
  } catch (e) {
    error = caught(e);
  }
  console.log(`SEEN ${name}: ${error.cls} code=${error.code ?? '-'} message=${JSON.stringify(error.message.slice(0, 160))}`);
  const problems = [];
  if (error.cls !== expected.cls) problems.push(`class ${error.cls}, expected ${expected.cls}`);
  if (expected.code !== undefined && error.code !== expected.code) problems.push(`code ${error.code}, expected ${expected.code}`);
  if (expected.message && !expected.message.test(error.message)) problems.push(`message ${JSON.stringify(error.message)} does not match ${expected.message}`);
  if (expected.reason) {
    const reason = Array.isArray(error.data) ? error.data[0]?.reason : error.data?.name;
    if (reason !== expected.reason) problems.push(`reason ${reason}, expected ${expected.reason}`);
  }
  if (problems.length) fail(name, problems.join('; '));
  else pass(name);
}

// What each SDK surfaces for each refusal (see docs/interop-errors.md).
const EXPECTED = {
  default: {
    cancel: { cls: 'JsonRpcTaskNotCancelableError', code: -32002, reason: 'TASK_NOT_CANCELABLE' },
    unknownTask: { cls: 'JsonRpcTaskNotFoundError', code: -32001, reason: 'TASK_NOT_FOUND' },
    unknownSkill: { cls: 'JsonRpcRequestMalformedError', code: -32602, reason: 'SKILL_NOT_FOUND' },
    free: { cls: 'JsonRpcTransportError', code: -32000, reason: 'PLAN_REQUIRED' },
    limited: { cls: 'JsonRpcTransportError', code: -32000, reason: 'RATE_LIMITED' },
    badToken: { cls: 'JsonRpcTransportError', code: -32000, reason: 'UNAUTHORIZED' },
  },
  legacy: {
    cancel: { cls: 'JsonRpcRequestMalformedError', code: -32602, message: /Invalid state transition/ },
    unknownTask: { cls: 'JsonRpcTaskNotFoundError', code: -32001 },
    unknownSkill: { cls: 'JsonRpcTaskNotCancelableError', code: -32002, message: /Skill not found/ },
    free: { cls: 'JsonRpcContentTypeNotSupportedError', code: -32005 },
    limited: { cls: 'JsonRpcPushNotificationNotSupportedError', code: -32003 },
    badToken: { cls: 'JsonRpcUnsupportedOperationError', code: -32004 },
  },
  native03: {
    cancel: { cls: 'JSONRPCTransportError', message: /Invalid state transition/, reason: 'INVALID_PARAMS' },
    unknownTask: { cls: 'TaskNotFoundJSONRPCError', code: -32001 },
    unknownSkill: { cls: 'TaskNotCancelableJSONRPCError', code: -32002, reason: 'SKILL_NOT_FOUND' },
    free: { cls: 'ContentTypeNotSupportedJSONRPCError', code: -32005, reason: 'PLAN_REQUIRED' },
    limited: { cls: 'PushNotificationNotSupportedJSONRPCError', code: -32003, reason: 'RATE_LIMITED' },
    badToken: { cls: 'UnsupportedOperationJSONRPCError', code: -32004, reason: 'UNAUTHORIZED' },
  },
}[mode];

async function main() {
  const pro = process.env.A2A_TOKEN_PRO;
  let main;
  for (const path of ['/.well-known/agent.json', '/.well-known/agent-card.json']) {
    try {
      const c = await client(pro, path);
      const card = await c.getAgentCard();
      const ids = (card.skills ?? []).map((s) => s.id);
      check(`card ${path}`, SKILLS.every((id) => ids.includes(id)), `skills ${ids}`);
      if (mode !== 'native03') {
        check(`wire ${path}`, c.protocolVersion === (v1 ? '1.0' : '0.3'), `client speaks ${c.protocolVersion}`);
      }
      main = c;
    } catch (e) {
      fail(`card ${path}`, e.stack ?? e);
    }
  }
  if (!main) return;
  if (legacy) {
    // With the card as served (it lists a 1.0 interface), legacyCompat still picks 1.0.
    try {
      const fetchImpl = authFetch(pro);
      const compat = { legacyCompat: { enabled: true } };
      const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl, ...compat })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl, ...compat }),
      }));
      const served = await factory.createFromUrl(base);
      check('legacyCompat with the served card picks 1.0', served.protocolVersion === '1.0',
        `client speaks ${served.protocolVersion}`);
    } catch (e) {
      fail('legacyCompat with the served card picks 1.0', e.stack ?? e);
    }
  }

  let done;
  for (const skill of SKILLS) {
    try {
      const task = await main.sendMessage({ message: message(skill, INPUTS[skill]) });
      const ok = task && typeof task.id === 'string' && task.id.length > 0
        && TERMINAL.includes(task.status?.state)
        && task.metadata?.skillId === skill
        && Array.isArray(task.history) && task.history.length === 2
        && (mode !== 'native03' || task.kind === 'task');
      check(`send ${skill}`, ok, `unexpected task ${JSON.stringify(task).slice(0, 300)}`);
      console.log(`SEEN send ${skill}: state=${stateName(task.status?.state)}`);
      const completed = mode === 'native03' ? 'completed' : 3;
      if (!done || (done.status.state !== completed && task.status?.state === completed)) done = task;
    } catch (e) {
      fail(`send ${skill}`, e.stack ?? e);
    }
  }
  if (!done) return;

  try {
    const got = await main.getTask({ id: done.id, historyLength: 1 });
    check('get historyLength=1', got.id === done.id && got.history.length === 1
      && got.status.state === done.status.state, `got ${JSON.stringify(got).slice(0, 300)}`);
  } catch (e) {
    fail('get historyLength=1', e.stack ?? e);
  }

  await expectError('cancel finished task', () => main.cancelTask({ id: done.id }), EXPECTED.cancel);
  await expectError('unknown task', () => main.getTask({ id: randomUUID() }), EXPECTED.unknownTask);
  await expectError('unknown skill', () => main.sendMessage({ message: message('no_such_skill', 'hello') }), EXPECTED.unknownSkill);

  // The card is public, so clients with other tokens resolve it too.
  const free = await client(process.env.A2A_TOKEN_FREE);
  await expectError('free plan', () => free.sendMessage({ message: message('saints_of_the_day', 'today') }), EXPECTED.free);

  const limited = await client(process.env.A2A_TOKEN_LIMITED);
  try {
    const first = await limited.sendMessage({ message: message('saints_of_the_day', 'today') });
    check('limited first call', TERMINAL.includes(first.status?.state), `state ${first.status?.state}`);
  } catch (e) {
    fail('limited first call', e.stack ?? e);
  }
  await expectError('rate limit exhausted', () => limited.sendMessage({ message: message('saints_of_the_day', 'today') }), EXPECTED.limited);

  const anonymous = await client('not-a-valid-token');
  await expectError('invalid token', () => anonymous.sendMessage({ message: message('saints_of_the_day', 'today') }), EXPECTED.badToken);

  const methods = [...new Set(calls.map(([m]) => m))].sort().join(',');
  const versions = [...new Set(calls.map(([, v]) => v))].sort().join(',');
  const wire = {
    default: ['CancelTask,GetTask,SendMessage', '1.0'],
    legacy: ['message/send,tasks/cancel,tasks/get', '0.3'],
    native03: ['message/send,tasks/cancel,tasks/get', ''],
  }[mode];
  check(`${v1 ? '1.0' : '0.3'} wire`, methods === wire[0] && versions === wire[1],
    `methods ${methods}, A2A-Version ${versions || '(none)'}`);
}

main().then(() => process.exit(failures ? 1 : 0), (e) => {
  console.log(`FAIL client: ${e.stack ?? e}`);
  process.exit(1);
});
