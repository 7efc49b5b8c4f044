import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ANSWER_MODES } from '../../src/engine/answer/model';
import { DEFAULT_MODEL_REPO } from '../../src/engine/embed/embedder';
import { DEFAULT_MAX_FILE_BYTES } from '../../src/engine/engine';
import { DEFAULT_ANTHROPIC_MODEL } from '../../src/engine/llm/anthropic';
import {
  DEFAULT_OPENAI_COMPATIBLE_BASE_URL,
  DEFAULT_OPENAI_COMPATIBLE_MODEL,
} from '../../src/engine/llm/openai-compatible';
import { LLM_PROVIDERS } from '../../src/engine/llm/providers';
import { LOG_LEVELS } from '../../src/engine/log/logger';
import { SUMMARIZE_MIN_LINES } from '../../src/engine/model';
import { ChatMode, MAX_ATTACHMENT_SIZE } from '../../src/extension/chat/protocol';

/**
 * Each setting's default and allowed values are written once, in package.json's
 * `contributes.configuration`; the engine's constants that the CLI uses without VS Code, and the
 * words of the settings' descriptions, are checked against it here.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: {
    configuration: {
      properties: Record<
        string,
        { default?: unknown; enum?: unknown[]; enumDescriptions?: string[] } & Record<
          string,
          unknown
        >
      >;
    };
  };
};
const settings = manifest.contributes.configuration.properties;

function setting(key: string) {
  const entry = settings[`codeOracle.${key}`];
  assert.ok(entry, `codeOracle.${key} is contributed`);
  return entry;
}

function description(key: string): string {
  const entry = setting(key);
  return String(entry.markdownDescription ?? entry.description ?? '');
}

function source(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

describe('settings: one source', () => {
  it('contributes every key the extension reads, so VS Code supplies its default', () => {
    const read = [...source('src/extension/config.ts').matchAll(/read<[^>]+>\('([^']+)'\)/g)].map(
      (match) => match[1]!,
    );
    assert.ok(read.length >= 10, `found only ${read.length} settings read`);
    for (const key of read) {
      const entry = setting(key);
      assert.ok('default' in entry, `codeOracle.${key} has a default`);
    }
    assert.doesNotMatch(
      source('src/extension/config.ts'),
      /\.get<[^>]+>\('[^']+',/,
      'config.ts passes no default of its own to get()',
    );
  });

  it('agrees with the engine on the file-size cap, providers, modes and log levels', () => {
    assert.equal(setting('index.maxFileSize').default, DEFAULT_MAX_FILE_BYTES);
    assert.deepEqual(setting('llm.provider').enum, [...LLM_PROVIDERS]);
    assert.equal(setting('llm.provider').enumDescriptions?.length, LLM_PROVIDERS.length);
    assert.deepEqual(setting('chat.defaultMode').enum, [...ANSWER_MODES]);
    assert.deepEqual(ChatMode.options, [...ANSWER_MODES], 'the chat protocol has the same modes');
    assert.deepEqual(setting('log.level').enum, [...LOG_LEVELS]);
  });

  it("names the engine's real defaults in the settings' descriptions", () => {
    assert.ok(description('embeddingModel').includes(`\`${DEFAULT_MODEL_REPO}\``));
    assert.ok(description('llm.model').includes(`\`${DEFAULT_ANTHROPIC_MODEL}\``));
    assert.ok(description('llm.model').includes(`\`${DEFAULT_OPENAI_COMPATIBLE_MODEL}\``));
    assert.ok(description('llm.baseUrl').includes(`\`${DEFAULT_OPENAI_COMPATIBLE_BASE_URL}\``));
    assert.ok(
      description('llm.summarizeLongFunctions').includes(`${SUMMARIZE_MIN_LINES} lines or more`),
    );
  });

  it("keeps the webview's attachment limit equal to the protocol's", () => {
    // the webview restates it: a value import of the protocol would bundle zod into the page
    const restated = /const MAX_ATTACHMENT_CHARS = ([\d\s*_]+);/.exec(
      source('src/webview/chat/composer.ts'),
    );
    assert.ok(restated, 'the composer states its limit');
    const value = restated[1]!
      .split('*')
      .map((factor) => Number(factor.trim().replaceAll('_', '')))
      .reduce((product, factor) => product * factor, 1);
    assert.equal(value, MAX_ATTACHMENT_SIZE);
  });
});
