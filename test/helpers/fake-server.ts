import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a fake server does with one request. */
export type Reply =
  | { readonly status?: number; readonly headers?: Record<string, string>; readonly json: unknown }
  /** Server-sent events, each written separately so the client sees them arrive one by one. */
  | { readonly sse: readonly string[] }
  | 'hang'
  | 'reset';

interface RecordedRequest {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body is whatever JSON the client sent
  readonly body: any;
}

/** An HTTP server on 127.0.0.1 that answers requests with scripted replies, in order, and records them. */
export class FakeServer {
  readonly requests: RecordedRequest[] = [];
  private replies: Reply[] = [];
  private readonly server: Server = createServer(
    (request, response) => void this.handle(request, response),
  );

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  script(...replies: Reply[]): void {
    this.requests.length = 0;
    this.replies = replies;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let text = '';
    for await (const piece of request) text += piece;
    this.requests.push({
      path: request.url ?? '',
      headers: request.headers,
      body: JSON.parse(text),
    });
    const reply = this.replies.shift() ?? {
      status: 500,
      json: { error: { type: 'api_error', message: 'no reply scripted' } },
    };
    if (reply === 'hang') return;
    if (reply === 'reset') return void request.socket.destroy();
    if ('sse' in reply) return writeEvents(response, reply.sse);
    response.writeHead(reply.status ?? 200, {
      'content-type': 'application/json',
      ...reply.headers,
    });
    response.end(JSON.stringify(reply.json));
  }
}

async function writeEvents(response: ServerResponse, events: readonly string[]): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    response.write(event);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  response.end();
}
