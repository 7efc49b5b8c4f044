import type { FromWebview, ToWebview } from '../../extension/chat/protocol';

/** What VS Code gives a webview script; `acquireVsCodeApi` may be called only once per page. */
interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();

export function post(message: FromWebview): void {
  vscode.postMessage(message);
}

/** Host messages arrive as window `message` events; the protocol says the webview trusts the host. */
export function onMessage(handler: (message: ToWebview) => void): void {
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    if (isHostMessage(event.data)) handler(event.data);
  });
}

/** A cheap shape check that keeps stray frames' messages (anything without a `type`) out. */
function isHostMessage(data: unknown): data is ToWebview {
  return (
    typeof data === 'object' &&
    data !== null &&
    typeof (data as { type?: unknown }).type === 'string'
  );
}

export function loadState(): unknown {
  return vscode.getState();
}

export function saveState(state: unknown): void {
  vscode.setState(state);
}
