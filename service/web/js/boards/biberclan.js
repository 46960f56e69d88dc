// BiberClan (BC-7): castles with top/bottom slots, protection, face up/down, the held card, specials.
import { h, card, seatName } from "../dom.js";

const ROWS = [["t0", "t1"], ["b0", "b1", "b2"]];

function slot(p, name) {
  const c = p.castle[name];
  if (!c) return h("span", { class: "card empty", title: `${name} empty`, "aria-label": `${name} empty` }, name);
  const el = card(c.face === "up" ? c.card : null, { known: c.known ?? null, label: name });
  if (c.protected) { el.classList.add("protected"); el.title += " (protected)"; el.append(h("span", { class: "shield", "aria-label": "protected" }, "P")); }
  return el;
}

export function render(view) {
  const b = view.board;
  const me = view.viewer.seat;
  const castles = view.players.map((p) => h("section", {
    class: `seat-panel${view.to_act.includes(p.seat) ? " acting" : ""}${p.seat === me ? " mine" : ""}`,
    "aria-label": `Castle of ${p.name}`, "data-seat": p.seat },
  h("h3", {}, p.name, p.seat === me ? " (you)" : "", h("span", { class: "score" }, ` ${view.scores[p.seat]} pts`)),
  h("div", { class: "castle" }, ROWS.map((row) => h("div", { class: "castle-row" }, row.map((n) => slot(p, n))))),
  h("p", { class: "info" }, `${p.cards} cards, ${p.face_up} face up`)));
  const held = b.held;
  const top = b.discard.length ? b.discard[b.discard.length - 1] : null;
  const table = h("section", { class: "table", "aria-label": "Table" },
    h("div", { class: "pile" }, h("span", { class: "pile-label" }, `Draw pile (${b.draw_count})`), card(null, { label: "draw pile" })),
    h("div", { class: "pile" }, h("span", { class: "pile-label" }, `Discard (${b.discard.length})`),
      top === null ? h("span", { class: "card empty" }, "—") : card(top, { label: "discard top" })),
    held ? h("div", { class: "pile" },
      h("span", { class: "pile-label" }, `Held by ${seatName(view, held.seat)}: ${held.kind}${held.from ? ` (from ${seatName(view, held.from.target)} ${held.from.slot})` : ""}`),
      card(held.card, { known: held.known ?? null, label: "held card", cls: held.kind === "special" ? "special" : "" })) : null,
    h("p", { class: "info" }, `Turn ${b.turns} of ${b.max_turns}`,
      b.finisher !== null ? ` · ${seatName(view, b.finisher)} completed a castle: final lap` : "",
      b.box.length ? ` · specials played: ${b.box.join(", ")}` : ""));
  const last = b.last_round ? h("p", { class: "info" }, `Last round: ${JSON.stringify(b.last_round.points ?? b.last_round.scores ?? "")}`) : null;
  return h("div", { class: "board biberclan" }, table, h("div", { class: "seats" }, castles), last);
}

export function describe(move, view) {
  const t = (k) => (k === view.viewer.seat ? "my" : `${seatName(view, k)}'s`);
  switch (move.type) {
    case "place": return `Place ${move.face} in ${t(move.target)} ${move.slot}`;
    case "replace": return `Replace ${t(move.target)} ${move.slot}, ${move.face}`;
    case "stash": return `Stash in my ${move.slot}, ${move.face}`;
    case "clear": return `Clear ${t(move.target)} ${move.slot}`;
    case "flip": return `Flip ${t(move.target)} ${move.slot}`;
    case "swap": return `Swap ${t(move.target_a)} ${move.slot_a} with ${t(move.target_b)} ${move.slot_b}`;
    case "peek": return `Peek at ${t(move.target)} ${move.slot}`;
    default: return null;
  }
}
