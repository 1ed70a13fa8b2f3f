// Drives the server with the Vercel AI SDK (`ai`) and its A2A provider (`a2a-ai-provider`): the
// model is `a2a(<card URL>)`, called with `generateText` (a blocking `message/send`) and
// `streamText` (`message/stream`), no language model behind it. The provider takes the card URL
// and nothing else (no headers, no fetch, no message metadata), so each skill is reached through
// its own agent's card, and the bearer token goes through the global `fetch`, the one place a
// user of the provider can add it. A question about the calendar sent to the whole agent goes to
// `catholic_qa`, which answers it from the calendar.
// Usage: node client_ai_sdk.mjs <framework folder>. Env: A2A_BASE, A2A_TOKEN_PRO.
// Prints `PASS <check>`, `FAIL <check>: <why>` and `SEEN <case>: <the text the SDK returned>`.
import {
  CASES, base, calls, check, checkCalls, checkText, detail, failed, load, serverFetch, skillAgent,
} from './frameworks.mjs';

const [folder] = process.argv.slice(2);
const { generateText, streamText } = await load(folder, 'ai');
const { a2a } = await load(folder, 'a2a-ai-provider');
globalThis.fetch = serverFetch(globalThis.fetch);

// `generateText` reads the stored task: its text is the answer, once. `streamText` joins the text
// of every artifact update and does not read `append`, so its text is the stored answer itself
// when the skill sends it whole, and the model's text deltas followed by the whole answer when
// the skill streams (catholic_qa with a model): the answer twice, which is checked as such.
async function run(label, cardUrl, path, text, mustHold) {
  let stored;
  let since = calls.length;
  try {
    stored = (await generateText({ model: a2a(cardUrl), prompt: text })).text;
    console.log(`SEEN ${label} with generateText: ${JSON.stringify(stored.slice(0, 160))}`);
    checkText(`${label} with generateText: the result holds the answer`, stored, mustHold);
    checkCalls(`${label} with generateText: 0.3 wire to ${path}`, since, path, null, ['message/send']);
  } catch (e) {
    check(`${label} with generateText: the result holds the answer`, false, detail(e));
  }
  since = calls.length;
  try {
    const result = streamText({ model: a2a(cardUrl), prompt: text, onError: ({ error }) => { throw error; } });
    const streamed = await result.text;
    const deltas = streamed.slice(0, Math.max(0, streamed.length - (stored ?? '').length));
    console.log(`SEEN ${label} with streamText: ${deltas.length} characters of deltas, then ${JSON.stringify(streamed.slice(deltas.length, deltas.length + 160))}`);
    check(`${label} with streamText: the result ends with the whole answer`,
      stored !== undefined && streamed.endsWith(stored) && stored.startsWith(deltas),
      `${JSON.stringify(streamed.slice(0, 300))}, stored ${JSON.stringify(stored?.slice(0, 300))}`);
    checkCalls(`${label} with streamText: 0.3 wire to ${path}`, since, path, null, ['message/stream']);
  } catch (e) {
    check(`${label} with streamText: the result ends with the whole answer`, false, detail(e));
  }
}

try {
  for (const [skill, spec] of Object.entries(CASES.skills)) {
    await run(`${skill} through its own agent`, new URL('.well-known/agent-card.json', skillAgent(skill)).href,
      `/agents/${skill}`, spec.ask, spec.holds);
  }
  await run('a calendar question without a skill', `${base}/.well-known/agent-card.json`, '/api/v1/a2a',
    CASES.calendar_question.ask, CASES.calendar_question.holds);
} catch (e) {
  check('client', false, detail(e));
}
process.exit(failed() ? 1 : 0);
