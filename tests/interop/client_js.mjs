// Drives the server with @a2a-js/sdk, as its documentation shows, and asserts what the SDK
// surfaces to its caller. Usage: node client_js.mjs <sdk folder> <mode>
//   default  - @a2a-js/sdk 1.x with default settings: reads supportedInterfaces, speaks A2A 1.0
//   legacy   - @a2a-js/sdk 1.x with legacyCompat, given the card's 0.3 fields: speaks A2A 0.3
//   rest     - @a2a-js/sdk 1.x with the REST transport preferred: speaks A2A 1.0 over HTTP+JSON,
//              and also lists tasks and meets the errors only that binding shows
//   native03 - @a2a-js/sdk 0.3.x: speaks A2A 0.3
// Env: A2A_BASE, A2A_TOKEN_PRO, A2A_TOKEN_FREE, A2A_TOKEN_LIMITED.
// Prints `PASS <check>`, `FAIL <check>: <why>`, and `SEEN <case> <what the caller got>`.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { createHash, createPublicKey, randomBytes, randomUUID, verify } from 'node:crypto';
import { createServer } from 'node:http';

const [sdkDir, mode] = process.argv.slice(2);
const require = createRequire(resolve(sdkDir, 'package.json'));
const sdk = require('@a2a-js/sdk/client');
const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
  RestTransportFactory, createAuthenticatingFetchWithRetry } = sdk;
const base = process.env.A2A_BASE;
const SKILLS = ['catholic_qa', 'document_search', 'document_fetch', 'liturgical_readings', 'saints_of_the_day'];
const INPUTS = {
  catholic_qa: 'What does the Church teach about grace?',
  document_search: 'grace',
  document_fetch: 'catechism',
  liturgical_readings: '2026-12-08',
  saints_of_the_day: '2026-12-08',
};
const rest = mode === 'rest';
const v1 = mode === 'default' || rest;
const legacy = mode === 'legacy';
// A tenant: the SDK puts it in front of the resource path, which the server serves too.
const TENANT = 'acme';

let failures = 0;
function pass(name) { console.log(`PASS ${name}`); }
function fail(name, why) { failures += 1; console.log(`FAIL ${name}: ${why}`); }
function check(name, condition, why) { if (condition) pass(name); else fail(name, why); }

