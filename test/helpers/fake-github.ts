import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A GitHub REST API on 127.0.0.1 with the two routes the resolver uses: an issue to read and
 * pull requests to open. Every request is recorded, so a test can tell that none was made.
 */
export class FakeGitHub {
  readonly requests: {
    method: string;
    path: string;
    authorization: string | undefined;
    body: unknown;
  }[] = [];
  readonly issues = new Map<string, { title: string; body: string }>();
  private readonly server: Server = createServer(
    (request, response) => void this.handle(request, response),
  );

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let text = '';
    for await (const piece of request) text += piece;
    const path = request.url ?? '';
    this.requests.push({
      method: request.method ?? '',
      path,
      authorization: request.headers.authorization,
      body: text ? JSON.parse(text) : null,
    });
    const reply = (status: number, json: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(json));
    };
    const issue = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(path);
    if (request.method === 'GET' && issue) {
      const found = this.issues.get(`${issue[1]}#${issue[2]}`);
      return found
        ? reply(200, { number: Number(issue[2]), ...found })
        : reply(404, { message: 'Not Found' });
    }
    const pulls = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(path);
    if (request.method === 'POST' && pulls)
      return reply(201, { number: 7, html_url: `https://github.example/${pulls[1]}/pull/7` });
    reply(404, { message: 'Not Found' });
  }
}
