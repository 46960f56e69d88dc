/**
 * Following a match's stream (contract "Stream (1.1)"): one message per
 * version, in order and without gaps, resumed from the last version seen when
 * the connection drops.
 *
 * In a browser (where `EventSource` exists) it is an `EventSource` on the SSE
 * stream, with the token as `?token=` (EventSource cannot send headers); the
 * browser reconnects by itself and sends `Last-Event-ID`.  Elsewhere (Node 20
 * has no EventSource) it is a streaming `fetch` of NDJSON
 * (`Accept: application/x-ndjson`, one JSON object per line, an empty line is
 * the keep-alive) that reconnects with `?after=<last version seen>`.
 *
 * NDJSON has no end marker: the stream just closes, at the end of the match
 * and also when the server stops or ends a long stream (`STREAM_MAX`).  After
 * a close the match's view tells which: finished with nothing left to send,
 * gone (404), or neither (reconnect).
 */
import type { components } from "./schema.js";

type Schemas = components["schemas"];

/** One message of the stream: the events of one version (redacted for the caller). */
export interface StreamMessage {
  version: number;
  events: Schemas["Event"][];
  /** With `state: true`, on the message of the match's current version: the caller's view. */
  state?: Schemas["View"];
  /** With `state` and `legal: true`: the caller's legal moves by seat. */
  legal_moves?: Record<string, Schemas["LegalMoves"]["moves"]>;
}

/** How a followed match ended: finished, deleted (or expired), or `close()` called. */
export type FollowEnd = "finished" | "deleted" | "closed";

export interface FollowOptions {
  /** A seat or admin token (events redacted for it); none: a spectator. */
  token?: string;
  /** Send the versions above this one (default -1: every version from the setup). */
  after?: number;
  /** Add the caller's view as `state` to the message of the current version. */
  state?: boolean;
  /** With `state`: add `legal_moves` beside it. */
  legal?: boolean;
  /** Called once per version, in order; a throw stops following (`done` rejects with it). */
  onMessage: (message: StreamMessage) => void;
  /** Called on each dropped connection or failed attempt before it retries. */
  onError?: (error: unknown) => void;
  /** Milliseconds before a retry after a failure (default 1000), times the failures in a row (up to 10). */
  retryMs?: number;
  /** `"eventsource"` where `EventSource` exists, else `"fetch"` (NDJSON). */
  transport?: "eventsource" | "fetch";
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

export interface Following {
  /** Resolves when the match ends or `close()` is called; rejects when the server refuses the stream. */
  done: Promise<FollowEnd>;
  /** Stop following (`done` resolves with `"closed"`). */
  close(): void;
}

/** The server refused the stream (e.g. 404 `match_not_found`, 401, 403): `problem` is its body. */
export class LodgeStreamError extends Error {
  constructor(readonly status: number, readonly problem: Schemas["Problem"] | null) {
    super(problem?.detail ?? `the stream was refused (HTTP ${status})`);
    this.name = "LodgeStreamError";
  }
}

/** A failure that ends following instead of being retried. */
class Fatal {
  constructor(readonly error: unknown) {}
}

/** Follow match `matchId` on the server at `baseUrl` (see the module's doc). */
export function follow(baseUrl: string, matchId: string, options: FollowOptions): Following {
  const controller = new AbortController();
  const transport = options.transport ?? (typeof EventSource === "function" ? "eventsource" : "fetch");
  const run = transport === "eventsource" ? byEventSource : byFetch;
  // Once done, abort whatever is still open (a body left unread when onMessage threw).
  const done = run(baseUrl, matchId, options, controller.signal).finally(() => controller.abort());
  return { done, close: () => controller.abort() };
}

function streamUrl(baseUrl: string, matchId: string, after: number, options: FollowOptions, withToken: boolean): string {
  const query = new URLSearchParams({ after: String(after) });
  if (options.state) query.set("state", "true");
  if (options.legal) query.set("legal", "true");
  if (withToken && options.token !== undefined) query.set("token", options.token);
  return `${baseUrl}/v1/matches/${encodeURIComponent(matchId)}/stream?${query}`;
}

function authorization(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { Authorization: `Bearer ${token}` };
}

/** The stream as NDJSON over fetch, reconnecting after the last version seen. */
async function byFetch(baseUrl: string, matchId: string, options: FollowOptions, signal: AbortSignal): Promise<FollowEnd> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const headers = { Accept: "application/x-ndjson", ...authorization(options.token) };
  let after = options.after ?? -1;
  let connected = false;
  let failures = 0;
  for (;;) {
    try {
      const response = await fetchImpl(streamUrl(baseUrl, matchId, after, options, false), { headers, signal });
      if (response.status === 404 && connected) return "deleted";
      await refuseUnlessOk(response);
      connected = true;
      for await (const line of lines(response.body!)) {
        if (line === "") continue;  // keep-alive
        const message = JSON.parse(line) as StreamMessage;
        after = message.version;
        deliver(options, message);
        failures = 0;
      }
      const end = await ended(fetchImpl, baseUrl, matchId, options.token, after, true, signal);
      if (end !== null) return end;
    } catch (error) {
      if (error instanceof Fatal) throw error.error;
      if (signal.aborted) return "closed";
      failures += 1;
      options.onError?.(error);
      if (await pause((options.retryMs ?? 1000) * Math.min(failures, 10), signal)) return "closed";
    }
  }
}

