import { strict as assert } from 'node:assert';
import type { FileChunks } from '../../src/engine/index/chunks';
import type { CodeFact, ImportBinding } from '../../src/engine/model';
import { loadGrammar } from '../../src/engine/lang/grammars';
import { LANGUAGES, languageForPath } from '../../src/engine/lang/registry';
import { unwrap } from '../../src/engine/util/result';
import { chunkSource } from '../helpers/extract';
import { openEngine, Scratch } from '../helpers/workspace';

/** Definitions, chunks and facts for Go, Java, Rust, C#, C++, Ruby and PHP. */
const GO = `// Package server runs the HTTP front end.
package server

import (
	"errors"
	"fmt"
	log "github.com/sirupsen/logrus"
	"net/http"
)

var requests int

// Server accepts connections on one address.
type Server struct {
	addr    string
	handler http.Handler
}

// Serve listens on addr and serves until it fails.
func (s *Server) Serve(addr string) error {
	if addr == "" {
		return errors.New("empty address")
	}
	requests++
	s.addr = addr
	if err := s.listen(); err != nil {
		log.Error("listen failed")
		return fmt.Errorf("serve %s: %w", addr, err)
	}
	return nil
}

func (s *Server) listen() error {
	if s.handler == nil {
		panic("no handler configured")
	}
	return http.ListenAndServe(s.addr, s.handler)
}

// NewServer returns a server for addr.
func NewServer(addr string) *Server {
	return &Server{addr: addr}
}
`;

const JAVA = `package com.example;

import java.util.HashMap;
import java.util.Map;
import static java.util.Objects.requireNonNull;

/** A bounded in-memory cache. */
public class Cache extends BaseCache implements Store {
    private final Map<String, String> entries = new HashMap<>();
    private int hits;

    /** Creates an empty cache. */
    public Cache(Loader loader) {
        this.loader = requireNonNull(loader);
    }

    // Returns the cached value, loading it on a miss.
    public String get(String key) {
        if (key == null) {
            throw new IllegalArgumentException("key must not be null");
        }
        this.hits++;
        String value = this.entries.get(key);
        if (value == null) {
            log.error("cache miss");
            value = normalize(loader.load(key));
            this.entries.put(key, value);
        }
        return value;
    }

    static String normalize(String value) {
        return value.trim();
    }
}
`;

const RUST = `//! Key-value storage.
use std::collections::HashMap;
use std::io::{self, Write as W};

/// A key-value store with a write counter.
#[derive(Debug, Default)]
pub struct Store {
    items: HashMap<String, String>,
    writes: usize,
}

impl Store {
    /// Inserts a value, replacing any previous one.
    pub fn insert(&mut self, key: &str, value: String) -> Option<String> {
        if key.is_empty() {
            panic!("empty key: {}", value);
        }
        self.writes += 1;
        self.log(key);
        self.items.insert(normalize(key), value)
    }

    fn log(&self, key: &str) {
        log::error!("write to {}", key);
    }
}

impl io::Write for Store {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> { Ok(buf.len()) }
    fn flush(&mut self) -> io::Result<()> { Ok(()) }
}

/// Lower-cases a key.
pub fn normalize(key: &str) -> String {
    key.to_lowercase()
}
`;

const CSHARP = `// Caching services.
using System;
using System.Collections.Generic;
using Json = System.Text.Json;

namespace Shop.Services
{
    /// <summary>A bounded in-memory cache.</summary>
    public class Cache : CacheBase, IStore
    {
        private readonly Dictionary<string, string> entries = new();
        private int hits;

        public Cache(ILogger logger)
        {
            this.logger = logger;
        }

        /// <summary>Returns the cached value.</summary>
        public string Get(string key)
        {
            if (key == null)
                throw new ArgumentException("key must not be null");
            this.hits++;
            if (!this.entries.TryGetValue(key, out var value))
            {
                logger.LogError("cache miss");
                value = Normalize(key);
                this.entries.Add(key, value);
            }
            return value;
        }

        private static string Normalize(string key) => key.Trim();
    }
}
`;

