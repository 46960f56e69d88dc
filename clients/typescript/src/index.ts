/**
 * Lodge's typed client: openapi-fetch over the types openapi-typescript
 * generates from openapi/openapi.json (src/schema.d.ts, never edited by hand).
 *
 *   const lodge = createLodge("http://127.0.0.1:8000");
 *   const { data, error, response } = await lodge.GET("/v1/matches/{match_id}", {
 *     params: { path: { match_id } }, headers: bearer(token) });
 *
 * Every call resolves to `{ data }` on 2xx or `{ error }` (a Problem) otherwise.
 * `lodge.follow(match_id, { token, onMessage })` follows a match's stream
 * (src/follow.ts).
 */
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import { follow, type FollowOptions, type Following } from "./follow.js";
import type { components, paths } from "./schema.js";

export type { components, paths };
export { LodgeStreamError, type FollowEnd, type FollowOptions, type Following, type StreamMessage } from "./follow.js";
export type Schemas = components["schemas"];
export type View = Schemas["View"];
export type Problem = Schemas["Problem"];
export type Event = Schemas["Event"];
export type Move = Schemas["LegalMoves"]["moves"][number];
export type Game = Schemas["Game"];
export type Lodge = Client<paths> & {
  /** Follow a match's stream: each version once, in order, across dropped connections. */
  follow(matchId: string, options: FollowOptions): Following;
};

/** A client for the Lodge server at `baseUrl` (e.g. "http://127.0.0.1:8000"). */
export function createLodge(baseUrl: string, options: Omit<ClientOptions, "baseUrl"> = {}): Lodge {
  const base = baseUrl.replace(/\/+$/, "");
  const client = createClient<paths>({ ...options, baseUrl: base });
  return Object.assign(client, {
    follow: (matchId: string, followOptions: FollowOptions) => follow(base, matchId, followOptions),
  });
}

/** The `Authorization` header of a seat or admin token. */
export function bearer(token: string): { Authorization: string } {
  return { Authorization: `Bearer ${token}` };
}

/** The version an `ETag: "<version>"` header names, or null. */
export function etagVersion(response: Response): number | null {
  const match = /^\s*(?:W\/)?"(-?\d+)"\s*$/.exec(response.headers.get("ETag") ?? "");
  return match ? Number(match[1]) : null;
}

/** A fresh Idempotency-Key for one move. */
export function idempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}
