import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { POTION_MODEL } from './workspace';

/**
 * Mocha root hook: the tests that embed use the small model shipped in models/. When a clone lacks
 * it (a partial checkout, a failed LFS fetch), say so once instead of letting each test fail on
 * a missing file.
 */
export const mochaHooks = {
  beforeAll(): void {
    const weights = path.join(POTION_MODEL, 'model.safetensors');
    if (!existsSync(weights))
      throw new Error(
        `The shipped embedding model is missing: ${path.relative(process.cwd(), weights)} does not exist. ` +
          'The tests need it; restore it with `git checkout -- models/potion-base-2M`.',
      );
  },
};
