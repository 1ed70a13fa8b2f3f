// What the JavaScript agent-framework clients share: the question each skill is asked and what
// its answer's text must hold (framework_cases.json, read by the Python clients too), loading a
// package from the framework's own folder, the record of every call a framework made, and the
// check of the text a framework handed its caller.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const CASES = JSON.parse(readFileSync(join(here, 'framework_cases.json'), 'utf8'));
export const base = process.env.A2A_BASE;
export const token = process.env.A2A_TOKEN_PRO;
// Each skill's own agent as the main card gives it, in the extension that lists them.
const agents = (await (await fetch(`${base}/.well-known/agent-card.json`)).json())
  .capabilities.extensions.find((e) => e.uri.endsWith('/skill-agents/v1')).params.agents;
// The base URL of a skill's own agent, as the main card gives it.
export const skillAgent = (skill) => agents[skill];

let failures = 0;
export const failed = () => failures;
export function check(name, condition, why) {
  if (condition) console.log(`PASS ${name}`);
  else { failures += 1; console.log(`FAIL ${name}: ${why}`); }
}

// The ES module `name` (optionally `name/sub`) installed in `folder`, through its `import`
// export: the framework's folder is not an ancestor of this file, so a bare import cannot find it.
export async function load(folder, name, sub = '.') {
  const root = join(folder, 'node_modules', name);
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const entry = typeof pkg.exports === 'object' ? pkg.exports[sub] : undefined;
  const file = entry ? (typeof entry === 'string' ? entry : entry.import ?? entry.default) : (pkg.module ?? pkg.main);
  return import(pathToFileURL(join(root, file)).href);
}

// [path, JSON-RPC method, A2A-Version header, metadata.skillId of the message] of every POST.
export const calls = [];
// `fetch` that records each POST to the server and sends the bearer token with every call to it.
export function serverFetch(plainFetch) {
  return async (url, init = {}) => {
    const target = new URL(url instanceof Request ? url.url : String(url));
    if (target.origin !== new URL(base).origin) return plainFetch(url, init);
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${token}`);
    if ((init.method ?? 'GET').toUpperCase() === 'POST') {
      const body = JSON.parse(String(init.body ?? '{}'));
      calls.push([target.pathname, body.method, headers.get('a2a-version'),
        body.params?.message?.metadata?.skillId ?? null]);
    }
    return plainFetch(url, { ...init, headers });
  };
}

// The text the framework handed its caller holds the answer: every expected piece, it is
// prose, not the JSON of the answer's data part, and it holds the answer once (its opening
// words are not repeated).
export function checkText(label, text, mustHold) {
  const missing = mustHold.filter((piece) => !text.includes(piece));
  const opening = text.trim().slice(0, 40);
  const times = opening ? text.split(opening).length - 1 : 0;
  check(label, text.trim() !== '' && missing.length === 0 && !/^\s*[{[]/.test(text) && times === 1,
    `missing ${JSON.stringify(missing)}, opening ${times} times, in ${JSON.stringify(text.slice(0, 300))}`);
}

// The calls made since index `since` went to `path` on the 0.3 wire (no A2A-Version header),
// used only `methods`, and carried `skillSent` as metadata.skillId (null: none sent).
export function checkCalls(label, since, path, skillSent, methods = ['message/send', 'message/stream']) {
  const made = calls.slice(since);
  check(label, made.length > 0 && made.every(([p, m, v, s]) => p === path && methods.includes(m)
    && v === null && s === skillSent), `calls ${JSON.stringify(made)}`);
}

export const detail = (e) => (e && e.stack ? e.stack : String(e));
