// The board of a game that declares none (engine.declaration.GENERIC_BOARD), e.g. a plugin game:
// drawn from the view alone. A panel per seat with its fields, the table with the board's fields;
// a list of plain values is a row of cards (null: face down), a list of objects a small table.
import { h, card } from "../dom.js";

const words = (key) => key.replace(/_/g, " ");
const plain = (v) => v === null || typeof v !== "object";

function value(v, key) {
  if (v === null || v === undefined) return "—";
  if (Array.isArray(v) && v.every(plain)) {
    return v.length ? h("div", { class: "cards" }, v.map((c, i) => card(c, { label: `${words(key)} ${i}` })))
      : h("span", { class: "card empty" }, "—");
  }
  if (Array.isArray(v)) {
    const keys = [...new Set(v.flatMap((row) => (plain(row) ? [] : Object.keys(row))))];
    return h("table", { class: "history" }, h("tr", {}, keys.map((k) => h("th", {}, words(k)))),
      v.map((row) => h("tr", {}, keys.map((k) => h("td", {}, value(row[k], k))))));
  }
  if (typeof v === "object") return fields(v);
  return String(v);
}

function fields(obj, skip = []) {
  return h("dl", { class: "fields" }, Object.entries(obj).filter(([k]) => !skip.includes(k))
    .map(([k, v]) => h("div", { "data-field": k }, h("dt", {}, words(k)), h("dd", {}, value(v, k)))));
}

export function render(view) {
  const me = view.viewer.seat;
  const seats = view.players.map((p) => h("section", {
    class: `seat-panel${view.to_act.includes(p.seat) ? " acting" : ""}${p.seat === me ? " mine" : ""}`,
    "aria-label": `Seat of ${p.name}`, "data-seat": p.seat },
  h("h3", {}, p.name, p.seat === me ? " (you)" : "", h("span", { class: "score" }, ` ${view.scores[p.seat]} pts`)),
  fields(p, ["seat", "name"])));
  const table = h("section", { class: "table", "aria-label": "Table" }, fields(view.board));
  return h("div", { class: "board generic" }, table, h("div", { class: "seats" }, seats));
}

// A move in words from its fields: "play · card 7".
export function describe(move) {
  const rest = Object.entries(move).filter(([k]) => !["type", "id", "label"].includes(k))
    .map(([k, v]) => `${words(k)} ${v}`);
  return [words(move.type), ...rest].join(" · ");
}