// [JSON-RPC method, A2A-Version header] of every call, to check which wire the SDK chose; a call
// of the HTTP+JSON binding is named by the 1.0 method its resource URL stands for.
const calls = [];
// The bindings the calls went through: 'jsonrpc', 'http+json'.
const bindings = new Set();
const REST_PATH = '/api/v1/a2a/rest';
const REST_METHODS = [
  ['POST', /^\/message:send$/, 'SendMessage'],
  ['POST', /^\/message:stream$/, 'SendStreamingMessage'],
  ['GET', /^\/tasks$/, 'ListTasks'],
  ['GET', /^\/tasks\/[^/:]+$/, 'GetTask'],
  ['POST', /^\/tasks\/[^/:]+:cancel$/, 'CancelTask'],
  ['GET|POST', /^\/tasks\/[^/:]+:subscribe$/, 'SubscribeToTask'],
  ['POST', /^\/tasks\/[^/:]+\/pushNotificationConfigs$/, 'CreateTaskPushNotificationConfig'],
  ['GET', /^\/extendedAgentCard$/, 'GetExtendedAgentCard'],
];
// The other push-config URLs, named by their shape (the SDKs' JSON-RPC runs do not call them).
const REST_SHAPES = [
  [/^\/tasks\/[^/:]+\/pushNotificationConfigs$/, '/tasks/{task}/pushNotificationConfigs'],
  [/^\/tasks\/[^/:]+\/pushNotificationConfigs\/[^/]+$/, '/tasks/{task}/pushNotificationConfigs/{config}'],
];
// The 1.0 method an HTTP+JSON request stands for (`REST <verb> <path>` for any other).
function restMethod(verb, path) {
  const below = path.slice(REST_PATH.length);
  const row = REST_METHODS.find(([verbs, pattern]) => verbs.split('|').includes(verb) && pattern.test(below));
  const shape = REST_SHAPES.find(([pattern]) => pattern.test(below))?.[1] ?? below;
  return row ? row[2] : `REST ${verb} ${shape}`;
}
const STREAM_PAYLOADS = ['task', 'message', 'statusUpdate', 'artifactUpdate'];
// One entry per event stream the server answered: the request's JSON-RPC method and id, and the
// id of every event, read from a copy of the bytes the SDK itself reads (`done` settles at the
// stream's end).
const streams = [];
// On the HTTP+JSON binding, which has no envelope, the entry's `id` is undefined and each event's
// is its payload's member (`task`, `statusUpdate`, ...), as a bare StreamResponse has exactly one.
async function recordingFetch(url, init = {}) {
  let sent;
  const verb = (init.method ?? 'GET').toUpperCase();
  const path = new URL(String(url)).pathname;
  const viaRest = path.startsWith(REST_PATH);
  if (viaRest) {
    bindings.add('http+json');
    sent = { method: restMethod(verb, path) };
    calls.push([sent.method, new Headers(init.headers).get('a2a-version')]);
  } else if (verb === 'POST') {
    bindings.add('jsonrpc');
    sent = JSON.parse(String(init.body ?? '{}'));
    calls.push([sent.method, new Headers(init.headers).get('a2a-version')]);
  }
  const response = await fetch(url, init);
  if (!sent || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const [mine, theirs] = response.body.tee();
  const entry = { method: sent.method, id: sent.id, eventIds: [], rest: viaRest };
  entry.done = new Response(mine).text().then((text) => {
    for (const block of text.split(/\r\n\r\n|\n\n|\r\r/)) {
      const data = block.split(/\r\n|\n|\r/).filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''));
      if (!data.length) continue;
      const body = JSON.parse(data.join('\n'));
      entry.eventIds.push(viaRest ? Object.keys(body).sort().join('|') : body.id);
    }
  });
  streams.push(entry);
  return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers });
}

// The documented way to send a bearer token: an authenticating fetch around a plain one.
function authFetch(token) {
  const handler = {
    headers: async () => (token ? { Authorization: `Bearer ${token}` } : {}),
    shouldRetryWithHeaders: async () => undefined,
  };
  return createAuthenticatingFetchWithRetry(recordingFetch, handler);
}

// `clientConfig` as the SDK documents it, e.g. `{ polling: true }` for non-blocking sends.
async function client(token, cardPath = '/.well-known/agent-card.json', clientConfig = {}) {
  const fetchImpl = authFetch(token);
  const compat = legacy ? { legacyCompat: { enabled: true } } : {};
  const resolver = new DefaultAgentCardResolver({ fetchImpl, ...compat });
  // The REST transport preferred over the card's order (which lists JSON-RPC first).
  const preferRest = rest ? {
    transports: [new RestTransportFactory({ fetchImpl }), new JsonRpcTransportFactory({ fetchImpl })],
    preferredTransports: ['HTTP+JSON'],
  } : { transports: [new JsonRpcTransportFactory({ fetchImpl, ...compat })] };
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    ...preferRest,
    cardResolver: resolver,
    clientConfig,
  }));
  if (!legacy) return factory.createFromUrl(base, cardPath);
  // A 1.x client with legacyCompat still picks the 1.0 interface when the card lists one; a
  // client that only has the 0.3 fields of the card (a cached 0.3 card, a 0.3 gateway) is the
  // case this mode covers, so the card is handed over without supportedInterfaces.
  const card = await (await fetchImpl(`${base}${cardPath}`)).json();
  delete card.supportedInterfaces;
  return factory.createFromAgentCard(card);
}

function message(skillId, text, parts) {
  if (parts) return { messageId: randomUUID(), role: 1, parts, metadata: { skillId } };
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

// The lifecycle checks read events in one form, whatever the SDK:
//   {kind: 'task', state} | {kind: 'status', state, final (null on 1.0, which has none)}
//   | {kind: 'artifact', artifactId, texts, append, last}
// with states spelt as on the 0.3 wire ('working', 'completed', ...).
const spelt = (s) => (typeof s === 'number' ? stateName(s).toLowerCase().replace('_', '-') : s);
const textsOf = (parts) => (mode === 'native03'
  ? parts.filter((p) => p.kind === 'text').map((p) => p.text)
  : parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value));
