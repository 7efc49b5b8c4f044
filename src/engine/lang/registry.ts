import type { LanguageId } from '../model';
import { cpp } from './cpp';
import { csharp } from './csharp';
import { javascript, tsx, typescript } from './ecmascript';
import { go } from './go';
import { java } from './java';
import { php } from './php';
import { python } from './python';
import { ruby } from './ruby';
import { rust } from './rust';
import type { LanguageSpec } from './spec';

/** Every language the index understands, and which one a file belongs to by its extension. */
export const LANGUAGES: readonly LanguageSpec[] = [
  python,
  javascript,
  typescript,
  tsx,
  go,
  java,
  rust,
  csharp,
  cpp,
  ruby,
  php,
];

const byExtension = new Map<string, LanguageSpec>();
for (const spec of LANGUAGES)
  for (const extension of spec.extensions) byExtension.set(extension, spec);

export function languageForPath(path: string): LanguageSpec | undefined {
  const dot = path.lastIndexOf('.');
  if (dot < 0 || dot < path.lastIndexOf('/')) return undefined;
  return byExtension.get(path.slice(dot).toLowerCase());
}

export function languageById(id: LanguageId): LanguageSpec {
  const spec = LANGUAGES.find((candidate) => candidate.id === id);
  if (!spec) throw new Error(`unknown language ${id}`);
  return spec;
}
