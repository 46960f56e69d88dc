// What the match and replay pages share: the boards, move labels, results, messages.
import { h, seatName } from "./dom.js";
import { api } from "./api.js";

// Each game's board module, named by the catalogue (a game's declared `board`);
// a game whose board cannot be loaded falls back to the raw JSON below.
async function loadBoards() {
  try {
    const { data } = await api.games();
    const loaded = await Promise.all(data.games.map(async (g) => [g.id, await import(`./boards/${g.board}`)]));
    return Object.fromEntries(loaded);
  } catch (err) {
    console.error("boards not loaded", err);
    return {};
  }
}

export const BOARDS = await loadBoards();

export function label(move, view) {
  if (move.label) return move.label;
  const own = BOARDS[view.game] && BOARDS[view.game].describe(move, view);
  if (own) return own;
  const rest = Object.entries(move).filter(([k]) => k !== "type" && k !== "id").map(([k, v]) => `${k} ${v}`);
  return [move.type, ...rest].join(" ");
}

export function board(view) {
  const game = BOARDS[view.game];
  return game ? game.render(view) : h("pre", {}, JSON.stringify(view.board, null, 1));
}

export function resultText(view) {
  const r = view.result;
  if (!r) return "";
  const names = r.winners.map((k) => seatName(view, k));
  return `${names.join(" and ")} ${names.length > 1 ? "win" : "wins"} · scores ${r.scores.join(" : ")}`;
}

// Words that explain the result (and the last round's scoring), from the game's board module.
export function ending(view) {
  const game = BOARDS[view.game];
  const words = game && game.ending ? game.ending(view) : null;
  return words && words.length ? h("div", { class: "ending", id: "ending" }, words.map((w) => h("p", {}, w))) : null;
}

export function status(view) {
  const acting = view.to_act.map((k) => seatName(view, k)).join(", ");
  return h("p", { class: "status", id: "status", "data-version": view.version, "data-status": view.status },
    `${view.game} · round ${view.round ?? 1} of ${view.rounds ?? 1} · version ${view.version} · `,
    view.status === "finished" ? "finished" : `to act: ${acting || "nobody"} (${view.phase})`);
}

let noticeTimer = null;
export function notify(text, kind = "info", { sticky = false } = {}) {
  const el = document.getElementById("notice");
  if (!text) { el.hidden = true; el.textContent = ""; return; }
  el.hidden = false;
  el.className = `notice ${kind}`;
  el.dataset.kind = kind;
  el.textContent = text;
  clearTimeout(noticeTimer);
  if (!sticky) noticeTimer = setTimeout(() => { el.hidden = true; }, 8000);
}

export function explain(err) {
  if (err.status === 409 && err.code === "version_conflict") return "The match moved on before your move arrived; the board is refreshed, choose again.";
  if (err.status === 409 && err.code === "not_your_turn") return "It is not your turn any more; the board is refreshed.";
  if (err.status === 409 && err.code === "match_finished") return "The match is already over.";
  if (err.status === 409 && err.code === "seat_taken") return "That seat is already taken.";
  if (err.status === 422) return `Not allowed: ${err.message}`;
  if (err.status === 0) return err.message;
  if (err.status === 429) return "Too many requests; wait a moment.";
  if (err.status === 503) return "The server's store is unavailable; try again shortly.";
  return `${err.code}: ${err.message}`;
}

export function eventText(e, view) {
  const who = e.seat === null || e.seat === undefined ? "" : `${seatName(view, e.seat)}: `;
  const rest = Object.entries(e).filter(([k]) => !["type", "seat", "version"].includes(k))
    .map(([k, v]) => `${k}=${v === null ? "?" : typeof v === "object" ? JSON.stringify(v) : v}`);
  return `v${e.version} ${who}${e.type}${rest.length ? ` (${rest.join(", ")})` : ""}`;
}
