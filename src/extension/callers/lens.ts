import * as vscode from 'vscode';
import type { OutlineEntry } from '../../engine/engine';
import { callerSummary } from '../../engine/resolve/caller-summary';
import { readConfig } from '../config';
import type { Ctx } from '../ctx';

/**
 * "N callers" over every function and method the index knows in a file, read from the engine
 * worker (never computed on the editor's thread) once per file until the index changes; clicking
 * opens the callers tree. Ctx asks for the lenses again when the index or the setting changes.
 */
const LENS_KINDS = new Set(['function', 'method']);
/** How far an unsaved edit may have moved a definition from the line the index saw it on. */
const RELOCATE_LINES = 200;

export class CallersLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changeEmitter.event;
  private enabled = readConfig().callersLens;
  /** Outlines by document, as the index last saw them: typing asks for lenses, not the worker. */
  private readonly outlines = new Map<string, Promise<readonly OutlineEntry[]>>();
  private readonly closed: vscode.Disposable;

  constructor(private readonly ctx: Ctx) {
    this.closed = vscode.workspace.onDidCloseTextDocument((document) =>
      this.outlines.delete(document.uri.toString()),
    );
  }

  /** The index changed, or the setting did: outlines are read again and the editor asks for lenses. */
  refresh(): void {
    this.enabled = readConfig().callersLens;
    this.outlines.clear();
    this.changeEmitter.fire();
  }

  dispose(): void {
    this.closed.dispose();
    this.changeEmitter.dispose();
  }

  async provideCodeLenses(
    document: vscode.TextDocument,
    token: vscode.CancellationToken,
  ): Promise<vscode.CodeLens[]> {
    if (
      !this.enabled ||
      document.uri.scheme !== 'file' ||
      !vscode.workspace.getWorkspaceFolder(document.uri)
    )
      return [];
    const entries = await this.outline(document);
    if (token.isCancellationRequested) return [];
    return entries.flatMap((entry) => {
      const line = document.isDirty
        ? relocate(document, entry)
        : entry.startLine <= document.lineCount
          ? entry.startLine
          : null;
      if (line === null) return [];
      const title = callerSummary(entry);
      return [
        new vscode.CodeLens(new vscode.Range(line - 1, 0, line - 1, 0), {
          title,
          tooltip: `Trace the callers of ${entry.qualifiedName}`,
          command: 'codeOracle.showCallers',
          arguments: [document.uri, entry.name, entry.startLine],
        }),
      ];
    });
  }

  private outline(document: vscode.TextDocument): Promise<readonly OutlineEntry[]> {
    const key = document.uri.toString();
    let outline = this.outlines.get(key);
    if (!outline) {
      const folder = this.ctx.folderFor(document.uri);
      outline = folder
        ? this.ctx.client
            .outline(folder.root, this.ctx.relativePath(folder, document.uri))
            .then((result) =>
              result.ok ? result.value.filter((entry) => LENS_KINDS.has(entry.kind)) : [],
            )
        : Promise.resolve([]);
      this.outlines.set(key, outline);
    }
    return outline;
  }
}

/**
 * The line of an unsaved document that now holds `entry`'s definition: the line nearest to where
 * the index saw it that names it; none when the name is gone from around there.
 */
function relocate(document: vscode.TextDocument, entry: OutlineEntry): number | null {
  const name = new RegExp(`\\b${entry.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
  for (let distance = 0; distance <= RELOCATE_LINES; distance++) {
    for (const line of distance
      ? [entry.startLine - distance, entry.startLine + distance]
      : [entry.startLine]) {
      if (line >= 1 && line <= document.lineCount && name.test(document.lineAt(line - 1).text))
        return line;
    }
  }
  return null;
}
