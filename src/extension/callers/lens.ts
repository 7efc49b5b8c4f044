import * as vscode from 'vscode';
import { readConfig } from '../config';
import type { Ctx } from '../ctx';

/**
 * "N callers" over every function and method the index knows in a file, read from the engine
 * worker (never computed on the editor's thread); clicking opens the callers tree. Ctx asks
 * for them again when the index changes.
 */
const LENS_KINDS = new Set(['function', 'method']);

export class CallersLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changeEmitter.event;

  constructor(private readonly ctx: Ctx) {}

  /** The index changed, or the setting did: the editor asks for lenses again. */
  refresh(): void {
    this.changeEmitter.fire();
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }

  async provideCodeLenses(document: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    if (!readConfig().callersLens || document.uri.scheme !== 'file') return [];
    const folder = this.ctx.folderFor(document.uri);
    if (!folder || !vscode.workspace.getWorkspaceFolder(document.uri)) return [];
    const outline = await this.ctx.client.outline(folder.root, this.ctx.relativePath(folder, document.uri));
    if (!outline.ok || token.isCancellationRequested) return [];
    return outline.value
      .filter((entry) => LENS_KINDS.has(entry.kind) && entry.startLine <= document.lineCount)
      .map((entry) => {
        const range = new vscode.Range(entry.startLine - 1, 0, entry.startLine - 1, 0);
        const title = entry.callers ? `${entry.callers} caller${entry.callers === 1 ? '' : 's'}` : 'no callers found';
        return new vscode.CodeLens(range, { title, tooltip: `Trace the callers of ${entry.qualifiedName}`, command: 'codeOracle.showCallers', arguments: [document.uri, entry.name, entry.startLine] });
      });
  }
}