function neutral(ev) {
  const [kind, value] = mode === 'native03' ? [ev.kind, ev] : [ev.payload?.$case, ev.payload?.value];
  switch (kind) {
    case 'task': return { kind: 'task', state: spelt(value.status.state), taskId: value.id };
    case 'status-update': case 'statusUpdate':
      return { kind: 'status', state: spelt(value.status.state), final: value.final ?? null, taskId: value.taskId };
    case 'artifact-update': case 'artifactUpdate':
      return { kind: 'artifact', artifactId: value.artifact.artifactId, texts: textsOf(value.artifact.parts),
        append: !!value.append, last: !!value.lastChunk, taskId: value.taskId };
    default: return { kind: String(kind) };
  }
}
const storedText = (task) => {
  const artifact = task.artifacts?.[0];
  return [artifact?.artifactId, artifact ? textsOf(artifact.parts).join('') : ''];
};
const TERMINAL_STATES = ['completed', 'failed', 'canceled', 'rejected'];

// One stream's events: a working status, the answer as text deltas (the first not appended, the
// others appended, none marked last) that start the stored text, then the whole stored artifact
// as one last update that is not appended, and last a final status in `endState`; every event
// under the request's id (which the SDK checks too).
async function checkStream(label, events, stored, entry, endState = 'completed') {
  const shown = JSON.stringify(events).slice(0, 400);
  check(`${label}: a working status`, events.some((e) => e.kind === 'status' && e.state === 'working'), `events ${shown}`);
  if (endState === 'completed') {
    const pieces = events.filter((e) => e.kind === 'artifact');
    const deltas = pieces.slice(0, -1);
    const whole = pieces.at(-1);
    const [artifactId, text] = storedText(stored);
    const streamed = deltas.flatMap((e) => e.texts).join('');
    const problems = [];
    if (!deltas.some((e) => e.texts.length)) problems.push(`the answer came in ${pieces.length} pieces, not streamed`);
    if (deltas.some((e, i) => e.append !== (i > 0) || e.last)) problems.push('the deltas are not appended after the first, or one is marked last');
    if (!whole || whole.append || !whole.last) problems.push('the last update is not the whole artifact (append false, lastChunk true)');
    if (pieces.some((e) => e.artifactId !== artifactId)) problems.push(`a piece of another artifact than ${artifactId}`);
    if (!text.startsWith(streamed) || !text.includes('[1]')) problems.push(`deltas join to ${JSON.stringify(streamed)}, the stored text is ${JSON.stringify(text)}`);
    if (whole && whole.texts.join('') !== text) problems.push(`the last update holds ${JSON.stringify(whole.texts)}, the stored text is ${JSON.stringify(text)}`);
    check(`${label}: text deltas, then the whole stored text`, !problems.length, problems.join('; '));
  }
  const last = events.at(-1) ?? {};
  const finals = events.filter((e) => e.kind === 'status').map((e) => e.final);
  check(`${label}: ends ${endState}`, last.kind === 'status' && last.state === endState
    && (finals.at(-1) === null || finals.every((f, i) => f === (i === finals.length - 1))),
  `last event ${JSON.stringify(last)}, finals ${finals}`);
  await entry?.done;
  if (entry?.rest) {
    check(`${label}: every event a bare StreamResponse`, entry.eventIds.length === events.length
      && entry.eventIds.every((k) => STREAM_PAYLOADS.includes(k)), `events ${entry.eventIds}, SDK yielded ${events.length}`);
    return;
  }
  check(`${label}: every event under the request id`, entry !== undefined
    && entry.eventIds.length === events.length && entry.eventIds.every((id) => id === entry.id),
  `request ${entry?.id}, events ${entry?.eventIds}, SDK yielded ${events.length}`);
}

const sleep = (ms) => new Promise((done) => { setTimeout(done, ms); });
const CATHOLIC_QA = INPUTS.catholic_qa;

