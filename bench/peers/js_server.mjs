// The JavaScript peer: the official A2A SDK (@a2a-js/sdk 0.3.14) JSON-RPC handler on express,
// with a trivial executor that completes every task at once.
//
// Usage: node js_server.mjs PORT   (run with NODE_PATH or from the folder holding node_modules)

import { randomUUID } from 'node:crypto';
import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { A2AExpressApp } from '@a2a-js/sdk/server/express';

const ANSWER = '8 December 2026: The Immaculate Conception of the Blessed Virgin Mary (solemnity).';
const port = Number(process.argv[2]);

const card = {
  protocolVersion: '0.3.0',
  name: 'bench peer',
  description: 'A2A SDK peer for the load benchmark',
  url: `http://127.0.0.1:${port}/`,
  version: '0.0.0',
  capabilities: { streaming: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'saints_of_the_day', name: 'saints', description: 'saints of the day', tags: ['bench'] }],
};

class CompleteAtOnce {
  async execute(context, bus) {
    bus.publish({
      kind: 'task',
      id: context.taskId,
      contextId: context.contextId,
      status: { state: 'completed', timestamp: new Date().toISOString() },
      history: [context.userMessage],
      artifacts: [{ artifactId: randomUUID(), name: 'saints', parts: [{ kind: 'text', text: ANSWER }] }],
      metadata: context.userMessage.metadata,
    });
    bus.finished();
  }

  async cancelTask() {}
}

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new CompleteAtOnce());
const app = new A2AExpressApp(handler).setupRoutes(express(), '');
app.listen(port, '127.0.0.1', () => console.log(`js peer listening on http://127.0.0.1:${port}`));
