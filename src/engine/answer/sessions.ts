import { randomUUID } from 'node:crypto';
import { getLogger } from '../log/logger';
import { rangeKey } from './citations';
import type { Evidence } from './model';

/**
 * Conversation sessions for thinking mode: the code retrieved for earlier questions (at most 50
 * pieces, least recently used out first) and the gaps that could not be found, kept for 30
 * minutes after the last question so follow-ups start from what is known.
 */
export const SESSION_TTL_MS = 30 * 60 * 1000;
export const SESSION_MAX_NODES = 50;

const log = getLogger('answer.session');

export class Session {
  private readonly nodes = new Map<string, Evidence>();
  /** Gaps that could not be found: their normalised form, and the words the model used. */
  readonly notFound = new Map<string, string>();
  lastAccessed: number;

  constructor(
    readonly id: string,
    now: number,
  ) {
    this.lastAccessed = now;
  }

  cached(): Evidence[] {
    return [...this.nodes.values()];
  }

  remember(pieces: readonly Evidence[]): void {
    for (const piece of pieces) {
      const key = rangeKey(piece);
      this.nodes.delete(key);
      this.nodes.set(key, { ...piece, source: 'session' });
    }
    while (this.nodes.size > SESSION_MAX_NODES) this.nodes.delete(this.nodes.keys().next().value!);
  }
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The session with this id when it is still alive; a new one otherwise. */
  open(id?: string | null): Session {
    this.expire();
    const existing = id ? this.sessions.get(id) : undefined;
    if (existing) {
      existing.lastAccessed = this.now();
      return existing;
    }
    const session = new Session(id ?? randomUUID(), this.now());
    this.sessions.set(session.id, session);
    log.info('session_started', { session_id: session.id, requested: id ?? null });
    return session;
  }

  private expire(): void {
    const now = this.now();
    for (const [id, session] of this.sessions) {
      if (now - session.lastAccessed > SESSION_TTL_MS) {
        this.sessions.delete(id);
        log.info('session_expired', { session_id: id });
      }
    }
  }
}
