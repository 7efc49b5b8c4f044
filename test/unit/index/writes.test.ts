import { strict as assert } from 'node:assert';
import { unwrap } from '../../../src/engine/util/result';
import { chunkSource } from '../../helpers/extract';
import { openEngine, Scratch } from '../../helpers/workspace';

/** Writes through subscripts, setters and `setattr`/`Object.assign` count as changes. */
describe('writes recorded as changes', () => {
  const mutatesOf = async (path: string, source: string) => {
    const { facts } = await chunkSource(path, source);
    return new Map(facts.map((fact) => [fact.qualifiedName, [...fact.mutates].sort()]));
  };

  it('Python: subscripts of a parameter, setattr with a literal name, environ', async () => {
    const mutates = await mutatesOf(
      'app/headers.py',
      [
        'import os',
        '',
        '',
        'def strip_auth(headers, request):',
        '    del headers["Authorization"]',
        '    headers["Host"] = request.host',
        '',
        '',
        'def configure(options, name, value):',
        '    setattr(options, "timeout", value)',
        '    setattr(options, name, value)',
        '',
        '',
        'def export_proxy(url):',
        '    os.environ["HTTP_PROXY"] = url',
        '',
        '',
        'class Client:',
        '    def reset(self):',
        '        setattr(self, "session", None)',
        '',
        '',
        'def local_only(items):',
        '    seen = {}',
        '    seen["a"] = 1',
        '    for item in items:',
        '        total = item',
        '    return seen',
        '',
      ].join('\n'),
    );
    assert.deepEqual(mutates.get('strip_auth'), ['headers']);
    // a name held in a variable says nothing about which attribute changes
    assert.deepEqual(mutates.get('configure'), ['options.timeout']);
    assert.deepEqual(mutates.get('export_proxy'), ['os', 'os.environ']);
    assert.deepEqual(mutates.get('Client.reset'), ['self.session']);
    assert.deepEqual(mutates.get('local_only'), []);
  });

  it('TypeScript: subscripts, .set(), Object.assign, never a rebound parameter', async () => {
    const mutates = await mutatesOf(
      'src/config.ts',
      [
        'export function setHeader(config: Config, key: string, value: string) {',
        '  config.headers[key] = value;',
        '}',
        '',
        'export function setAll(headers: Map<string, string>, config: Config) {',
        "  headers.set('accept', 'json');",
        "  config.params.set('page', '1');",
        '}',
        '',
        'export function merge(target: Config, source: Config) {',
        '  Object.assign(target, source);',
        '}',
        '',
        'export function defaults(options?: Config) {',
        '  options = options ?? {};',
        '  const local: Record<string, string> = {};',
        "  local['a'] = 'b';",
        '  return options;',
        '}',
        '',
        'export class Client {',
        '  private state = {};',
        '  reset(source: Config) {',
        '    Object.assign(this.state, source);',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    assert.deepEqual(mutates.get('setHeader'), ['config.headers']);
    assert.deepEqual(mutates.get('setAll'), ['config.params', 'headers']);
    assert.deepEqual(mutates.get('merge'), ['target']);
    assert.deepEqual(mutates.get('defaults'), []);
    assert.deepEqual(mutates.get('Client.reset'), ['this.state']);
  });

  it('"which functions change X" finds the writes through a subscript and a setter', async () => {
    const scratch = new Scratch();
    const engine = await openEngine(
      scratch,
      scratch.tree({
        'net/redirects.py': [
          'def strip_credentials(headers):',
          '    del headers["Authorization"]',
          '',
          '',
          'def describe(response):',
          '    return f"{response.status} with {len(response.headers)} headers"',
          '',
        ].join('\n'),
        'net/proxy.py': [
          'def forward(request, target):',
          '    request.headers.update({"Host": target})',
          '    return request',
          '',
        ].join('\n'),
      }),
    );
    try {
      unwrap(await engine.index());
      const result = unwrap(await engine.search({ query: 'Which functions change headers?' }));
      const graph = result.trace.retrievers.find((list) => list.source === 'graph');
      const changes = (graph?.top ?? []).filter((hit) => /^changes /.test(hit.evidence));
      assert.deepEqual(
        changes.map((hit) => hit.chunkId.split('::')[2]).sort(),
        ['forward', 'strip_credentials'],
        JSON.stringify(graph),
      );
    } finally {
      engine.dispose();
      scratch.cleanup();
    }
  });
});
