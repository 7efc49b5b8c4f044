import { strict as assert } from 'node:assert';
import MarkdownIt from 'markdown-it';
import {
  codeTokens,
  inlineCodeParts,
  plainWhy,
  protectIdentifiers,
  sanitizeMermaidSource,
} from '../../../src/webview/chat/text';

/** The chat's text rules, on the strings answers really contain. */
describe('chat webview text', () => {
  describe('mermaid sources', () => {
    it('turns a tag in a label into text, so it never reaches the page as an element', () => {
      const source = 'flowchart TD\n  A["<img src=x onerror=alert(1)>"] --> B[ok]\n  B <--> C';
      const clean = sanitizeMermaidSource(source);
      assert.ok(!clean.includes('<img'), clean);
      assert.match(clean, /A\["#lt;img src=x onerror=alert\(1\)#gt;"\] --> B\[ok\]/);
      assert.match(clean, /B <--> C/, 'arrows are not tags');
      assert.equal(sanitizeMermaidSource('A[one<br>two] --> B'), 'A[one<br>two] --> B');
    });

    it('drops click, call and init directives and strips URLs from labels', () => {
      const clean = sanitizeMermaidSource(
        [
          '%%{init: {"securityLevel": "loose"}}%%',
          'flowchart LR',
          '  A[see javascript:alert(1)] --> B',
          '  click A "https://evil.example" "tip"',
          '  click B call alert()',
          '  C --> D',
        ].join('\n'),
      );
      assert.equal(clean, ['flowchart LR', '  A[see ] --> B', '  C --> D'].join('\n'));
    });
  });

  describe('identifiers', () => {
    const md = new MarkdownIt();
    it('keeps Flask.__init__ as code instead of a bold "init"', () => {
      const text = 'The app is built in Flask.__init__ and uses self._cache, not __name__.';
      const html = md.render(protectIdentifiers(text));
      assert.match(html, /<code>Flask\.__init__<\/code>/);
      assert.match(html, /<code>self\._cache<\/code>/);
      assert.match(html, /<code>__name__<\/code>/);
      assert.doesNotMatch(html, /<strong>/);
    });

    it('leaves code spans, fenced blocks, snake_case words and paths alone', () => {
      const text = [
        'Already `Flask.__init__` and create_user in src/_internal/app.py.',
        '```python',
        'def __init__(self): pass',
        '```',
        'Emphasis *stays*.',
      ].join('\n');
      assert.equal(protectIdentifiers(text), text);
    });
  });

  it('splits chip text into text and code, without the backticks', () => {
    assert.deepEqual(inlineCodeParts('Who calls `OrderService.create_order`?'), [
      { code: false, text: 'Who calls ' },
      { code: true, text: 'OrderService.create_order' },
      { code: false, text: '?' },
    ]);
  });

  it('says why a place matters in plain words', () => {
    assert.equal(
      plainWhy(
        'function OrderService.create_order: matches order, create; calls OrderService._validate; called from create_order_endpoint; similar in meaning (0.79)',
      ),
      'Defines function OrderService.create_order · calls OrderService._validate · is called by create_order_endpoint · is close in meaning to the question · mentions order, create',
    );
    assert.equal(
      plainWhy('raises DatabaseError (in Database.connect)'),
      'Raises DatabaseError (in Database.connect)',
    );
  });
});

describe('chat webview code highlighting', () => {
  it('tells keywords, strings, comments and numbers apart, and loses no character', () => {
    const code = 'def connect(self):  # open it\n    raise DatabaseError("read-only", 3)';
    const tokens = codeTokens(code, 'shop/db.py');
    assert.equal(tokens.map((token) => token.text).join(''), code);
    const kinds = (kind: string) =>
      tokens.filter((token) => token.kind === kind).map((token) => token.text);
    assert.deepEqual(kinds('keyword'), ['def', 'self', 'raise']);
    assert.deepEqual(kinds('comment'), ['# open it']);
    assert.deepEqual(kinds('string'), ['"read-only"']);
    assert.deepEqual(kinds('number'), ['3']);
  });

  it('reads # as a comment only where the language says so', () => {
    const code = '#include <x.h>\nint a = 1; // one';
    const tokens = codeTokens(code, 'a.cpp');
    assert.equal(tokens.map((token) => token.text).join(''), code);
    assert.deepEqual(
      tokens.filter((token) => token.kind === 'comment').map((token) => token.text),
      ['// one'],
    );
  });
});
