import { languageById } from '../lang/registry';
import type { ModuleSystem } from '../lang/spec';
import type { LanguageId } from '../model';
import { parentDir } from '../util/paths';

/**
 * Maps import specifiers to indexed files, per module system: Python dotted names (relative and
 * absolute, including the indexed folder's own package name), ECMAScript relative paths with
 * extension and index-file probing, Go package folders and Java class paths by suffix.
 */
const ECMASCRIPT_EXTENSIONS = [
  '',
  '.ts',
  '.tsx',
  '.d.ts',
  '.js',
  '.jsx',
  '.mjs',
  '.cjs',
  '.mts',
  '.cts',
];
const INDEX_FILES = ['/index.ts', '/index.tsx', '/index.js', '/index.jsx', '/index.mjs'];

/** The suffixes a file is found by: its module's last name (Python), else its stem and its folder's name. */
function suffixesOf(path: string, language: LanguageId): string[] {
  if (languageById(language).moduleSystem === 'python') {
    const dotted = pythonModuleName(path);
    return [dotted.slice(dotted.lastIndexOf('.') + 1)];
  }
  const folder = parentDir(path);
  return [stem(path), folder.slice(folder.lastIndexOf('/') + 1)];
}

export class ModuleMap {
  private readonly files = new Map<string, LanguageId>();
  /** Python dotted module name (without the root package prefix) → file. */
  private readonly pythonModules = new Map<string, string>();
  /** Last segment of a module or folder name → files, for suffix matching. */
  private readonly bySuffix = new Map<string, Set<string>>();
  /** Answers of `resolve`, dropped whenever the set of files changes. */
  private readonly cache = new Map<string, string[]>();

  /** @param rootPackage the indexed folder's own name, which absolute imports may start with. */
  constructor(private readonly rootPackage: string) {}

  has(path: string): boolean {
    return this.files.has(path);
  }

  add(path: string, language: LanguageId): void {
    this.cache.clear();
    this.files.set(path, language);
    if (languageById(language).moduleSystem === 'python')
      this.pythonModules.set(pythonModuleName(path), path);
    for (const suffix of suffixesOf(path, language)) this.index(suffix, path);
  }

  remove(path: string): void {
    const language = this.files.get(path);
    if (!language) return;
    this.cache.clear();
    this.files.delete(path);
    // only the sets `add` filed it in: every set was ~9 ms a save at 100k files
    for (const suffix of suffixesOf(path, language)) this.bySuffix.get(suffix)?.delete(path);
    if (languageById(language).moduleSystem === 'python') this.forgetPythonModule(path);
  }

  /**
   * Drops `path` as its dotted name's file. Another file may hold the same name (`pkg.py` beside
   * `pkg/__init__.py`, `mod.pyi` beside `mod.py`): the name then stays with the one of them added
   * last, as if the files left had been added again in their order.
   */
  private forgetPythonModule(path: string): void {
    const dotted = pythonModuleName(path);
    if (this.pythonModules.get(dotted) !== path) return;
    this.pythonModules.delete(dotted);
    const [suffix] = suffixesOf(path, 'python');
    // a suffix set holds its files in the order they were last added
    for (const other of this.bySuffix.get(suffix!) ?? [])
      if (pythonModuleName(other) === dotted && this.isPython(other))
        this.pythonModules.set(dotted, other);
  }

  private isPython(path: string): boolean {
    const language = this.files.get(path);
    return language !== undefined && languageById(language).moduleSystem === 'python';
  }

  /** The files an import of `specifier` in `fromPath` refers to (a Go package is several files). */
  resolve(fromPath: string, system: ModuleSystem, specifier: string): string[] {
    // Relative specifiers depend on the importing folder; others do not.
    const key = `${system}\0${specifier.startsWith('.') ? parentDir(fromPath) : ''}\0${specifier}`;
    let resolved = this.cache.get(key);
    if (!resolved) {
      resolved = this.lookup(fromPath, system, specifier);
      this.cache.set(key, resolved);
    }
    return resolved;
  }

