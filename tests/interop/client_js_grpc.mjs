// Drives the server's gRPC binding with @a2a-js/sdk 1.x's gRPC transport (on @grpc/grpc-js), as
// its documentation shows: the transport factory offered alone, so the client dials the card's
// GRPC interface (`host:port`, plain text), the token sent as the `authorization` service
// parameter of each call. Usage: node client_js_grpc.mjs <sdk folder>
// Env: A2A_BASE, A2A_TOKEN_PRO, A2A_TOKEN_FREE, A2A_TOKEN_LIMITED.
// Prints `PASS <check>`, `FAIL <check>: <why>`, and `SEEN <case> <what the caller got>`.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { randomUUID } from 'node:crypto';

const [sdkDir] = process.argv.slice(2);
const require = createRequire(resolve(sdkDir, 'package.json'));
const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver } = require('@a2a-js/sdk/client');
const { GrpcTransportFactory } = require('@a2a-js/sdk/client/grpc');
const base = process.env.A2A_BASE;
const QUESTION = 'What does the Church teach about grace?';

let failures = 0;
function pass(name) { console.log(`PASS ${name}`); }
function fail(name, why) { failures += 1; console.log(`FAIL ${name}: ${why}`); }
function check(name, condition, why) { if (condition) pass(name); else fail(name, why); }

// A client whose calls carry `token` as their bearer credential.
async function client(token) {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new GrpcTransportFactory()],
    preferredTransports: ['GRPC'],
    cardResolver: new DefaultAgentCardResolver(),
  }));
  const c = await factory.createFromUrl(base);
  const options = { serviceParameters: { authorization: `Bearer ${token}` } };
  return {
    transport: c.transport,
    send: (params) => c.sendMessage(params, options),
    stream: (params) => c.sendMessageStream(params, options),
    get: (params) => c.getTask(params, options),
    list: (params) => c.listTasks(params, options),
    cancel: (params) => c.cancelTask(params, options),
  };
}

// The transport writes the generated message types as they are: every field is given.
const message = (skillId, text) => ({ messageId: randomUUID(), contextId: '', taskId: '',
  role: 1 /* ROLE_USER */, parts: [{ content: { $case: 'text', value: text }, filename: '', mediaType: '' }],
  metadata: { skillId }, extensions: [], referenceTaskIds: [] });
const COMPLETED = 3;
const CANCELED = 5;
const taskOf = (result) => (result?.payload?.$case === 'task' ? result.payload.value : result);

async function expectError(name, run, cls, test) {
  try {
    const value = await run();
    fail(name, `expected ${cls}, got a result: ${JSON.stringify(value).slice(0, 200)}`);
  } catch (e) {
    const got = e?.constructor?.name ?? typeof e;
    console.log(`SEEN ${name}: ${got} code=${e?.code ?? '-'} message=${JSON.stringify(String(e?.message).slice(0, 160))}`);
    const problems = [];
    if (got !== cls) problems.push(`class ${got}, expected ${cls}`);
    if (test && !test(e)) problems.push(`unexpected detail: ${String(e?.message).slice(0, 200)}`);
    if (problems.length) fail(name, problems.join('; ')); else pass(name);
  }
}

async function main() {
  const pro = await client(process.env.A2A_TOKEN_PRO);
  check('binding: the gRPC transport', pro.transport?.protocolName === 'GRPC', `${pro.transport?.constructor?.name}`);

  const done = taskOf(await pro.send({ message: message('saints_of_the_day', '2026-12-08') }));
  check('send saints_of_the_day', done?.status?.state === COMPLETED, JSON.stringify(done).slice(0, 300));
  const got = await pro.get({ id: done.id, historyLength: 1 });
  check('get historyLength=1', got.id === done.id && got.history.length === 1, JSON.stringify(got).slice(0, 300));
  const listed = await pro.list({ tenant: '', contextId: '', status: 0, pageSize: 1, pageToken: '' });
  check('list tasks', listed.tasks.length === 1 && listed.tasks[0].id === done.id, JSON.stringify(listed).slice(0, 300));

  const events = [];
  for await (const ev of pro.stream({ message: message('catholic_qa', QUESTION) })) events.push(ev);
  const kinds = events.map((ev) => ev.payload?.$case);
  const last = events.at(-1)?.payload;
  check('stream: the task, artifact updates, then the final status',
    kinds[0] === 'task' && kinds.includes('artifactUpdate') && last?.$case === 'statusUpdate'
      && last.value.status.state === COMPLETED, JSON.stringify(kinds));

  let canceled;
  const streamed = [];
  for await (const ev of pro.stream({ message: message('catholic_qa', QUESTION) })) {
    streamed.push(ev);
    if (!canceled && ev.payload?.$case === 'artifactUpdate') canceled = await pro.cancel({ id: ev.payload.value.taskId });
  }
  check('cancel a working task', canceled?.status?.state === CANCELED, JSON.stringify(canceled).slice(0, 200));
  const end = streamed.at(-1)?.payload;
  check('cancel: the stream ends canceled', end?.$case === 'statusUpdate' && end.value.status.state === CANCELED, JSON.stringify(end).slice(0, 200));

  await expectError('cancel finished task', () => pro.cancel({ id: done.id }), 'GrpcTaskNotCancelableError');
  await expectError('unknown task', () => pro.get({ id: randomUUID() }), 'GrpcTaskNotFoundError');
  const free = await client(process.env.A2A_TOKEN_FREE);
  // Reasons the SDK has no class for: its generic gRPC error, the status code in the message
  // (7 PERMISSION_DENIED, 8 RESOURCE_EXHAUSTED, 16 UNAUTHENTICATED).
  await expectError('free plan', () => free.send({ message: message('saints_of_the_day', 'today') }),
    'GrpcA2AErrorImpl', (e) => /: 7 Paid plan required/.test(e.message));
  const limited = await client(process.env.A2A_TOKEN_LIMITED);
  await limited.send({ message: message('saints_of_the_day', 'today') });
  await expectError('rate limit exhausted', () => limited.send({ message: message('saints_of_the_day', 'today') }),
    'GrpcA2AErrorImpl', (e) => /: 8 Rate limit exceeded/.test(e.message));
  const anonymous = await client('not-a-valid-token');
  await expectError('invalid token', () => anonymous.send({ message: message('saints_of_the_day', 'today') }),
    'GrpcA2AErrorImpl', (e) => /: 16 Unauthorized/.test(e.message));
}

main().then(() => process.exit(failures ? 1 : 0), (e) => {
  console.log(`FAIL client: ${e?.stack ?? e}`);
  process.exit(1);
});
