// BiberClan (BC-7): castles with top/bottom slots, protection, face up/down, the held card, specials.
import { h, card, seatName } from "../dom.js";

const ROWS = [["t0", "t1"], ["b0", "b1", "b2"]];

function slot(p, name) {
  const c = p.castle[name];
  if (!c) return h("span", { class: "card empty", title: `${name} empty`, "aria-label": `${name} empty` }, name);
  // a face-down card shows its value whenever the view holds it (a finished match reveals all, BC-5.7)
  const el = card(c.card ?? null, { known: c.known ?? null, label: c.face === "up" ? name : `${name} face down`,
    cls: c.face === "up" || c.card == null ? "" : "revealed" });
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
  const last = b.last_round && !view.result ? h("div", { class: "info last-round" }, roundWords(view, b.last_round).map((w) => h("p", {}, w))) : null;
  return h("div", { class: "board biberclan" }, table, h("div", { class: "seats" }, castles), last);
}

const SLOTS = ["b0", "b1", "b2", "t0", "t1"];  // the slot order of round_ended's castles (BC-8.4)
const REASONS = { castle: (view, r) => `${seatName(view, r.finisher)} completed a castle`, turn_limit: () => "the turn limit was reached" };

function seatWords(view, r, k) {
  const cards = r.castles[k].map((c, i) => (c === null ? null : `${c} (${SLOTS[i]})`)).filter(Boolean);
  const parts = [`cards ${cards.length ? cards.join(" + ") : "none"} = ${r.values[k]}`];
  if (r.five_of_a_kind.includes(k)) parts.push("five of a kind");
  else if (r.bonus[k]) parts.push(`${r.bonus[k] === 25 ? "four" : "three"} of a kind +${r.bonus[k]}`);
  if (r.penalty[k]) parts.push(`finisher outscored ${r.penalty[k]}`);
  return `${seatName(view, k)}: ${parts.join(", ")} → ${r.scores[k]} points (total ${r.totals[k]})`;
}

// A round's scoring in words (BC-6.1 … BC-6.3): each castle's cards, bonus, penalty, totals.
function roundWords(view, r) {
  const why = (REASONS[r.reason] || (() => r.reason))(view, r);
  return [`Round ${r.round} ended: ${why}. Every castle is revealed; a castle scores the sum of its cards, +15 for three equal values, +25 for four (BC-6.1), −10 for a finisher whom another castle outscores (BC-6.2).`,
    ...view.players.map((p) => `${seatWords(view, r, p.seat)}.`)];
}

// The finished match in words: the last round's scoring and how the totals rank (BC-6.7).
export function ending(view) {
  const r = view.board.last_round;
  if (!view.result || !r) return null;
  const five = r.five_of_a_kind.length ? ` ${r.five_of_a_kind.map((k) => seatName(view, k)).join(" and ")} built five of a kind, which wins at once (BC-6.4).` : "";
  return [...roundWords(view, r), `The highest total wins.${five}`];
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