  private lookup(fromPath: string, system: ModuleSystem, specifier: string): string[] {
    switch (system) {
      case 'python':
        return this.resolvePython(fromPath, specifier);
      case 'ecmascript':
        return this.resolveEcmascript(fromPath, specifier);
      case 'go':
        return this.resolveBySuffix(specifier, '/', (path) => parentDir(path));
      case 'java':
        return this.resolveBySuffix(specifier, '.', (path) => path.replace(/\.[^.]+$/, ''));
      default:
        return [];
    }
  }

  private resolvePython(fromPath: string, specifier: string): string[] {
    const leadingDots = /^\.*/.exec(specifier)![0].length;
    const rest = specifier.slice(leadingDots);
    if (leadingDots > 0) {
      const packagePath = pythonModuleName(fromPath).split('.');
      // A module's own package is its name minus the last part; __init__ already names the package.
      const isPackageInit = /(^|\/)__init__\.pyi?$/.test(fromPath);
      const base = packagePath.slice(
        0,
        packagePath.length - (isPackageInit ? 0 : 1) - (leadingDots - 1),
      );
      const dotted = [...base, ...(rest ? rest.split('.') : [])].filter(Boolean).join('.');
      const found = this.pythonModules.get(dotted);
      return found ? [found] : [];
    }
    const withoutRoot = rest.startsWith(`${this.rootPackage}.`)
      ? rest.slice(this.rootPackage.length + 1)
      : rest === this.rootPackage
        ? ''
        : null;
    if (withoutRoot !== null) {
      const found = this.pythonModules.get(withoutRoot);
      if (found) return [found];
    }
    const exact = this.pythonModules.get(rest);
    if (exact) return [exact];
    const last = rest.slice(rest.lastIndexOf('.') + 1);
    const candidates = [...(this.bySuffix.get(last) ?? [])].filter((path) => {
      const dotted = pythonModuleName(path);
      return dotted === rest || dotted.endsWith(`.${rest}`);
    });
    return candidates.length === 1 ? candidates : [];
  }

  private resolveEcmascript(fromPath: string, specifier: string): string[] {
    if (!specifier.startsWith('.')) return [];
    const joined = joinPath(parentDir(fromPath), specifier);
    const withoutJsExtension = joined.replace(/\.(m|c)?js$/, '');
    for (const base of [joined, withoutJsExtension]) {
      for (const extension of ECMASCRIPT_EXTENSIONS)
        if (this.files.has(base + extension)) return [base + extension];
      for (const index of INDEX_FILES) if (this.files.has(base + index)) return [base + index];
    }
    return [];
  }

  private resolveBySuffix(
    specifier: string,
    separator: string,
    unitOf: (path: string) => string,
  ): string[] {
    const segments = specifier.split(separator).filter(Boolean);
    const last = segments[segments.length - 1];
    if (!last) return [];
    const wanted = segments.join('/');
    return [...(this.bySuffix.get(last) ?? [])].filter((path) => {
      const unit = unitOf(path);
      return unit === wanted || unit.endsWith(`/${wanted}`);
    });
  }

  private index(key: string, path: string): void {
    if (!key) return;
    let set = this.bySuffix.get(key);
    if (!set) this.bySuffix.set(key, (set = new Set()));
    set.add(path);
  }
}

/** `pkg/sub/mod.py` → `pkg.sub.mod`; `pkg/__init__.py` → `pkg`. */
export function pythonModuleName(path: string): string {
  return path
    .replace(/\.pyi?$|\.pyw$/, '')
    .replace(/(^|\/)__init__$/, '')
    .split('/')
    .filter(Boolean)
    .join('.');
}

function stem(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.indexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

function joinPath(directory: string, relative: string): string {
  const parts = directory === '.' ? [] : directory.split('/');
  for (const segment of relative.split('/')) {
    if (segment === '.' || segment === '') continue;
    if (segment === '..') parts.pop();
    else parts.push(segment);
  }
  return parts.join('/');
}
