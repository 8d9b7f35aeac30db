import pg from 'pg';

/** What a listener is told: each notification's payload, and whether it can hear them at all. */
export interface ChannelHandlers {
  notified(payload: string): void;
  /** Listening: from here on, every notification reaches `notified`. */
  listening(): void;
  /** Not listening (the connection is gone); notifications may be missed until `listening` again. */
  deaf(): void;
}

/** Stops listening; the handlers hear nothing more. */
export type StopListening = () => Promise<void>;

/** How long to wait before listening again after the connection was lost. */
const RELISTEN_MS = 1000;

/**
 * LISTENs on `channel` over a connection of its own (a pooled one would be handed to other
 * statements), after `sessionStart` if given, and LISTENs again on a new one whenever it is lost.
 * Resolves once the first attempt has listened or failed.
 */
export async function listenOnPostgres(config: pg.ClientConfig, channel: string, handlers: ChannelHandlers, sessionStart?: string): Promise<StopListening> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const lost = (from: pg.Client) => {
    if (client !== from) return;
    client = undefined;
    handlers.deaf();
    from.end().catch(() => {});
    if (!stopped) retry = setTimeout(() => void connect(), RELISTEN_MS);
  };
  const connect = (): Promise<void> => {
    const next = new pg.Client(config);
    client = next;
    next.on('notification', (message) => {
      if (message.channel === channel) handlers.notified(message.payload ?? '');
    });
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    return next
      .connect()
      .then(() => (sessionStart === undefined ? undefined : next.query(sessionStart)))
      .then(() => next.query(`listen ${pg.escapeIdentifier(channel)}`))
      .then(() => {
        if (client === next) handlers.listening();
      })
      .catch(() => lost(next));
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const last = client;
    client = undefined;
    handlers.deaf();
    await last?.end().catch(() => {});
  };
}
