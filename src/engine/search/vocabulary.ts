/**
 * The words questions use for what code names otherwise: a general programming thesaurus, not
 * about any codebase. Each group gathers words for one idea; a question word finds the other words
 * of its groups (after its plural, -ed, -ing or -ly ending is dropped when the word itself is not
 * listed). Groups are written for breadth — errors, the web, the command line, state and storage,
 * lifecycles, time, concurrency, streams, text, data structures, types — so that the expansion
 * helps any repository rather than a chosen set of questions.
 */
const GROUPS: readonly (readonly string[])[] = [
  // Errors and failure
  ['error', 'exception', 'raise', 'throw', 'fail', 'failure', 'err'],
  ['crash', 'panic', 'abort', 'fatal', 'exception'],
  ['broken', 'invalid', 'bad', 'malformed', 'corrupt', 'error'],
  ['warn', 'warning', 'deprecated', 'deprecation'],
  [
    'mistake',
    'typo',
    'mistype',
    'misspell',
    'similar',
    'close',
    'suggest',
    'suggestion',
    'possibilities',
    'levenshtein',
  ],
  ['check', 'validate', 'verify', 'ensure', 'assert', 'guard'],
  ['missing', 'absent', 'none', 'null', 'undefined', 'required', 'optional'],
  ['ignore', 'skip', 'suppress', 'silence', 'swallow'],
  ['recover', 'fallback', 'default', 'handle', 'catch', 'except'],
  // The web
  ['server', 'app', 'application', 'host', 'service'],
  ['client', 'browser', 'user', 'agent', 'caller'],
  ['request', 'req', 'incoming', 'environ', 'query'],
  ['response', 'res', 'reply', 'answer', 'send', 'resp', 'body'],
  ['status', 'code', 'statuscode', 'ok'],
  ['header', 'headers', 'field'],
  ['cookie', 'cookies', 'session', 'jar'],
  ['visitor', 'user', 'client', 'session', 'browser'],
  ['page', 'view', 'template', 'render', 'html', 'response'],
  ['visit', 'request', 'navigate', 'load'],
  ['redirect', 'location', 'bounce', 'forward', 'moved', 'follow', 'redirects'],
  ['proxy', 'proxies', 'tunnel', 'forward'],
  ['url', 'uri', 'link', 'address', 'href', 'path', 'endpoint', 'route'],
  ['website', 'site', 'domain', 'host', 'hostname', 'origin', 'netloc'],
  ['socket', 'connection', 'conn', 'connect', 'pool', 'adapter', 'keepalive'],
  ['reconnect', 'reuse', 'pool', 'keepalive', 'persistent', 'connection'],
  ['verb', 'method', 'methods', 'get', 'post', 'put', 'delete', 'options', 'head'],
  ['preflight', 'options', 'cors', 'allow', 'methods'],
  ['querystring', 'query', 'params', 'args', 'parameters', 'qs'],
  ['form', 'fields', 'multipart', 'urlencoded', 'body'],
  ['upload', 'file', 'files', 'multipart', 'stream'],
  ['download', 'send', 'file', 'attachment', 'sendfile'],
  ['payload', 'body', 'data', 'content', 'json'],
  ['static', 'assets', 'asset', 'stylesheet', 'stylesheets', 'css', 'images', 'image', 'files'],
  ['middleware', 'handler', 'layer', 'hook', 'interceptor', 'filter'],
  ['handler', 'view', 'callback', 'handle', 'controller', 'endpoint', 'listener'],
  ['route', 'routes', 'rule', 'url', 'path', 'endpoint', 'router', 'routing'],
  ['prefix', 'mount', 'base', 'root', 'subpath'],
  ['framework', 'app', 'application', 'library'],
  ['template', 'pattern', 'placeholder', 'placeholders', 'format', 'render'],
  ['placeholder', 'param', 'params', 'keys', 'capture', 'captured', 'variable', 'wildcard'],
  ['matcher', 'match', 'regexp', 'regex', 'pattern', 'compile'],
  [
    'percent',
    'quote',
    'unquote',
    'escape',
    'unescape',
    'decodeuricomponent',
    'encodeuricomponent',
    'urlencode',
  ],
  ['timeout', 'deadline', 'expire', 'expiry', 'ttl', 'timer'],
  ['retry', 'retries', 'again', 'repeat', 'attempt', 'backoff', 'resubscribe', 'reattempt'],
  // Security
  ['login', 'auth', 'authenticate', 'signin', 'credentials', 'authorization', 'user'],
  ['logout', 'signout', 'session', 'clear'],
  ['credentials', 'credential', 'auth', 'password', 'token', 'authorization'],
  ['password', 'secret', 'hash', 'credentials', 'passwd'],
  ['token', 'bearer', 'jwt', 'auth', 'key'],
  ['sign', 'signed', 'signature', 'signer', 'serializer', 'hmac', 'secret'],
  ['tamper', 'tampered', 'edited', 'forged', 'modified', 'signature', 'verify', 'bad'],
  ['encrypt', 'decrypt', 'cipher', 'crypto', 'key'],
  ['permission', 'allow', 'deny', 'access', 'forbidden', 'authorize'],
  ['strip', 'remove', 'drop', 'delete', 'pop', 'discard'],
  ['certificate', 'cert', 'ssl', 'tls', 'verify', 'ca'],
  // State and storage
  ['state', 'status', 'store', 'context', 'session', 'data'],
  ['store', 'storage', 'save', 'persist', 'write', 'stored'],
  ['remember', 'remembers', 'store', 'cache', 'keep', 'last', 'latest', 'current', 'value'],
  ['cache', 'cached', 'memo', 'memoize', 'lru', 'store'],
  ['database', 'db', 'sql', 'table', 'query', 'orm', 'model'],
  ['record', 'row', 'entry', 'item', 'document'],
  ['holder', 'container', 'box', 'wrapper', 'subject', 'store', 'value'],
  ['global', 'shared', 'singleton', 'module', 'config', 'current'],
  ['context', 'ctx', 'scope', 'env', 'environment', 'local'],
  ['environment', 'env', 'environ', 'envvar', 'variable'],
  ['config', 'configuration', 'settings', 'options', 'preferences', 'conf'],
  ['option', 'options', 'flag', 'flags', 'switch', 'setting'],
  ['argument', 'arguments', 'args', 'param', 'params', 'parameter', 'positional'],
  ['default', 'defaults', 'fallback', 'initial', 'preset'],
  ['value', 'values', 'val', 'item', 'data'],
  ['item', 'items', 'element', 'entry', 'value', 'values'],
  ['key', 'keys', 'name', 'id', 'identifier'],
  ['file', 'files', 'path', 'filename', 'fs', 'open'],
  ['folder', 'directory', 'dir', 'path', 'os'],
  ['memory', 'buffer', 'heap', 'ram', 'allocation'],
  // Lifecycle
  ['start', 'started', 'begin', 'init', 'initialize', 'run', 'launch', 'boot', 'open', 'subscribe'],
  ['startup', 'init', 'initialize', 'setup', 'bootstrap', 'boot'],
  ['create', 'created', 'new', 'make', 'build', 'construct', 'factory', 'instantiate'],
  ['stop', 'end', 'finish', 'complete', 'close', 'shutdown', 'halt', 'terminate'],
  ['cleanup', 'teardown', 'close', 'dispose', 'destroy', 'release', 'finalize', 'unsubscribe'],
  ['reset', 'restart', 'clear', 'reinitialize', 'resubscribe'],
  ['scratch', 'again', 'restart', 'resubscribe', 'fresh', 'reset'],
  ['cancel', 'abort', 'interrupt', 'unsubscribe', 'stop', 'kill'],
  ['wait', 'waiting', 'delay', 'sleep', 'pause', 'timer', 'block'],
  ['delay', 'delayed', 'timer', 'schedule', 'wait', 'later', 'defer'],
  ['schedule', 'scheduler', 'timer', 'queue', 'asap', 'later'],
  ['lazy', 'lazily', 'deferred', 'defer', 'generator', 'iterator', 'stream', 'thunk'],
  ['async', 'asynchronous', 'await', 'promise', 'future', 'coroutine', 'callback'],
  ['synchronous', 'sync', 'blocking', 'immediately'],
  ['callback', 'callbacks', 'handler', 'hook', 'listener', 'fn', 'func', 'cb'],
  ['hook', 'hooks', 'callback', 'signal', 'event', 'before', 'after', 'teardown'],
  ['event', 'events', 'emit', 'emitter', 'signal', 'listener', 'on'],
  ['listener', 'subscriber', 'observer', 'handler', 'watcher', 'callback'],
  ['notify', 'emit', 'next', 'publish', 'dispatch', 'broadcast', 'signal', 'send'],
  ['push', 'pushed', 'next', 'emit', 'send', 'append', 'add'],
  ['receive', 'receives', 'get', 'subscribe', 'consume', 'listen', 'next'],
  ['subscribe', 'subscription', 'observer', 'listen', 'subscriber'],
  ['register', 'registered', 'registration', 'add', 'attach', 'record', 'decorator'],
  ['order', 'reverse', 'reversed', 'sort', 'sorted', 'priority', 'first', 'last'],
  ['before', 'after', 'first', 'pre', 'post', 'eager', 'priority'],
  // Concurrency and limits
  ['thread', 'threads', 'threading', 'lock', 'concurrent', 'parallel', 'worker'],
  ['concurrent', 'concurrency', 'simultaneous', 'parallel', 'active', 'running'],
  ['cap', 'limit', 'max', 'maximum', 'concurrent', 'bound', 'quota', 'threshold'],
  ['limit', 'max', 'maximum', 'cap', 'bound', 'size'],
  ['queue', 'buffer', 'backlog', 'pending', 'waiting'],
  ['nested', 'inner', 'child', 'sub', 'flatten'],
  ['overflow', 'overflowing', 'recursion', 'stack', 'depth', 'setimmediate', 'sync', 'trampoline'],
  ['stack', 'frames', 'trace', 'traceback', 'call', 'layer'],
  // Streams and sequences
  ['stream', 'streams', 'observable', 'iterator', 'generator', 'flow', 'source'],
  ['iterator', 'iterable', 'generator', 'yield', 'next', 'iter'],
  ['chunk', 'chunks', 'piece', 'pieces', 'part', 'block', 'segment', 'yield'],
  ['sequence', 'series', 'list', 'array', 'order'],
  ['pipe', 'pipeline', 'chain', 'compose', 'operator', 'operators'],
  ['combine', 'merge', 'zip', 'join', 'concat'],
  ['map', 'mapped', 'transform', 'project', 'convert', 'apply'],
  ['flatten', 'flat', 'merge', 'concat', 'switch', 'inner'],
  ['filter', 'select', 'where', 'predicate', 'skip', 'take'],
  ['latest', 'last', 'current', 'recent', 'newest', 'value'],
  ['previous', 'prev', 'last', 'old', 'prior'],
  ['replay', 'buffer', 'history', 'remember', 'cached'],
  ['multicast', 'share', 'shared', 'subject', 'broadcast'],
  ['window', 'buffer', 'batch', 'group', 'chunk'],
  // Text and formats
  ['text', 'string', 'str', 'unicode', 'content'],
  ['character', 'char', 'chars', 'charset', 'encoding', 'unicode', 'codec'],
  ['encoding', 'charset', 'encode', 'decode', 'codec', 'utf'],
  ['decode', 'decoded', 'decoding', 'unquote', 'parse', 'loads', 'charset'],
  ['encode', 'encoded', 'encoding', 'quote', 'escape', 'dumps', 'serialize'],
  ['bytes', 'byte', 'binary', 'buffer', 'raw', 'content'],
  ['parse', 'parser', 'parsing', 'decode', 'load', 'loads', 'read', 'tokenize'],
  ['serialize', 'serializer', 'dump', 'dumps', 'encode', 'stringify', 'marshal', 'json'],
  ['json', 'jsonify', 'dumps', 'loads', 'stringify', 'serialize'],
  ['format', 'formatter', 'style', 'render', 'template', 'fmt'],
  ['print', 'echo', 'write', 'output', 'display', 'show', 'stdout'],
  ['show', 'display', 'print', 'echo', 'render'],
  ['output', 'stdout', 'write', 'echo', 'stream', 'result'],
  ['log', 'logger', 'logging', 'debug', 'trace'],
  ['message', 'msg', 'text', 'error', 'notice'],
  ['prompt', 'input', 'ask', 'confirm', 'interactive', 'question'],
  ['terminal', 'console', 'tty', 'shell', 'isatty', 'term'],
  ['color', 'colour', 'style', 'ansi', 'bold'],
  ['width', 'columns', 'wrap', 'size', 'terminal'],
  ['help', 'usage', 'docs', 'description', 'epilog'],
  // The command line
  ['cli', 'command', 'commands', 'console', 'main', 'argv'],
  ['command', 'commands', 'cmd', 'subcommand', 'group', 'cli'],
  ['action', 'actions', 'command', 'subcommand', 'invoke'],
  ['group', 'groups', 'subcommands', 'commands'],
  ['entry', 'main', 'entrypoint', 'start', 'run', 'call'],
  ['flag', 'flags', 'option', 'options', 'switch', 'boolean'],
  ['dash', 'double', 'long', 'prefix', 'opt'],
  ['exit', 'quit', 'status', 'code', 'sys', 'abort'],
  ['completion', 'complete', 'shell', 'tab', 'autocomplete'],
  ['version', 'ver', 'release'],
  // Changing data
  ['copy', 'clone', 'duplicate', 'deepcopy'],
  ['change', 'changes', 'modify', 'modified', 'mutate', 'update', 'set', 'assign', 'write'],
  ['update', 'set', 'assign', 'modify', 'patch', 'merge'],
  ['remove', 'delete', 'del', 'drop', 'pop', 'discard', 'strip', 'clear', 'unset'],
  ['add', 'append', 'insert', 'push', 'put', 'extend', 'register'],
  ['replace', 'substitute', 'rewrite', 'override', 'swap', 'sub'],
  ['find', 'lookup', 'search', 'locate', 'resolve', 'get', 'match'],
  ['get', 'fetch', 'retrieve', 'read', 'load', 'lookup'],
  ['resolve', 'resolver', 'lookup', 'find', 'locate', 'dispatch'],
  ['compare', 'equal', 'equals', 'eq', 'diff', 'same'],
  ['count', 'number', 'times', 'many', 'amount', 'total', 'len', 'size'],
  ['size', 'length', 'len', 'count', 'capacity'],
  ['index', 'position', 'offset', 'idx', 'pos'],
  ['name', 'names', 'identifier', 'label', 'key'],
  ['decide', 'decides', 'choose', 'select', 'determine', 'detect', 'guess'],
  ['detect', 'guess', 'sniff', 'infer'],
  ['convert', 'conversion', 'cast', 'coerce', 'transform', 'to'],
  ['record', 'track', 'store', 'remember', 'mark', 'source'],
  ['origin', 'source', 'from', 'provenance'],
  // Types and structure
  ['type', 'types', 'kind', 'class', 'typing'],
  ['class', 'classes', 'type', 'object', 'instance'],
  ['subclass', 'subclasses', 'inherit', 'inherits', 'extends', 'derived', 'override', 'super'],
  ['override', 'overrides', 'overridden', 'subclass', 'super', 'replace'],
  ['base', 'parent', 'super', 'abstract', 'mixin'],
  ['method', 'function', 'def', 'func', 'callable'],
  ['function', 'func', 'fn', 'def', 'callable', 'method'],
  ['variable', 'var', 'name', 'attribute', 'field'],
  ['attribute', 'attr', 'property', 'field', 'getattr', 'setattr'],
  ['module', 'package', 'import', 'modules'],
  ['plugin', 'plugins', 'extension', 'extensions'],
  ['dependency', 'dependencies', 'import', 'require', 'depends'],
  ['tree', 'node', 'nodes', 'children', 'parent', 'root'],
  ['list', 'array', 'sequence', 'items', 'tuple'],
  ['dict', 'dictionary', 'map', 'mapping', 'hash', 'object'],
  ['test', 'tests', 'testing', 'mock', 'fixture', 'client', 'runner'],
  ['fake', 'mock', 'stub', 'dummy', 'test'],
  ['platform', 'os', 'windows', 'posix', 'system'],
  ['process', 'subprocess', 'spawn', 'child', 'pid', 'fork'],
  ['small', 'tiny', 'short', 'minimal'],
  ['fast', 'quick', 'speed', 'performance', 'optimize', 'cache'],
];

