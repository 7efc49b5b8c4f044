import type * as vscode from 'vscode';
import { Ctx } from './ctx';
import { watchModelDownload } from './model-notice';

/** Activation builds the context; everything the extension holds hangs off it. */
let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): Ctx {
  ctx = new Ctx(context);
  context.subscriptions.push(ctx, watchModelDownload(ctx));
  ctx.start();
  return ctx;
}

export function deactivate(): void {
  ctx?.dispose();
  ctx = undefined;
}
