import * as vscode from 'vscode';
import type { IndexStats } from '../engine/engine';
import type { Ctx } from './ctx';

/**
 * When the default embedding model cannot be downloaded (offline, a blocked network), the index
 * uses the small bundled model or none at all. The status bar's tooltip says so, which nobody
 * reads: this says it once per window, with the way out (a model folder on this machine).
 */
const USE_LOCAL_MODEL = 'Use a local model…';
const SHOW_LOG = 'Show Log';

export function watchModelDownload(ctx: Ctx): vscode.Disposable {
  let shown = false;
  return ctx.onReady((stats) => {
    if (shown) return;
    const message = downloadProblem(stats);
    if (!message) return;
    shown = true;
    void vscode.window.showWarningMessage(message, USE_LOCAL_MODEL, SHOW_LOG).then((choice) => {
      if (choice === USE_LOCAL_MODEL) return chooseLocalModel();
      if (choice === SHOW_LOG) return vscode.commands.executeCommand('codeOracle.showLog');
      return undefined;
    });
  });
}

/** The notification's text when a folder's model is not the one asked for because of a download. */
export function downloadProblem(stats: readonly IndexStats[]): string | null {
  for (const { embedding } of stats) {
    if (embedding.note) return `Code Oracle ${embedding.note}. Semantic search works, less well.`;
    if (!embedding.available && /could not download/i.test(embedding.reason ?? ''))
      return `Code Oracle could not download its embedding model, so search is lexical only. ${embedding.reason}`;
  }
  return null;
}

async function chooseLocalModel(): Promise<void> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: false,
    canSelectFolders: true,
    canSelectMany: false,
    openLabel: 'Use this model',
    title:
      'A Model2Vec model folder (model.safetensors, tokenizer.json, config.json) or an ONNX export',
  });
  const folder = picked?.[0];
  if (!folder) return;
  await vscode.workspace
    .getConfiguration('codeOracle')
    .update('embeddingModel', folder.fsPath, vscode.ConfigurationTarget.Global);
}