// Streaming, resubscribing, polling and cancelling a `catholic_qa` task that the slow answering
// backend keeps working for a few seconds, as the SDK's documentation shows.
async function lifecycle(pro) {
  const streaming = await client(pro);
  const polling = await client(pro, '/.well-known/agent-card.json', { polling: true });

  try {
    const events = [];
    for await (const ev of streaming.sendMessageStream({ message: message('catholic_qa', CATHOLIC_QA) })) events.push(neutral(ev));
    const entry = streams.at(-1);
    const stored = await streaming.getTask({ id: events[0].taskId });
    await checkStream('stream', events, stored, entry);
  } catch (e) {
    fail('stream', e.stack ?? e);
  }

  try {
    const sent = await polling.sendMessage({ message: message('catholic_qa', CATHOLIC_QA) });
    const started = spelt(sent.status.state);
    check('non-blocking send answers before the end', ['submitted', 'working'].includes(started), started);
    let got = sent;
    let polls = 0;
    const deadline = Date.now() + 30_000;
    do {
      await sleep(200);
      got = await polling.getTask({ id: sent.id });
      polls += 1;
    } while (!TERMINAL_STATES.includes(spelt(got.status.state)) && Date.now() < deadline);
    const [, text] = storedText(got);
    check('non-blocking: tasks/get polled until completed', spelt(got.status.state) === 'completed' && polls > 1
      && text.includes('[1]'), `state ${spelt(got.status.state)} after ${polls} polls, text ${JSON.stringify(text.slice(0, 200))}`);
  } catch (e) {
    fail('non-blocking', e.stack ?? e);
  }

  try {
    const sent = await polling.sendMessage({ message: message('catholic_qa', CATHOLIC_QA) });
    const started = spelt(sent.status.state);
    const events = [];
    for await (const ev of streaming.resubscribeTask({ id: sent.id })) events.push(neutral(ev));
    const entry = streams.at(-1);
    const stored = await streaming.getTask({ id: sent.id });
    check('resubscribe to a working task', ['submitted', 'working'].includes(started), started);
    await checkStream('resubscribe', events, stored, entry);
  } catch (e) {
    fail('resubscribe', e.stack ?? e);
  }

  try {
    const events = [];
    let canceled;
    let entry;
    for await (const ev of streaming.sendMessageStream({ message: message('catholic_qa', CATHOLIC_QA) })) {
      events.push(neutral(ev));
      if (!canceled && events.at(-1).kind === 'artifact') {
        entry = streams.at(-1);
        canceled = await streaming.cancelTask({ id: events.at(-1).taskId });
      }
    }
    check('cancel a working task', canceled && spelt(canceled.status.state) === 'canceled', JSON.stringify(canceled)?.slice(0, 300));
    await checkStream('cancel', events, null, entry, 'canceled');
    const got = await streaming.getTask({ id: events[0].taskId });
    check('tasks/get after cancel', spelt(got.status.state) === 'canceled', spelt(got.status.state));
  } catch (e) {
    fail('cancel', e.stack ?? e);
  }
}

// A webhook receiver on loopback: a real HTTP server in this process, keeping the headers and
// JSON body of every POST it is sent, and answering 200.
async function receiver() {
  const received = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => { chunks.push(chunk); });
    req.on('end', () => {
      received.push([req.headers, Buffer.concat(chunks)]);
      res.writeHead(200).end();
    });
  });
  await new Promise((listening) => { server.listen(0, '127.0.0.1', listening); });
  server.unref();
  return { url: `http://127.0.0.1:${server.address().port}/webhook`, received };
}

// The task id and state a notification carries: the Task itself (0.3), or a Task or status
// update wrapped as a 1.0 StreamResponse; states in their 0.3 spelling.
function pushed(raw) {
  let body;
  try { body = JSON.parse(raw); } catch { return [null, null]; }
  if (!body || typeof body !== 'object') return [null, null];
  const inner = body.task ?? body.statusUpdate ?? body;
  const state = String(inner.status?.state ?? '').replace(/^TASK_STATE_/, '').toLowerCase().replace('_', '-');
  return ['id' in inner ? inner.id : inner.taskId, state];
}