/** A 4xx answer ends following with a LodgeStreamError; a 5xx is retried. */
async function refuseUnlessOk(response: Response): Promise<void> {
  if (response.ok) return;
  const problem = (await response.json().catch(() => null)) as Schemas["Problem"] | null;
  const error = new LodgeStreamError(response.status, problem);
  throw response.status >= 500 || response.status === 429 ? error : new Fatal(error);
}

function deliver(options: FollowOptions, message: StreamMessage): void {
  try {
    options.onMessage(message);
  } catch (error) {
    throw new Fatal(error);
  }
}

/** After the stream closed: "finished" (nothing left to send), "deleted" (once `connected`), or null (reconnect). */
async function ended(fetchImpl: typeof fetch, baseUrl: string, matchId: string, token: string | undefined,
                     after: number, connected: boolean, signal: AbortSignal): Promise<FollowEnd | null> {
  const response = await fetchImpl(`${baseUrl}/v1/matches/${encodeURIComponent(matchId)}`,
                                   { headers: authorization(token), signal });
  if (response.status === 404 && connected) return "deleted";
  await refuseUnlessOk(response);
  const view = (await response.json()) as Schemas["View"];
  return view.status === "finished" && view.version <= after ? "finished" : null;
}

/** The lines of a body (without their "\n"); a cut-off last line is dropped. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
      yield buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
    }
  }
}

/** Wait `ms`; true if aborted meanwhile. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(signal.aborted), ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(true); }, { once: true });
  });
}

/** The stream as SSE through the browser's EventSource (it reconnects with Last-Event-ID itself). */
function byEventSource(baseUrl: string, matchId: string, options: FollowOptions, signal: AbortSignal): Promise<FollowEnd> {
  return new Promise((resolve, reject) => {
    const source = new EventSource(streamUrl(baseUrl, matchId, options.after ?? -1, options, true));
    let after = options.after ?? -1;
    let connected = false;
    const stop = (finish: () => void) => { source.close(); finish(); };
    signal.addEventListener("abort", () => stop(() => resolve("closed")), { once: true });
    source.onopen = () => { connected = true; };
    source.addEventListener("events", (event) => {
      const message = JSON.parse(event.data) as StreamMessage;
      after = message.version;
      try {
        options.onMessage(message);
      } catch (error) {
        stop(() => reject(error));
      }
    });
    source.addEventListener("end", (event) => {
      stop(() => resolve((JSON.parse(event.data) as { status: "finished" | "deleted" }).status));
    });
    source.onerror = (error) => {
      if (source.readyState !== EventSource.CLOSED) {  // the browser reconnects by itself
        options.onError?.(error);
        return;
      }
      // Refused (not a 200 event stream): the view tells why (deleted meanwhile, a problem) or
      // that it was passing (a 503 from a balancer): then a new EventSource after a pause.
      const fetchImpl = options.fetch ?? globalThis.fetch;
      ended(fetchImpl, baseUrl, matchId, options.token, after, connected, signal)
        .then(async (end) => end ?? (await pause(options.retryMs ?? 1000, signal) ? "closed"
          : byEventSource(baseUrl, matchId, { ...options, after }, signal)))
        .then(resolve, (failure) => reject(failure instanceof Fatal ? failure.error : failure));
    };
  });
}