const CPP = `// Cache implementation.
#include <string>
#include "cache.h"

namespace store {

/// A bounded cache of strings.
class Cache : public CacheBase {
public:
    explicit Cache(int capacity);
    std::string get(const std::string& key);
    void clear() { entries_.clear(); }

private:
    std::map<std::string, std::string> entries_;
    int hits_;
};

/// Lower-cases a key.
static std::string normalize(const std::string& key) {
    return key;
}

// Returns the cached value, loading it on a miss.
std::string Cache::get(const std::string& key) {
    if (key.empty()) {
        throw std::invalid_argument("key must not be empty");
    }
    this->hits_++;
    auto value = normalize(key);
    this->entries_.insert({key, value});
    spdlog::error("loaded {}", key);
    return value;
}

Cache::Cache(int capacity) : hits_(0) {}

}  // namespace store
`;

const RUBY = `# Caching helpers for the shop.
require 'json'
require_relative 'store'

module Shop
  # A bounded in-memory cache.
  class Cache < Store
    attr_reader :hits

    # Creates an empty cache.
    def initialize(loader)
      @loader = loader
      self.hits = 0
    end

    # Returns the cached value, loading it on a miss.
    def get(key)
      raise ArgumentError, "key must not be nil" if key.nil?
      self.hits += 1
      value = @entries.fetch(key) { load(key) }
      logger.error("cache miss for #{key}")
      Cache.normalize(value)
    end

    def self.normalize(value)
      value.strip
    end
  end
end

def build_cache
  Shop::Cache.new(JSON)
end
`;

const PHP = String.raw`<?php
/** Caching services. */
namespace App\Cache;

use App\Store\Store;
use Psr\Log\LoggerInterface as Logger;

/**
 * A bounded in-memory cache.
 */
class Cache extends BaseCache implements Store
{
    private array $entries = [];
    private int $hits = 0;

    public function __construct(private Logger $logger)
    {
        $this->loader = new Loader();
    }

    // Returns the cached value, loading it on a miss.
    public function get(string $key): string
    {
        if ($key === '') {
            throw new \InvalidArgumentException("key must not be empty");
        }
        $this->hits++;
        if (!array_key_exists($key, $this->entries)) {
            $this->logger->error('cache miss');
            $this->entries[$key] = normalize($this->loader->load($key));
        }
        return $this->entries[$key];
    }
}

function normalize(string $value): string
{
    return trim($value);
}
`;

function definitions(result: FileChunks): string[] {
  return result.facts
    .filter((fact) => fact.kind !== 'module')
    .map((fact) => `${fact.kind} ${fact.qualifiedName}`);
}

function fact(result: FileChunks, qualifiedName: string): CodeFact {
  const found = result.facts.find((candidate) => candidate.qualifiedName === qualifiedName);
  assert.ok(found, `fact ${qualifiedName} exists`);
  return found;
}

function moduleFact(result: FileChunks): CodeFact {
  return fact(result, '<module>');
}

function calls(found: CodeFact): string[] {
  return found.calls.map(
    (call) => `${call.receiver === null ? '' : `${call.receiver}.`}${call.name}@${call.line}`,
  );
}

function imports(
  found: CodeFact,
): [string, string, string | null, ImportBinding['kind'], number][] {
  return found.imports.map((binding) => [
    binding.local,
    binding.module,
    binding.imported,
    binding.kind,
    binding.line,
  ]);
}

