// The harness of docs/clocks-and-notifications.md's TypeScript webhook receiver (the check
// "the TypeScript webhook receiver" in tests/docs/test_examples.py): the example replaces the
// EXAMPLE line below as it is, with just enough of Express around it -- `express.raw` hands
// the handler the raw body as a Buffer, as the real one does -- and the app's `alreadySeen`
// and `enqueue`. Run as `node receiver.js CASES.json` with SKYLINE_WEBHOOK_SECRET set: each
// case (a base64 body and headers) goes to the registered handler; printed: one JSON list of
// {status, enqueued} per case.
import { readFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";

interface Request {
  body: Buffer;
  headers: IncomingHttpHeaders;
  header(name: string): string | undefined;
}
interface Response {
  sendStatus(code: number): Response;
}
type Handler = (req: Request, res: Response) => void;

const express = { raw: (_options: { type: string }): Handler => () => undefined };
const routes = new Map<string, Handler>();
const app = {
  post(path: string, _body: Handler, handler: Handler): void {
    routes.set(path, handler);
  },
};
const seen = new Set<string>();
function alreadySeen(id: string): boolean {
  if (seen.has(id)) return true;
  seen.add(id);
  return false;
}
const enqueued: unknown[] = [];
function enqueue(event: unknown): void {
  enqueued.push(event);
}

// EXAMPLE

interface Case {
  body: string;
  headers: Record<string, string>;
}
const handler = routes.get("/skyline");
if (handler === undefined) throw new Error("the example registered no POST /skyline");
const cases: Case[] = JSON.parse(readFileSync(process.argv[2] ?? "", "utf8"));
const results = cases.map(({ body, headers }) => {
  let status = 0;
  const res: Response = {
    sendStatus(code: number): Response {
      status = code;
      return res;
    },
  };
  const before = enqueued.length;
  handler(
    { body: Buffer.from(body, "base64"), headers, header: (name) => headers[name.toLowerCase()] },
    res,
  );
  return { status, enqueued: enqueued.slice(before) };
});
console.log(JSON.stringify(results));