const SYNONYMS_PER_WORD = 6;

/** Each word with the words of every group it belongs to, the word itself left out. */
const RELATED: ReadonlyMap<string, readonly string[]> = (() => {
  const related = new Map<string, string[]>();
  for (const group of GROUPS) {
    for (const word of group) {
      const list = related.get(word) ?? [];
      for (const other of group) if (other !== word && !list.includes(other)) list.push(other);
      related.set(word, list);
    }
  }
  return related;
})();

/** Related words of a question word, found directly or after its inflection is dropped. */
export function relatedWords(word: string): readonly string[] {
  for (const form of forms(word.toLowerCase())) {
    const found = RELATED.get(form);
    if (found) return found.slice(0, SYNONYMS_PER_WORD);
  }
  return [];
}

/** The stems a plural, past, gerund or adverb ending leaves ("skipped" → skipp, skip …), the word left out. */
export function stemsOf(word: string): string[] {
  return forms(word.toLowerCase()).slice(1);
}

/** The word, then the stems a plural, past, gerund or adverb ending leaves. */
function forms(word: string): string[] {
  const out = [word];
  const add = (stem: string) => stem.length >= 3 && !out.includes(stem) && out.push(stem);
  if (word.endsWith('ies')) add(`${word.slice(0, -3)}y`);
  if (word.endsWith('es')) add(word.slice(0, -2));
  if (word.endsWith('s') && !word.endsWith('ss')) add(word.slice(0, -1));
  if (word.endsWith('ed')) {
    add(word.slice(0, -2));
    add(word.slice(0, -1));
    if (/(.)\1ed$/.test(word)) add(word.slice(0, -3));
  }
  if (word.endsWith('ing')) {
    add(word.slice(0, -3));
    add(`${word.slice(0, -3)}e`);
    if (/(.)\1ing$/.test(word)) add(word.slice(0, -4));
  }
  if (word.endsWith('ly')) add(word.slice(0, -2));
  return out;
}
