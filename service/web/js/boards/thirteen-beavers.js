// 13 Beavers (TB-7): the river board with special spaces, beavers and dams, the face-up card,
// fish and wolves.
import { h, card, seatName } from "../dom.js";

const ICON = { start: "start", water: "", avenue: "avenue", lava: "lava", fish: "fish", rapids: "rapids", wolf: "wolf", paradise: "paradise" };

export function render(view) {
  const b = view.board;
  const me = view.viewer.seat;
  const spaces = b.spaces.map((sp) => {
    const here = view.players.filter((p) => p.beaver === sp.id);
    const dams = view.players.filter((p) => p.dam === sp.id);
    const branch = sp.next.length > 1 ? ` (or → ${sp.next.slice(1).join(", ")})` : "";
    return h("li", { class: `space ${sp.kind}`, "data-space": sp.id,
      "aria-label": `Space ${sp.id}, ${sp.kind}${branch}${here.length ? `, beavers: ${here.map((p) => p.name).join(", ")}` : ""}${dams.length ? `, dams: ${dams.map((p) => p.name).join(", ")}` : ""}` },
    h("span", { class: "space-no" }, sp.id), h("span", { class: "kind" }, ICON[sp.kind] || ""),
    branch ? h("span", { class: "branch" }, `→${sp.next.slice(1).join(",")}`) : null,
    h("span", { class: "tokens" },
      here.map((p) => h("span", { class: `token beaver s${p.seat}`, title: `${p.name}'s beaver` }, `B${p.seat}`)),
      dams.map((p) => h("span", { class: `token dam s${p.seat}`, title: `${p.name}'s dam` }, `D${p.seat}`))));
  });
  const players = view.players.map((p) => h("section", {
    class: `seat-panel${view.to_act.includes(p.seat) ? " acting" : ""}${p.seat === me ? " mine" : ""}`,
    "aria-label": `Player ${p.name}`, "data-seat": p.seat },
  h("h3", {}, h("span", { class: `token beaver s${p.seat}` }, `B${p.seat}`), ` ${p.name}`, p.seat === me ? " (you)" : "",
    h("span", { class: "score" }, ` beaver ${p.beaver}, dam ${p.dam}`)),
  h("div", { class: "cards" }, p.fish.map((f) => card(f, { label: "fish", cls: "fish" })))));
  const a = b.active;
  return h("div", { class: "board tb" },
    h("section", { class: "table", "aria-label": "Table" },
      h("div", { class: "pile" }, h("span", { class: "pile-label" }, "Face-up card"), card(b.face_up, { label: "face up", cls: "big" })),
      h("div", { class: "pile" }, h("span", { class: "pile-label" }, `Draw (${b.draw.length})`), card(null, { label: "draw pile" })),
      h("p", { class: "info" }, `Discard: ${b.discard.slice(-8).join(" ") || "—"}`),
      h("p", { class: "info" }, `Pond: ${b.pond.length} fish · caught: ${b.used_fish.join(", ") || "none"} · cave: ${b.cave.length} wolves${b.cave_open ? " (open)" : ""} · wolves out: ${b.wolf_out.join(", ") || "none"}`),
      h("p", { class: "info" }, `Turn ${b.turn} of ${b.max_turns}`, a ? ` · ${seatName(view, a.seat)} acting, ${a.answers} right answers${a.turbo ? ", turbo" : ""}` : "")),
    h("ol", { class: "river", "aria-label": `River to Paradise (${b.paradise})` }, spaces),
    h("div", { class: "seats" }, players));
}

export function describe(move) {
  const vision = move.vision ? " with vision" : "";
  switch (move.type) {
    case "guess": return `Guess ${move.dir}${vision}`;
    case "rapids": return `Rapids: ${move.dir}${vision}`;
    case "avenue": return `Avenue: name ${move.value}`;
    case "use_turbo": return "Use turbo";
    case "dam": return "Stop and build the dam";
    default: return null;
  }
}

// The finished match in words: why it ended and where each dam stands (TB-6.3).
export function ending(view) {
  const r = view.result;
  if (!r) return null;
  const kind = (id) => view.board.spaces.find((sp) => sp.id === id)?.kind;
  const leader = view.players.find((p) => p.beaver === view.board.paradise);
  const why = r.reason === "paradise" ? `${leader ? leader.name : "A beaver"} reached Paradise (space ${view.board.paradise})`
    : `the turn limit (${view.board.max_turns} turns) was reached`;
  const dams = view.players.map((p) => `${p.name}'s dam on space ${p.dam}${kind(p.dam) && kind(p.dam) !== "water" ? ` (${kind(p.dam)})` : ""}`).join(", ");
  return [`The match ended: ${why}.`, `Each player scores the space of their dam: ${dams}. The furthest dam wins.`];
}
