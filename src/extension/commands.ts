import * as vscode from 'vscode';
import type { Ctx } from './ctx';

/** Each command is a small factory taking the context, as in rust-analyzer's extension. */
export type CommandFactory = (ctx: Ctx) => (...args: unknown[]) => unknown;

export const reindex: CommandFactory = (ctx) => async () => {
  await Promise.all(ctx.folders.map((folder) => folder.indexAll(true)));
};

export const clearIndex: CommandFactory = (ctx) => async () => {
  const answer = await vscode.window.showWarningMessage('Delete the Code Oracle index of this workspace and build it again?', { modal: true }, 'Clear and Rebuild');
  if (answer !== 'Clear and Rebuild') return;
  await ctx.rebuildFromScratch();
};

export const showLog: CommandFactory = (ctx) => () => {
  ctx.log.show(true);
};
