// A ladder's leaderboard (#/ladder/<id>): GET /v1/ladders/<id>, best rating (μ − 3σ) first,
// read again every few seconds so a running tournament's matches show up as they are rated.
import { call } from "./api.js";
import { h, fill } from "./dom.js";
import { explain } from "./common.js";

const REFRESH_MS = 5000;

export function ladderPage(main, id) {
  let timer = null;
  let stopped = false;
  fill(main, h("p", {}, "Loading the leaderboard…"));

  async function load() {
    try {
      const { data } = await call("GET", `/v1/ladders/${encodeURIComponent(id)}`);
      if (!stopped) draw(data);
    } catch (err) {
      if (stopped) return;
      fill(main, h("p", { class: "error", id: "ladder-error", "data-code": err.code },
        err.code === "ladder_not_found" ? `There is no ladder ${id}.` : explain(err)));
    }
    if (!stopped) timer = setTimeout(load, REFRESH_MS);
  }

  function draw(board) {
    const num = (x) => x.toFixed(2);
    fill(main,
      h("h1", {}, `Ladder ${board.name}`),
      h("p", { class: "info", id: "ladder-summary", "data-matches": board.matches },
        `${board.game} · ${board.matches} finished ${board.matches === 1 ? "match" : "matches"} rated · `
        + "rating = μ − 3σ (openskill, Plackett–Luce)"),
      h("table", { class: "leaderboard", id: "leaderboard" },
        h("thead", {}, h("tr", {}, ["Rank", "Entrant", "Rating", "μ", "σ", "Matches", "Wins"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, board.entrants.map((e) => h("tr", { "data-entrant": e.entrant_id, "data-rank": e.rank },
          h("td", {}, String(e.rank)), h("th", { scope: "row" }, e.name), h("td", {}, num(e.rating)),
          h("td", {}, num(e.mu)), h("td", {}, num(e.sigma)), h("td", {}, String(e.matches)),
          h("td", {}, String(e.wins)))))));
  }

  load();
  return { stop() { stopped = true; clearTimeout(timer); } };
}
