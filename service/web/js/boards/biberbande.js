// Biberbande (BB-7): four face-down cards per display, drawn card, discard, knocks, round history.
import { h, card, seatName } from "../dom.js";

export function render(view) {
  const b = view.board;
  const me = view.viewer.seat;
  const displays = view.players.map((p) => h("section", {
    class: `seat-panel${view.to_act.includes(p.seat) ? " acting" : ""}${p.seat === me ? " mine" : ""}`,
    "aria-label": `Display of ${p.name}`, "data-seat": p.seat },
  h("h3", {}, p.name, p.seat === me ? " (you)" : "", b.knocker === p.seat ? h("span", { class: "badge" }, "knocked") : null,
    h("span", { class: "score" }, ` ${view.scores[p.seat]} pts`)),
  h("div", { class: "cards" }, p.display.map((v, j) => card(v, { known: p.known ? p.known[j] : null, label: `slot ${j}` })))));
  const drawn = b.drawn ? h("div", { class: "pile" }, h("span", { class: "pile-label" }, `Drawn by ${seatName(view, b.drawn.seat)} (${b.drawn.stage})`),
    card(b.drawn.card, { label: "drawn card" })) : null;
  const top = b.discard.length ? b.discard[b.discard.length - 1] : null;
  const table = h("section", { class: "table", "aria-label": "Table" },
    h("div", { class: "pile" }, h("span", { class: "pile-label" }, `Draw pile (${b.draw_count})`), card(null, { label: "draw pile" })),
    h("div", { class: "pile" }, h("span", { class: "pile-label" }, `Discard (${b.discard.length})`),
      top === null ? h("span", { class: "card empty" }, "—") : card(top, { label: "discard top" })),
    drawn,
    h("p", { class: "info" }, `Turn ${b.turn} of ${b.max_turn}`, b.knocker !== null ? ` · ${seatName(view, b.knocker)} knocked on turn ${b.knock_turn}, last turn ${b.last_turn}` : ""));
  const history = b.history.length ? h("table", { class: "history" },
    h("caption", {}, "Rounds played"),
    h("tr", {}, h("th", {}, "Round"), view.players.map((p) => h("th", {}, p.name)), h("th", {}, "Knocker")),
    b.history.map((r) => h("tr", {}, h("td", {}, r.round),
      r.points.map((pts, k) => h("td", {}, `${pts} (${r.displays[k].join(" ")})`)),
      h("td", {}, r.knocker === null ? r.reason : seatName(view, r.knocker))))) : null;
  return h("div", { class: "board biberbande" }, table, h("div", { class: "seats" }, displays), history);
}

export function describe(move, view) {
  const slot = (k) => `slot ${k}`;
  switch (move.type) {
    case "draw": return "Draw a card";
    case "take_discard": return `Take the discard into ${slot(move.slot)}`;
    case "swap_drawn": return `Swap the drawn card with ${slot(move.slot)}`;
    case "discard_drawn": return "Discard the drawn card";
    case "use_swap": return `Swap: my ${slot(move.slot)} with ${seatName(view, move.target_seat)}'s ${slot(move.target_slot)}`;
    case "use_peek": return `Peek at ${slot(move.slot)}`;
    case "use_draw2": return "Use Draw Twice";
    case "skip_draw": return "Skip the draw";
    case "knock": return "Knock";
    case "end_turn": return "End the turn";
    default: return null;
  }
}

const sum = (cards) => `${cards.join(" + ")} = ${cards.reduce((a, c) => a + Number(c), 0)}`;

function roundWords(view, r) {
  const why = r.reason === "knock" ? `${seatName(view, r.knocker)} knocked`
    : r.reason === "turn_limit" ? "the turn limit was reached" : "nobody could draw any more";
  const points = r.displays.map((cards, k) => `${seatName(view, k)} ${sum(cards)} points`).join("; ");
  return `Round ${r.round}: ${why}. Every display is revealed and scored by the sum of its four cards (BB-6.3): ${points}.`;
}

// The finished match in words: every round's displays and points, the totals, lowest wins (BB-6.5).
export function ending(view) {
  if (!view.result) return null;
  const totals = view.players.map((p) => `${p.name} ${view.scores[p.seat]}`).join(", ");
  return [...view.board.history.map((r) => roundWords(view, r)),
    `Totals: ${totals}. The lowest total wins.`];
}