// What is wrong with a notification's `Authorization` JWT, verified as docs/security.md tells a
// receiver to: ES256 with the key of its `kid` from the server's JWKS, `aud` this receiver's
// URL, `request_body_sha256` the SHA-256 of the raw body; [] when nothing is.
async function jwtProblems(authorization, url, body) {
  const [header, payload, signature] = String(authorization ?? '').replace(/^Bearer /, '').split('.');
  if (!signature) return [`not a bearer JWT: ${authorization}`];
  const decode = (part) => JSON.parse(Buffer.from(part, 'base64url').toString());
  const [head, claims] = [decode(header), decode(payload)];
  const jwks = await (await fetch(`${base}/.well-known/jwks.json`)).json();
  const jwk = jwks.keys?.find((k) => k.kid === head.kid);
  const problems = [];
  if (head.alg !== 'ES256' || !jwk) problems.push(`alg ${head.alg}, kid ${head.kid} not in the JWKS`);
  else if (!verify('sha256', Buffer.from(`${header}.${payload}`), { key: createPublicKey({ key: jwk, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'))) {
    problems.push('the signature does not verify');
  }
  if (claims.aud !== url) problems.push(`aud ${claims.aud}`);
  if (claims.request_body_sha256 !== createHash('sha256').update(body).digest('hex')) problems.push('request_body_sha256 is not the body\'s');
  return problems;
}

// The receiver got the task completed, with the configured token and a valid JWT.
async function checkPush(label, webhook, taskId, token) {
  const deadline = Date.now() + 30_000;
  let found;
  while (!found && Date.now() < deadline) {
    found = webhook.received.find(([, body]) => {
      const [id, state] = pushed(body);
      return id === taskId && TERMINAL_STATES.includes(state);
    });
    if (!found) await sleep(100);
  }
  if (!found) {
    fail(`${label}: the terminal task pushed with the token`,
      `nothing terminal for ${taskId}; seen ${JSON.stringify(webhook.received.map(([, b]) => pushed(b)))}`);
    return;
  }
  const [headers, body] = found;
  const problems = await jwtProblems(headers.authorization, webhook.url, body);
  if (pushed(body)[1] !== 'completed') problems.push(`state ${pushed(body)[1]}`);
  if (headers['x-a2a-notification-token'] !== token) problems.push(`token ${headers['x-a2a-notification-token']}`);
  check(`${label}: the terminal task pushed with the token`, !problems.length,
    `${problems.join('; ')}; headers ${JSON.stringify(headers)}`);
}

// Push notifications to a receiver this program runs on loopback: configured inline on a
// non-blocking send, and through the SDK's create/set method on a task already working.
async function push(pro) {
  const webhook = await receiver();
  const polling = await client(pro, '/.well-known/agent-card.json', { polling: true });
  const token = () => randomBytes(16).toString('base64url');
  try {
    const inline = token();
    const configuration = mode === 'native03'
      ? { pushNotificationConfig: { url: webhook.url, token: inline } }
      : { taskPushNotificationConfig: { url: webhook.url, token: inline } };
    const sent = await polling.sendMessage({ message: message('catholic_qa', CATHOLIC_QA), configuration });
    await checkPush('push configured on the send', webhook, sent.id, inline);
  } catch (e) {
    fail('push configured on the send', e.stack ?? e);
  }
  try {
    const later = token();
    const sent = await polling.sendMessage({ message: message('catholic_qa', CATHOLIC_QA) });
    const config = mode === 'native03'
      ? await polling.setTaskPushNotificationConfig({ taskId: sent.id, pushNotificationConfig: { url: webhook.url, token: later } })
      : await polling.createTaskPushNotificationConfig({ taskId: sent.id, url: webhook.url, token: later });
    const url = mode === 'native03' ? config.pushNotificationConfig?.url : config.url;
    check('push config set for a working task', config.taskId === sent.id && url === webhook.url, JSON.stringify(config));
    await checkPush('push config set', webhook, sent.id, later);
    if (rest) await pushConfigs(polling, config);
  } catch (e) {
    fail('push config set', e.stack ?? e);
  }
}

// The other push-config calls on a task's config: get, list, delete, then get again.
async function pushConfigs(c, config) {
  const { taskId, id } = config;
  const got = await c.getTaskPushNotificationConfig({ taskId, id });
  let listed = await c.listTaskPushNotificationConfig({ taskId });
  check('push config get and list', got.id === id && got.url === config.url
    && listed.configs.map((x) => x.id).join() === id, `got ${JSON.stringify(got)}, listed ${JSON.stringify(listed)}`);
  await c.deleteTaskPushNotificationConfig({ taskId, id });
  listed = await c.listTaskPushNotificationConfig({ taskId });
  check('push config deleted', listed.configs.length === 0, JSON.stringify(listed));
  await expectError('deleted push config', () => c.getTaskPushNotificationConfig({ taskId, id }), EXPECTED.deletedConfig);
}

function caught(error) {
  const code = error.envelopeCode ?? error.errorResponse?.error?.code ?? error.statusCode;
  const data = error.data ?? error.errorResponse?.error?.data ?? error.metadata;
  return { cls: error.constructor?.name ?? 'Error', name: error.name, code, data, reason: error.reason,
    headers: error.headers, message: String(error.message) };
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
  const detail = rest ? ` reason=${error.reason ?? '-'} data=${JSON.stringify(error.data)?.slice(0, 120)}` : '';
  console.log(`SEEN ${name}: ${error.cls} code=${error.code ?? '-'}${detail} message=${JSON.stringify(error.message.slice(0, 160))}`);
  const problems = [];
  if (error.cls !== expected.cls) problems.push(`class ${error.cls}, expected ${expected.cls}`);
  if (expected.code !== undefined && error.code !== expected.code) problems.push(`code ${error.code}, expected ${expected.code}`);
  if (expected.message && !expected.message.test(error.message)) problems.push(`message ${JSON.stringify(error.message)} does not match ${expected.message}`);
  if (expected.reason) {
    // A REST error class names its reason (the ErrorInfo's, when the SDK knows it).
    const reason = rest ? error.reason : (Array.isArray(error.data) ? error.data[0]?.reason : error.data?.name);
    if (reason !== expected.reason) problems.push(`reason ${reason}, expected ${expected.reason}`);
  }
  if (expected.retryAfter && !/^\d+$/.test(error.headers?.['retry-after'] ?? '')) problems.push(`no Retry-After in ${JSON.stringify(error.headers)}`);
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
  // On HTTP+JSON, "code" is the HTTP status; a reason the SDK does not know gives its generic
  // RestA2AErrorImpl without the ErrorInfo.
  rest: {
    cancel: { cls: 'RestTaskNotCancelableError', code: 400, reason: 'TASK_NOT_CANCELABLE' },
    unknownTask: { cls: 'RestTaskNotFoundError', code: 404, reason: 'TASK_NOT_FOUND' },
    unknownSkill: { cls: 'RestA2AErrorImpl', code: 400, message: /skill not found: no_such_skill; available skills: catholic_qa/ },
    free: { cls: 'RestA2AErrorImpl', code: 403 },
    limited: { cls: 'RestA2AErrorImpl', code: 429, retryAfter: true },
    badToken: { cls: 'RestA2AErrorImpl', code: 401 },
    badParams: { cls: 'RestRequestMalformedError', code: 400, reason: 'INVALID_PARAMS' },
    tooLarge: { cls: 'RestA2AErrorImpl', code: 413, message: /larger than the limit/ },
    filePart: { cls: 'RestContentTypeNotSupportedError', code: 400, reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
    deletedConfig: { cls: 'RestRequestMalformedError', code: 400, reason: 'INVALID_PARAMS', message: /has no push notification config/ },
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
  if (rest) await restOnly(pro, main, done);

  await lifecycle(pro);
  await push(pro);

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
  // The SDK reads the authenticated extended card once the public card declares it.
  const wire = {
    default: ['CancelTask,CreateTaskPushNotificationConfig,GetExtendedAgentCard,GetTask,SendMessage,SendStreamingMessage,SubscribeToTask', '1.0'],
    rest: [['CancelTask', 'CreateTaskPushNotificationConfig', 'GetExtendedAgentCard', 'GetTask', 'ListTasks',
      'REST DELETE /tasks/{task}/pushNotificationConfigs/{config}', 'REST GET /tasks/{task}/pushNotificationConfigs',
      'REST GET /tasks/{task}/pushNotificationConfigs/{config}', `REST POST /${TENANT}/message:send`,
      'SendMessage', 'SendStreamingMessage', 'SubscribeToTask'].sort().join(), '1.0'],
    legacy: ['agent/getAuthenticatedExtendedCard,message/send,message/stream,tasks/cancel,tasks/get,tasks/pushNotificationConfig/set,tasks/resubscribe', '0.3'],
    native03: ['agent/getAuthenticatedExtendedCard,message/send,message/stream,tasks/cancel,tasks/get,tasks/pushNotificationConfig/set,tasks/resubscribe', ''],
  }[mode];
  const binding = rest ? 'http+json' : 'jsonrpc';
  check(rest ? 'HTTP+JSON binding, 1.0' : `${v1 ? '1.0' : '0.3'} wire`, methods === wire[0] && versions === wire[1]
    && (!rest || [...bindings].join() === binding),
  `methods ${methods}, A2A-Version ${versions || '(none)'}, bindings ${[...bindings]}`);
}

// What only the HTTP+JSON run checks: which transport each setting picks, ListTasks, and the
// errors a client meets through the SDK's own calls beyond the ones both bindings share (bad
// params, a body over the size limit, a route the server does not serve, a file part).
async function restOnly(pro, main, done) {
  check('binding: HTTP+JSON preferred', main.transport?.protocolName === 'HTTP+JSON'
    && main.transport.endpoint.endsWith(REST_PATH), `transport ${main.transport?.protocolName} ${main.transport?.endpoint}`);
  try {
    const fetchImpl = authFetch(pro);
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory({ fetchImpl }), new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }));
    const ordered = await factory.createFromUrl(base);
    check('binding: both offered, the card\'s order', ordered.transport?.protocolName === 'JSONRPC',
      `transport ${ordered.transport?.protocolName}`);
  } catch (e) {
    fail('binding: both offered, the card\'s order', e.stack ?? e);
  }
  try {
    const first = await main.listTasks({ pageSize: 2 });
    const second = await main.listTasks({ pageSize: 2, pageToken: first.nextPageToken });
    const ids = [...first.tasks, ...second.tasks].map((t) => t.id);
    check('list tasks: two pages', first.tasks.length === 2 && first.nextPageToken && second.tasks.length === 2
      && new Set(ids).size === 4, `first ${first.tasks.map((t) => t.id)} next ${first.nextPageToken}, second ${second.tasks.map((t) => t.id)}`);
    const finished = await main.listTasks({ status: done.status.state, pageSize: 100 });
    check('list tasks: by state', finished.tasks.some((t) => t.id === done.id)
      && finished.tasks.every((t) => t.status.state === done.status.state),
    JSON.stringify(finished.tasks.map((t) => [t.id, t.status.state])));
  } catch (e) {
    fail('list tasks', e.stack ?? e);
  }
  const saints = (parts) => ({ message: message('saints_of_the_day', 'today', parts) });
  await expectError('bad params (a message without parts)', () => main.sendMessage(saints([])), EXPECTED.badParams);
  await expectError('body over the size limit', () => main.sendMessage({ message: message('saints_of_the_day', 'x'.repeat(1 << 20)) }), EXPECTED.tooLarge);
  try {
    const task = await main.sendMessage({ ...saints(), tenant: TENANT });
    check('a message below a tenant (every route is served below one; one tenant)',
      task && task.status?.state === 3, `unexpected answer ${JSON.stringify(task).slice(0, 300)}`);
  } catch (e) {
    fail('a message below a tenant', e.stack ?? e);
  }
  const file = [{ content: { $case: 'url', value: 'https://example.org/a.pdf' }, mediaType: 'application/pdf' }];
  await expectError('file part', () => main.sendMessage(saints(file)), EXPECTED.filePart);
}

main().then(() => process.exit(failures ? 1 : 0), (e) => {
  console.log(`FAIL client: ${e.stack ?? e}`);
  process.exit(1);
});
