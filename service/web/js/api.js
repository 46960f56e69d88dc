// The public contract over fetch, same origin: problem+json errors become ApiError.
export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && problem.detail) || `HTTP ${status}`);
    this.status = status;
    this.code = (problem && problem.code) || `http_${status}`;
    this.problem = problem || {};
  }
}

export function newKey() {
  if (globalThis.crypto && crypto.randomUUID) return crypto.randomUUID();
  return `k-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

export async function call(method, path, { token, body, headers = {} } = {}) {
  const h = { Accept: "application/json", ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  if (body !== undefined) h["Content-Type"] = "application/json";
  let res;
  try {
    // no-store: what a GET answers depends on the token, so the browser must never hand one
    // caller's cached answer to another (a spectator's view to the seat that just joined)
    res = await fetch(path, { method, headers: h, cache: "no-store", body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, { code: "network", detail: `Lost connection to the server (${err.message}).` });
  }
  if (res.status === 204 || res.status === 304) return { status: res.status, data: null };
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data);
  return { status: res.status, data, etag: res.headers.get("ETag") };
}

const m = (id) => `/v1/matches/${encodeURIComponent(id)}`;

export const api = {
  games: () => call("GET", "/v1/games"),
  create: (body) => call("POST", "/v1/matches", { body }),
  view: (id, token) => call("GET", `${m(id)}?legal=true`, { token }),
  legal: (id, token) => call("GET", `${m(id)}/legal-moves`, { token }),
  move: (id, token, move, version) => call("POST", `${m(id)}/moves?legal=true`,
    { token, body: { move, version }, headers: { "Idempotency-Key": newKey() } }),
  moveAs: (id, admin, move, seat, version) => call("POST", `${m(id)}/moves?seat=${seat}`,
    { token: admin, body: { move, version }, headers: { "Idempotency-Key": newKey() } }),
  events: (id, after, token) => call("GET", `${m(id)}/events?after=${after}`, { token }),
  record: (id, token) => call("GET", `${m(id)}/record`, { token }),
  seats: (id) => call("GET", `${m(id)}/seats`),
  claim: (id, seat, invite) => call("POST", `${m(id)}/seats/${seat}`, { body: invite ? { invite } : {} }),
  lobby: (game, cursor) => call("GET", `/v1/matches?open=true&limit=20${game ? `&game=${encodeURIComponent(game)}` : ""}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`),
  remove: (id, token) => call("DELETE", m(id), { token }),
  streamUrl: (id, after, token) => `${m(id)}/stream?after=${after}&state=true&legal=true${token ? `&token=${encodeURIComponent(token)}` : ""}`,
};

// Tokens this browser holds, per match (localStorage: a second browser profile holds its own).
const KEY = (id) => `lodge:match:${id}`;
export const seats = {
  get(id) { try { return JSON.parse(localStorage.getItem(KEY(id)) || "null"); } catch { return null; } },
  put(id, entry) {
    localStorage.setItem(KEY(id), JSON.stringify({ ...(seats.get(id) || {}), ...entry }));
    const mine = seats.list().filter((e) => e.id !== id);
    mine.unshift({ id, game: entry.game, at: Date.now() });
    localStorage.setItem("lodge:mine", JSON.stringify(mine.slice(0, 20)));
  },
  list() { try { return JSON.parse(localStorage.getItem("lodge:mine") || "[]"); } catch { return []; } },
};
