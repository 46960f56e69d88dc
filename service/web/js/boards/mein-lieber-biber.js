// Mein Lieber Biber (MLB-7): the spiral of 30 rings with the beavers, the raft's tilt from the
// public load, hands and sticks.  Ring k sits at 36°·k, radius 0.1 + 0.03·k (MLB-1.5).
import { h, s, card, seatName } from "../dom.js";

const COLOURS = { red: "#d33", orange: "#f08a24", yellow: "#e8c21b", green: "#3a9d3a", blue: "#2f6fd0", purple: "#8a4fc1" };
const R = 140;

function at(k) {
  const th = (36 * k * Math.PI) / 180;
  const r = R * (0.1 + 0.03 * k);
  return [r * Math.cos(th), r * Math.sin(th)];
}

function spiral(b) {
  const g = s("svg", { viewBox: `${-R - 20} ${-R - 20} ${2 * R + 40} ${2 * R + 40}`, class: "spiral", role: "img",
    "aria-label": `Raft: ${Object.entries(b.beavers).map(([c, p]) => `${c} beaver on ${where(p)}`).join(", ")}` });
  g.append(s("circle", { cx: 0, cy: 0, r: R + 8, class: "raft" }));
  // the path a beaver swims: from the middle through rings 1 … 30 in order (then off to the dam)
  const path = [[0, 0], ...b.rings.map((_, i) => at(i + 1))];
  g.append(s("polyline", { points: path.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" "), class: "path" }));
  g.append(s("text", { x: R + 4, y: -R - 8, class: "ring-no dam-label" }, "dam"));
  b.rings.forEach((colour, i) => {
    const [x, y] = at(i + 1);
    g.append(s("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 9, fill: COLOURS[colour], class: "ring" }));
    g.append(s("text", { x: x.toFixed(1), y: (y + 3).toFixed(1), class: "ring-no" }, String(i + 1)));
  });
  const middle = [];
  for (const [colour, pos] of Object.entries(b.beavers)) {
    if (pos >= 1 && pos <= 30) {
      const [x, y] = at(pos);
      g.append(s("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 6, fill: COLOURS[colour], class: "beaver", "data-beaver": colour },
        s("title", {}, `${colour} beaver, ring ${pos}`)));
    } else middle.push([colour, pos]);
  }
  middle.forEach(([colour, pos], i) => {
    const x = pos === 0 ? -15 + (i % 3) * 10 : R + 4;
    const y = pos === 0 ? -5 + Math.floor(i / 3) * 10 : -R + i * 12;
    g.append(s("circle", { cx: x, cy: y, r: 5, fill: COLOURS[colour], class: `beaver ${pos === 31 ? "dammed" : ""}` },
      s("title", {}, `${colour} beaver, ${pos === 0 ? "middle" : "on the dam"}`)));
  });
  return g;
}

function tilt(b) {
  const [x, y] = b.load;
  const T = b.tip_threshold;
  const pct = Math.round((100 * Math.hypot(x, y)) / T);
  const k = 40 / T;
  const g = s("svg", { viewBox: "-50 -50 100 100", class: "tilt", role: "img",
    "aria-label": `Raft tilt ${pct} % of the tipping point (load ${x}, ${y})` },
  s("circle", { cx: 0, cy: 0, r: 40, class: "tip-ring" }),
  s("line", { x1: 0, y1: 0, x2: (x * k).toFixed(1), y2: (y * k).toFixed(1), class: "load-line" }),
  s("circle", { cx: Math.max(-45, Math.min(45, x * k)).toFixed(1), cy: Math.max(-45, Math.min(45, y * k)).toFixed(1), r: 4, class: "load" }));
  return h("figure", { class: "tilt-box" }, g, h("figcaption", {}, `Tilt ${pct} % of tipping`));
}

export function render(view) {
  const b = view.board;
  const me = view.viewer.seat;
  const hands = view.players.map((p) => h("section", {
    class: `seat-panel${view.to_act.includes(p.seat) ? " acting" : ""}${p.seat === me ? " mine" : ""}`,
    "aria-label": `Hand of ${p.name}`, "data-seat": p.seat },
  h("h3", {}, p.name, p.seat === me ? " (you)" : "", h("span", { class: "score" }, ` ${p.sticks} sticks · ${view.scores[p.seat]} pts`)),
  h("div", { class: "cards" }, p.hand.map((c) => card(c, { label: "hand", cls: c ? `mlb ${c.split("-")[0]}` : "" }))),
  p.discards.length ? h("p", { class: "info" }, `Played: ${p.discards.join(", ")}`) : null));
  const piles = b.piles.map((pile, i) => h("div", { class: "pile" }, h("span", { class: "pile-label" }, `Pile ${i} (${pile.length})`),
    pile.length ? card(pile[0], { label: `pile ${i} top` }) : h("span", { class: "card empty" }, "—")));
  return h("div", { class: "board mlb" },
    h("section", { class: "table", "aria-label": "Raft" }, spiral(b), tilt(b),
      h("div", { class: "piles" }, piles, h("p", { class: "info" }, `Supply: ${b.supply} sticks`,
        b.last_play ? ` · last: ${seatName(view, b.last_play.seat)} moved the ${b.last_play.beaver} beaver from ${where(b.last_play.from)} to ${where(b.last_play.to)}` : "",
        b.last_round_end ? ` · round ${b.last_round_end.round} ended: ${b.last_round_end.reason}` : ""))),
    h("div", { class: "seats" }, hands));
}

const where = (pos) => (pos === 0 ? "the middle" : pos >= 31 ? "the dam" : `ring ${pos}`);

// Where a card moves a beaver (MLB-4.4 a): its value in rings, past ring 30 onto the dam (31).
export function landing(view, move) {
  const from = view.board.beavers[move.beaver];
  return Math.min(31, from + Number(move.card.split("-")[1]));
}

export function describe(move, view) {
  switch (move.type) {
    case "play": {
      const to = landing(view, move);
      const colour = view.board.rings[to - 1];
      const reward = to === 31 || colour === move.beaver ? ", a reward" : "";
      return `Play ${move.card}: ${move.beaver} beaver ${where(view.board.beavers[move.beaver])} → ${where(to)}${to <= 30 ? ` (${colour})` : ""}${reward}`;
    }
    case "draw": return `Draw from pile ${move.pile}`;
    case "exchange": return `Exchange ${move.card} for pile ${move.pile}`;
    case "discard": return `Discard ${move.card}`;
    case "reward": return move.take === "stick" ? "Take a stick" : `Take the top card of pile ${move.pile}`;
    case "pass": return "Pass";
    default: return null;
  }
}

const ENDS = {
  tipped: (who) => `the raft tipped under ${who}'s move, who gave back up to 2 sticks`,
  supply_exhausted: (who) => `${who} took the last stick from the supply, which ends the match`,
  hand_empty: (who) => `${who}'s hand was empty`,
  raft_empty: () => "every beaver had left the raft",
};

// The finished match in words: how the last round ended and the sticks held (MLB-6.2, MLB-6.4).
export function ending(view) {
  const end = view.board.last_round_end;
  if (!view.result) return null;
  const why = end ? `Round ${end.round} ended: ${(ENDS[end.reason] || (() => end.reason))(seatName(view, end.seat))}.` : "";
  const sticks = view.players.map((p) => `${p.name} ${p.sticks} ${p.sticks === 1 ? "stick" : "sticks"}`).join(", ");
  return [why, `Cards left in hands score nothing; each player scores the sticks held: ${sticks}. The most sticks win.`].filter(Boolean);
}
