import { getLogger } from '../log/logger';
import { connectionFailure } from '../llm/structured';
import { fail, ok, type Result } from '../util/result';
import type { IssueInput } from './model';

/**
 * The GitHub REST API, as far as the resolver needs it: read an issue, open a draft pull request.
 * The server is configurable (GitHub Enterprise, or a fake API on 127.0.0.1 in tests); the token
 * comes from the caller (the environment or the editor's secret storage) and is never logged.
 */

export const DEFAULT_GITHUB_API_URL = 'https://api.github.com';

const log = getLogger('fix.github');

export interface GitHubSettings {
  readonly apiUrl: string;
  readonly token: string | null;
}

export interface IssueReference {
  readonly owner: string;
  readonly repo: string;
  readonly number: number;
}

/** The API server and token from GITHUB_API_URL and GITHUB_TOKEN (or GH_TOKEN). */
export function gitHubSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): GitHubSettings {
  return {
    apiUrl: (env.GITHUB_API_URL || DEFAULT_GITHUB_API_URL).replace(/\/+$/, ''),
    token: env.GITHUB_TOKEN || env.GH_TOKEN || null,
  };
}

const NAME = '[A-Za-z0-9_.-]+';
const ISSUE_URL = new RegExp(
  `^https?://[^/]+/(${NAME})/(${NAME})/(?:issues|pull)/(\\d+)/?(?:[#?].*)?$`,
);
const SHORT_REFERENCE = new RegExp(`^(${NAME})/(${NAME})#(\\d+)$`);

/** `https://github.com/owner/repo/issues/12` or `owner/repo#12`; null for anything else. */
export function parseIssueReference(text: string): IssueReference | null {
  const match = ISSUE_URL.exec(text.trim()) ?? SHORT_REFERENCE.exec(text.trim());
  return match ? { owner: match[1]!, repo: match[2]!, number: Number(match[3]) } : null;
}

async function call(
  settings: GitHubSettings,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
): Promise<Result<Record<string, unknown>>> {
  const url = `${settings.apiUrl}${route}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'code-oracle',
        ...(settings.token ? { authorization: `Bearer ${settings.token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  } catch (cause) {
    log.warn('github_unreachable', { api_url: settings.apiUrl, error: connectionFailure(cause) });
    return fail(
      'io_error',
      `GitHub (${settings.apiUrl}) cannot be reached: ${connectionFailure(cause)}.`,
    );
  }
  const payload = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.ok) return ok(payload);
  const detail = typeof payload.message === 'string' ? payload.message : response.statusText;
  log.warn('github_request_failed', { method, route, status: response.status, message: detail });
  if (response.status === 404)
    return fail('not_found', `GitHub has no ${route} (or the token cannot see it).`);
  if (response.status === 401 || response.status === 403)
    return fail(
      'invalid_input',
      `GitHub refused the request (${response.status} ${detail}): ${settings.token ? 'check the token’s permissions' : 'set GITHUB_TOKEN'}.`,
    );
  return fail('io_error', `GitHub answered ${response.status}: ${detail}.`);
}

export async function fetchIssue(
  reference: IssueReference,
  settings: GitHubSettings,
): Promise<Result<IssueInput>> {
  const fetched = await call(
    settings,
    'GET',
    `/repos/${reference.owner}/${reference.repo}/issues/${reference.number}`,
  );
  if (!fetched.ok) return fetched;
  const issue = fetched.value;
  log.info('github_issue_fetched', {
    repo_full_name: `${reference.owner}/${reference.repo}`,
    issue_number: reference.number,
  });
  return ok({
    title: typeof issue.title === 'string' ? issue.title : `Issue #${reference.number}`,
    body: typeof issue.body === 'string' ? issue.body : '',
    number: reference.number,
    repo: `${reference.owner}/${reference.repo}`,
  });
}

export interface DraftPullRequest {
  readonly repo: string;
  readonly title: string;
  readonly body: string;
  readonly head: string;
  readonly base: string;
}

/** Opens a draft pull request; its web address. */
export async function openDraftPullRequest(
  request: DraftPullRequest,
  settings: GitHubSettings,
): Promise<Result<string>> {
  const created = await call(settings, 'POST', `/repos/${request.repo}/pulls`, {
    title: request.title,
    body: request.body,
    head: request.head,
    base: request.base,
    draft: true,
  });
  if (!created.ok) return created;
  const url = created.value.html_url;
  return typeof url === 'string'
    ? ok(url)
    : fail('io_error', 'GitHub created the pull request but did not say where it is.');
}