function chunkIds(result: FileChunks, level: 'class' | 'function'): string[] {
  return result.chunks.filter((chunk) => chunk.level === level).map((chunk) => chunk.id);
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Every function chunk is the exact source of its definition (leading comments included) and
 * contains the definition's signature; every definition points at an existing chunk.
 */
function assertWholeDefinitions(result: FileChunks, source: string): void {
  const lines = source.split('\n');
  const byId = new Map(result.chunks.map((chunk) => [chunk.id, chunk]));
  for (const found of result.facts) {
    const chunk = byId.get(found.chunkId ?? '');
    assert.ok(chunk, `${found.qualifiedName} has chunk ${found.chunkId}`);
    if (chunk.level !== 'function') continue;
    assert.equal(chunk.content, lines.slice(chunk.startLine - 1, chunk.endLine).join('\n'));
    assert.equal(
      chunk.endLine,
      found.endLine,
      `${found.qualifiedName} chunk ends with its definition`,
    );
    assert.ok(chunk.startLine <= found.startLine);
    assert.ok(
      collapse(chunk.content).includes(collapse(found.signature)),
      `${chunk.id} contains ${found.signature}`,
    );
  }
}

describe('language specs', () => {
  it('compiles the query of every registered language', async () => {
    for (const spec of LANGUAGES) {
      const grammar = await loadGrammar(spec);
      assert.ok(grammar.query.captureNames.length > 0, spec.id);
    }
  });

  it('maps extensions to languages, C and headers to C++', () => {
    const ids = [
      'a.go',
      'A.java',
      'a.rs',
      'A.cs',
      'a.cpp',
      'a.cc',
      'a.hpp',
      'a.c',
      'a.h',
      'a.rb',
      'a.php',
    ].map((path) => languageForPath(path)?.id);
    assert.deepEqual(ids, [
      'go',
      'java',
      'rust',
      'csharp',
      'cpp',
      'cpp',
      'cpp',
      'cpp',
      'cpp',
      'ruby',
      'php',
    ]);
  });

  describe('Go', () => {
    const path = 'server/server.go';
    let result: FileChunks;
    before(async () => {
      result = await chunkSource(path, GO);
    });

    it('makes receiver types the owners of methods and types class-level containers', () => {
      assert.deepEqual(definitions(result), [
        'struct Server',
        'method Server.Serve',
        'method Server.listen',
        'function NewServer',
      ]);
      assert.deepEqual(chunkIds(result, 'class'), [`${path}::Server::None::class`]);
      assert.deepEqual(chunkIds(result, 'function'), [
        `${path}::Server::Serve::function`,
        `${path}::Server::listen::function`,
        `${path}::None::NewServer::function`,
      ]);
      const serve = fact(result, 'Server.Serve');
      assert.equal(serve.className, 'Server');
      assert.deepEqual([serve.startLine, serve.endLine], [20, 31]);
      assert.equal(serve.signature, 'func (s *Server) Serve(addr string) error');
      assert.equal(serve.docstring, 'Serve listens on addr and serves until it fails.');
      const server = result.chunks.find((chunk) => chunk.id === `${path}::Server::None::class`)!;
      assert.equal(server.startLine, 13);
      assert.ok(
        server.content.includes('addr string') && server.content.includes('handler http.Handler'),
      );
      assertWholeDefinitions(result, GO);
    });

    it('records calls, panics, error strings, package-level mutations and imports', () => {
      const serve = fact(result, 'Server.Serve');
      assert.deepEqual(calls(serve), [
        'errors.New@22',
        's.listen@26',
        'log.Error@27',
        'fmt.Errorf@28',
      ]);
      assert.deepEqual(serve.raises, []);
      assert.deepEqual(serve.errorStrings, ['empty address', 'listen failed', 'serve %s: %w']);
      // `s.addr = …` writes a field of the receiver it was handed: state its callers see.
      assert.deepEqual(serve.mutates, ['requests', 's.addr']);
      const listen = fact(result, 'Server.listen');
      assert.deepEqual(listen.raises, ['panic']);
      assert.deepEqual(listen.errorStrings, ['no handler configured']);
      assert.deepEqual(calls(listen), ['panic@35', 'http.ListenAndServe@37']);
      assert.deepEqual(calls(fact(result, 'NewServer')), ['Server@42']);
      const module = moduleFact(result);
      assert.equal(module.docstring, 'Package server runs the HTTP front end.');
      assert.deepEqual(imports(module), [
        ['errors', 'errors', null, 'module', 5],
        ['fmt', 'fmt', null, 'module', 6],
        ['log', 'github.com/sirupsen/logrus', null, 'module', 7],
        ['http', 'net/http', null, 'module', 8],
      ]);
    });
  });

  describe('Java', () => {
    const path = 'src/main/java/com/example/Cache.java';
    let result: FileChunks;
    before(async () => {
      result = await chunkSource(path, JAVA);
    });

    it('extracts the class with its constructor and methods', () => {
      assert.deepEqual(definitions(result), [
        'class Cache',
        'method Cache.Cache',
        'method Cache.get',
        'method Cache.normalize',
      ]);
      assert.deepEqual(chunkIds(result, 'class'), [`${path}::Cache::None::class`]);
      assert.deepEqual(chunkIds(result, 'function'), [
        `${path}::Cache::Cache::function`,
        `${path}::Cache::get::function`,
        `${path}::Cache::normalize::function`,
      ]);
      const cache = fact(result, 'Cache');
      assert.deepEqual(cache.bases, ['BaseCache', 'Store']);
      assert.equal(cache.docstring, 'A bounded in-memory cache.');
      const get = fact(result, 'Cache.get');
      assert.deepEqual([get.startLine, get.endLine], [18, 30]);
      assert.equal(get.signature, 'public String get(String key)');
      assert.equal(get.docstring, 'Returns the cached value, loading it on a miss.');
      assert.equal(fact(result, 'Cache.Cache').docstring, 'Creates an empty cache.');
      assertWholeDefinitions(result, JAVA);
    });

    it('records calls, throws, error strings, this-mutations and imports', () => {
      const get = fact(result, 'Cache.get');
      assert.deepEqual(calls(get), [
        'IllegalArgumentException@20',
        'this.entries.get@23',
        'log.error@25',
        'normalize@26',
        'loader.load@26',
        'this.entries.put@27',
      ]);
      assert.deepEqual(get.raises, ['IllegalArgumentException']);
      assert.deepEqual(get.errorStrings, ['key must not be null', 'cache miss']);
      assert.deepEqual([...get.mutates].sort(), ['this.entries', 'this.hits']);
      assert.deepEqual(fact(result, 'Cache.Cache').mutates, ['this.loader']);
      assert.deepEqual(imports(moduleFact(result)), [
        ['HashMap', 'java.util.HashMap', null, 'module', 3],
        ['Map', 'java.util.Map', null, 'module', 4],
        ['requireNonNull', 'java.util.Objects', 'requireNonNull', 'named', 5],
      ]);
    });
  });

  describe('Rust', () => {
    const path = 'src/store.rs';
    let result: FileChunks;
    before(async () => {
      result = await chunkSource(path, RUST);
    });

    it('gives impl methods to their type and keeps attributes and docs with their item', () => {
      assert.deepEqual(definitions(result), [
        'struct Store',
        'method Store.insert',
        'method Store.log',
        'method Store.write',
        'method Store.flush',
        'function normalize',
      ]);
      assert.deepEqual(chunkIds(result, 'class'), [`${path}::Store::None::class`]);
      assert.ok(chunkIds(result, 'function').includes(`${path}::Store::insert::function`));
      assert.ok(chunkIds(result, 'function').includes(`${path}::None::normalize::function`));
      const store = result.chunks.find((chunk) => chunk.id === `${path}::Store::None::class`)!;
      assert.equal(store.startLine, 5);
      assert.equal(fact(result, 'Store').docstring, 'A key-value store with a write counter.');
      const insert = fact(result, 'Store.insert');
      assert.deepEqual([insert.startLine, insert.endLine], [14, 21]);
      assert.equal(
        insert.signature,
        'pub fn insert(&mut self, key: &str, value: String) -> Option<String>',
      );
      assert.equal(insert.docstring, 'Inserts a value, replacing any previous one.');
      assert.equal(fact(result, 'normalize').docstring, 'Lower-cases a key.');
      assertWholeDefinitions(result, RUST);
    });

    it('records calls, panics, error macros, self-mutations and use declarations', () => {
      const insert = fact(result, 'Store.insert');
      assert.deepEqual(calls(insert), [
        'key.is_empty@15',
        'self.log@19',
        'self.items.insert@20',
        'normalize@20',
      ]);
      assert.deepEqual(insert.raises, ['panic']);
      assert.deepEqual(insert.errorStrings, ['empty key: {}']);
      assert.deepEqual([...insert.mutates].sort(), ['self.items', 'self.writes']);
      assert.deepEqual(fact(result, 'Store.log').errorStrings, ['write to {}']);
      const module = moduleFact(result);
      assert.equal(module.docstring, 'Key-value storage.');
      assert.deepEqual(imports(module), [
        ['HashMap', 'std::collections', 'HashMap', 'named', 2],
        ['io', 'std::io', null, 'module', 3],
        ['W', 'std::io', 'Write', 'named', 3],
      ]);
    });
  });

  describe('C#', () => {
    const path = 'Services/Cache.cs';
    let result: FileChunks;
    before(async () => {
      result = await chunkSource(path, CSHARP);
    });

    it('extracts classes inside namespaces with constructors and methods', () => {
      assert.deepEqual(definitions(result), [
        'class Cache',
        'method Cache.Cache',
        'method Cache.Get',
        'method Cache.Normalize',
      ]);
      assert.deepEqual(chunkIds(result, 'class'), [`${path}::Cache::None::class`]);
      assert.deepEqual(chunkIds(result, 'function'), [
        `${path}::Cache::Cache::function`,
        `${path}::Cache::Get::function`,
        `${path}::Cache::Normalize::function`,
      ]);
      assert.deepEqual(fact(result, 'Cache').bases, ['CacheBase', 'IStore']);
      const get = fact(result, 'Cache.Get');
      assert.deepEqual([get.startLine, get.endLine], [20, 32]);
      assert.equal(get.signature, 'public string Get(string key)');
      assert.equal(get.docstring, '<summary>Returns the cached value.</summary>');
      assert.equal(
        fact(result, 'Cache.Normalize').signature,
        'private static string Normalize(string key)',
      );
      assertWholeDefinitions(result, CSHARP);
    });

    it('records calls, throws, error strings, this-mutations and using directives', () => {
      const get = fact(result, 'Cache.Get');
      assert.deepEqual(calls(get), [
        'ArgumentException@23',
        'this.entries.TryGetValue@25',
        'logger.LogError@27',
        'Normalize@28',
        'this.entries.Add@29',
      ]);
      assert.deepEqual(get.raises, ['ArgumentException']);
      assert.deepEqual(get.errorStrings, ['key must not be null', 'cache miss']);
      assert.deepEqual([...get.mutates].sort(), ['this.entries', 'this.hits']);
      assert.deepEqual(fact(result, 'Cache.Cache').mutates, ['this.logger']);
      const module = moduleFact(result);
      assert.equal(module.docstring, 'Caching services.');
      assert.deepEqual(imports(module), [
        ['*', 'System', '*', 'wildcard', 2],
        ['*', 'System.Collections.Generic', '*', 'wildcard', 3],
        ['Json', 'System.Text.Json', null, 'module', 4],
      ]);
    });
  });

  describe('C++', () => {
    const path = 'src/cache.cpp';
    let result: FileChunks;
    before(async () => {
      result = await chunkSource(path, CPP);
    });

    it('owns out-of-class definitions by their qualifier and lists member declarations', () => {
      assert.deepEqual(definitions(result), [
        'class Cache',
        'method Cache.clear',
        'function normalize',
        'method Cache.get',
        'method Cache.Cache',
      ]);
      assert.deepEqual(chunkIds(result, 'class'), [`${path}::Cache::None::class`]);
      assert.deepEqual(chunkIds(result, 'function'), [
        `${path}::Cache::clear::function`,
        `${path}::None::normalize::function`,
        `${path}::Cache::get::function`,
        `${path}::Cache::Cache::function`,
      ]);
      const cache = result.chunks.find((chunk) => chunk.id === `${path}::Cache::None::class`)!;
      assert.equal(cache.startLine, 7);
      assert.ok(cache.content.includes('std::string get(const std::string& key);'));
      assert.deepEqual(fact(result, 'Cache').bases, ['CacheBase']);
      assert.equal(fact(result, 'Cache').docstring, 'A bounded cache of strings.');
      const get = fact(result, 'Cache.get');
      assert.equal(get.className, 'Cache');
      assert.deepEqual([get.startLine, get.endLine], [25, 34]);
      assert.equal(get.signature, 'std::string Cache::get(const std::string& key)');
      assert.equal(get.docstring, 'Returns the cached value, loading it on a miss.');
      assert.equal(fact(result, 'Cache.Cache').signature, 'Cache::Cache(int capacity)');
      assertWholeDefinitions(result, CPP);
    });

    it('records calls, throws, error strings, this-mutations and includes', () => {
      const get = fact(result, 'Cache.get');
      assert.deepEqual(calls(get), [
        'key.empty@26',
        'std.invalid_argument@27',
        'normalize@30',
        'this->entries_.insert@31',
        'spdlog.error@32',
      ]);
      assert.deepEqual(get.raises, ['invalid_argument']);
      assert.deepEqual(get.errorStrings, ['key must not be empty', 'loaded {}']);
      assert.deepEqual([...get.mutates].sort(), ['this.entries_', 'this.hits_']);
      const module = moduleFact(result);
      assert.equal(module.docstring, 'Cache implementation.');
      assert.deepEqual(imports(module), [
        ['*', 'string', '*', 'wildcard', 2],
        ['*', 'cache.h', '*', 'wildcard', 3],
      ]);
    });

    it('credits C and C++ functions with the file-level variables they assign', async () => {
      const result = await chunkSource(
        'counter.c',
        'static int counter = 0;\n\nvoid bump(void) { counter++; }\n\nvoid local(void) { int counter = 1; counter++; }\n',
      );
      assert.deepEqual(fact(result, 'bump').mutates, ['counter']);
      assert.deepEqual(fact(result, 'local').mutates, []);
    });
  });

  describe('Ruby', () => {
    const path = 'lib/shop/cache.rb';
    let result: FileChunks;
    before(async () => {
      result = await chunkSource(path, RUBY);
    });

    it('nests classes in modules and methods, including singleton methods, in classes', () => {
      assert.deepEqual(definitions(result), [
        'class Shop',
        'class Shop.Cache',
        'method Shop.Cache.initialize',
        'method Shop.Cache.get',
        'method Shop.Cache.normalize',
        'function build_cache',
      ]);
      assert.deepEqual(chunkIds(result, 'class'), [
        `${path}::Shop::None::class`,
        `${path}::Shop.Cache::None::class`,
      ]);
      assert.deepEqual(chunkIds(result, 'function'), [
        `${path}::Shop.Cache::initialize::function`,
        `${path}::Shop.Cache::get::function`,
        `${path}::Shop.Cache::normalize::function`,
        `${path}::None::build_cache::function`,
      ]);
      const cache = fact(result, 'Shop.Cache');
      assert.deepEqual(cache.bases, ['Store']);
      assert.equal(cache.docstring, 'A bounded in-memory cache.');
      assert.ok(
        result.chunks
          .find((chunk) => chunk.id === `${path}::Shop.Cache::None::class`)!
          .content.includes('attr_reader :hits'),
      );
      const get = fact(result, 'Shop.Cache.get');
      assert.deepEqual([get.startLine, get.endLine], [17, 23]);
      assert.equal(get.signature, 'def get(key)');
      assert.equal(get.docstring, 'Returns the cached value, loading it on a miss.');
      assert.equal(fact(result, 'Shop.Cache.normalize').signature, 'def self.normalize(value)');
      assertWholeDefinitions(result, RUBY);
    });

    it('records calls, raises, error strings, self-mutations and requires', () => {
      const get = fact(result, 'Shop.Cache.get');
      assert.deepEqual(calls(get), [
        'key.nil?@18',
        'self.hits@19',
        '@entries.fetch@20',
        'load@20',
        'logger.error@21',
        'Cache.normalize@22',
      ]);
      assert.deepEqual(get.raises, ['ArgumentError']);
      assert.deepEqual(get.errorStrings, ['key must not be nil', 'cache miss for #{key}']);
      assert.deepEqual(get.mutates, ['self.hits']);
      assert.deepEqual(calls(fact(result, 'build_cache')), ['Shop.Cache@32']);
      const module = moduleFact(result);
      assert.equal(module.docstring, 'Caching helpers for the shop.');
      assert.deepEqual(imports(module), [
        ['*', 'json', '*', 'wildcard', 2],
        ['*', 'store', '*', 'wildcard', 3],
      ]);
    });

    it('reads the message of raise X.new("…") and of a bare raise "…"', async () => {
      const source =
        'def check(x)\n  raise KeyError.new("missing #{x}") unless x\n  raise "plain failure"\nend\n';
      const check = fact(await chunkSource('check.rb', source), 'check');
      assert.deepEqual(check.raises, ['KeyError']);
      assert.deepEqual(check.errorStrings, ['missing #{x}', 'plain failure']);
    });
  });

  describe('PHP', () => {
    const path = 'src/Cache.php';
    let result: FileChunks;
    before(async () => {
      result = await chunkSource(path, PHP);
    });

    it('extracts classes with methods and free functions', () => {
      assert.deepEqual(definitions(result), [
        'class Cache',
        'method Cache.__construct',
        'method Cache.get',
        'function normalize',
      ]);
      assert.deepEqual(chunkIds(result, 'class'), [`${path}::Cache::None::class`]);
      assert.deepEqual(chunkIds(result, 'function'), [
        `${path}::Cache::__construct::function`,
        `${path}::Cache::get::function`,
        `${path}::None::normalize::function`,
      ]);
      const cache = fact(result, 'Cache');
      assert.deepEqual(cache.bases, ['BaseCache', 'Store']);
      assert.equal(cache.docstring, 'A bounded in-memory cache.');
      const get = fact(result, 'Cache.get');
      assert.deepEqual([get.startLine, get.endLine], [22, 33]);
      assert.equal(get.signature, 'public function get(string $key): string');
      assert.equal(get.docstring, 'Returns the cached value, loading it on a miss.');
      assertWholeDefinitions(result, PHP);
    });

    it('records calls, throws, error strings, $this-mutations and use declarations', () => {
      const get = fact(result, 'Cache.get');
      assert.deepEqual(calls(get), [
        'InvalidArgumentException@25',
        'array_key_exists@28',
        '$this->logger.error@29',
        'normalize@30',
        '$this->loader.load@30',
      ]);
      assert.deepEqual(get.raises, ['InvalidArgumentException']);
      assert.deepEqual(get.errorStrings, ['key must not be empty', 'cache miss']);
      assert.deepEqual([...get.mutates].sort(), ['$this.entries', '$this.hits']);
      const construct = fact(result, 'Cache.__construct');
      assert.deepEqual(construct.mutates, ['$this.loader']);
      assert.deepEqual(calls(construct), ['Loader@18']);
      const module = moduleFact(result);
      assert.equal(module.docstring, 'Caching services.');
      assert.deepEqual(imports(module), [
        ['Store', 'App\\Store\\Store', null, 'module', 5],
        ['Logger', 'Psr\\Log\\LoggerInterface', null, 'module', 6],
      ]);
    });

    it('credits a PHP function with a file-level variable only after `global`', async () => {
      const source =
        '<?php\n$registry = [];\nfunction register($name) { global $registry; $registry[$name] = true; }\nfunction shadow() { $registry = []; $registry[1] = 2; }\n';
      const result = await chunkSource('registry.php', source);
      assert.deepEqual(fact(result, 'register').mutates, ['$registry']);
      assert.deepEqual(fact(result, 'shadow').mutates, []);
    });
  });

  describe('Python method calls', () => {
    it('reads error logs and mutating methods from the call pattern: names and arguments exact', async () => {
      const source = [
        'events = []',
        'def record(event, log):',
        '    events.append(event)',
        '    events.copy()',
        '    log.error("disk full")',
        '    log.warning("slow %s", event)',
        '    log.exception(line for line in event)',
        '    log.info("fine")',
        '    log.errors("not a log level")',
        '',
      ].join('\n');
      const record = fact(await chunkSource('record.py', source), 'record');
      assert.deepEqual(record.mutates, ['events']);
      assert.deepEqual(record.errorStrings, ['disk full', 'slow %s']);
      assert.deepEqual(calls(record), [
        'events.append@3',
        'events.copy@4',
        'log.error@5',
        'log.warning@6',
        'log.exception@7',
        'log.info@8',
        'log.errors@9',
      ]);
    });
  });

  describe('syntax errors', () => {
    const broken: [path: string, source: string, survivor: string][] = [
      ['a.go', 'package a\n\nfunc ok() int { return 1 }\n\nfunc broken( {\n', 'ok'],
      ['A.java', 'class A {\n  int ok() { return 1; }\n  int broken( {\n}\n', 'A.ok'],
      ['a.rs', 'fn ok() -> i32 { 1 }\n\nfn broken( {\n', 'ok'],
      ['A.cs', 'class A {\n  int Ok() { return 1; }\n  int Broken( {\n}\n', 'A.Ok'],
      ['a.cpp', 'int ok() { return 1; }\n\nint broken( {\n', 'ok'],
      ['a.rb', 'def ok\n  1\nend\n\ndef broken(\n', 'ok'],
      ['a.php', '<?php\nfunction ok() { return 1; }\n\nfunction broken( {\n', 'ok'],
    ];
    for (const [path, source, survivor] of broken) {
      it(`keeps the valid definitions of ${path}`, async () => {
        const result = await chunkSource(path, source);
        assert.ok(result.parsed.anomalies.length > 0, 'the error is reported');
        const found = fact(result, survivor);
        assert.ok(
          result.chunks.some((chunk) => chunk.id === found.chunkId && chunk.level === 'function'),
        );
      });
    }
  });
});

describe('language details across the extractor', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it("does not take a comment that ends a line of code as the next definition's documentation", async () => {
    const result = await chunkSource(
      'a.cpp',
      'namespace store {\nint a() { return 1; }\n}  // namespace store\n\nint b() { return 2; }\n',
    );
    assert.equal(result.facts.find((f) => f.name === 'b')!.docstring, null);
  });

  it('links methods defined outside their type to its class chunk and lists them there', async () => {
    const result = await chunkSource(
      'srv.go',
      'package srv\n\n// Server serves.\ntype Server struct {\n\taddr string\n}\n\n// Serve runs it.\nfunc (s *Server) Serve() error {\n\treturn nil\n}\n',
    );
    const serve = result.chunks.find((chunk) => chunk.id === 'srv.go::Server::Serve::function')!;
    assert.equal(serve.parentClassId, 'srv.go::Server::None::class');
    const server = result.chunks.find((chunk) => chunk.id === 'srv.go::Server::None::class')!;
    assert.match(server.content, /func \(s \*Server\) Serve\(\) error/);
  });

  it('records Ruby instance-variable writes as mutations of the object', async () => {
    const result = await chunkSource(
      'counter.rb',
      'class Counter\n  def bump\n    @count += 1\n    @seen = true\n    @log.push(1)\n  end\nend\n',
    );
    assert.deepEqual(
      [...result.facts.find((f) => f.qualifiedName === 'Counter.bump')!.mutates].sort(),
      ['@count', '@log', '@seen'],
    );
  });

  it('resolves Java static calls and constructions through an imported class', async () => {
    const root = scratch.tree({
      'src/com/shop/util/Prices.java':
        'package com.shop.util;\n\npublic class Prices {\n  public static int round(int cents) {\n    return cents;\n  }\n}\n',
      'src/com/shop/Cart.java':
        'package com.shop;\n\nimport com.shop.util.Prices;\n\npublic class Cart {\n  int total(int cents) {\n    Prices helper = new Prices();\n    return Prices.round(cents);\n  }\n}\n',
    });
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const callers = (id: string) =>
        engine.graph.callers(id).map((call) => `${call.callerId}@${call.site.line}`);
      assert.deepEqual(callers('src/com/shop/util/Prices.java::Prices.round'), [
        'src/com/shop/Cart.java::Cart.total@8',
      ]);
      assert.deepEqual(callers('src/com/shop/util/Prices.java::Prices'), [
        'src/com/shop/Cart.java::Cart.total@7',
      ]);
    } finally {
      engine.dispose();
    }
  });
});
