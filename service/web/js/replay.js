// Replays: the record of a finished match (GET /record, anyone once finished) is played again into
// a scratch match through the public API (same game, players, seed, options; every recorded move
// posted with the scratch match's admin token); after each move the scratch match's spectator view
// is fetched and kept, so stepping backwards is instant.  The engines stay on the server (they are
// Python); the scratch match is deleted once every step is kept.
import { api } from "./api.js";
import { h, fill } from "./dom.js";
import { board, resultText, status, notify, explain } from "./common.js";

export function replayPage(main, id) {
  const rp = { id, record: null, states: [], at: 0, scratch: null, admin: null, busy: false };
  fill(main, h("p", {}, "Loading the record…"));

  async function start() {
    try {
      rp.record = (await api.record(id)).data;
    } catch (err) {
      fill(main, h("p", { class: "error" }, err.status === 401 || err.status === 403
        ? "The record of a match opens to everybody once the match is finished." : explain(err)));
      return;
    }
    const r = rp.record;
    const players = r.players.map((p) => (typeof p === "string" ? p : p.name));
    const { data } = await api.create({ game: r.game, players, seed: r.seed, options: r.options });
    rp.scratch = data.match_id;
    rp.admin = data.admin_token;
    rp.states.push((await api.view(rp.scratch)).data);
    draw();
  }

  async function ensure(step) {
    while (rp.states.length <= step) {
      const rec = rp.record.moves[rp.states.length - 1];
      const move = { ...rec.move };
      await api.moveAs(rp.scratch, rp.admin, move, rec.seat);
      rp.states.push((await api.view(rp.scratch)).data);
    }
    if (rp.states.length === rp.record.moves.length + 1 && rp.scratch) {
      const scratch = rp.scratch;
      rp.scratch = null;
      api.remove(scratch, rp.admin).catch(() => {});
    }
  }

  async function go(step) {
    if (rp.busy) return;
    step = Math.max(0, Math.min(rp.record.moves.length, step));
    rp.busy = true;
    try {
      await ensure(step);
      rp.at = step;
    } catch (err) {
      notify(`The replay stopped: ${explain(err)}`, "error", { sticky: true });
    }
    rp.busy = false;
    draw();
  }

  function draw() {
    const view = rp.states[rp.at];
    const n = rp.record.moves.length;
    const rec = rp.at > 0 ? rp.record.moves[rp.at - 1] : null;
    const btn = (text, name, step, disabled) => h("button", { type: "button", "aria-label": name, "data-step": name.split(" ")[0].toLowerCase(),
      disabled: disabled || rp.busy, onclick: () => go(step) }, text);
    fill(main, 
      h("h1", {}, `Replay of ${rp.record.game} match ${id}`),
      h("nav", { class: "stepper", "aria-label": "Replay controls" },
        btn("⏮", "Start", 0, rp.at === 0), btn("◀", "Back one move", rp.at - 1, rp.at === 0),
        h("span", { id: "step", "data-step": rp.at, "data-moves": n }, ` move ${rp.at} of ${n} `),
        btn("▶", "Forward one move", rp.at + 1, rp.at === n), btn("⏭", "End", n, rp.at === n)),
      h("p", { class: "info" }, rec ? `Move ${rp.at}: ${view.players.find((p) => p.seat === rec.seat)?.name ?? rec.seat} played ${JSON.stringify(rec.move)}${rec.by ? ` (by ${rec.by})` : ""}` : "The deal."),
      status(view),
      view.result ? h("section", { class: "result", id: "result", role: "status", "data-winners": view.result.winners.join(",") },
        h("h2", {}, "Result"), h("p", {}, resultText(view))) : null,
      board(view));
  }

  main.addEventListener("keydown", (e) => {
    if (!rp.record || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowRight") go(rp.at + 1);
    if (e.key === "ArrowLeft") go(rp.at - 1);
  });
  start().catch((err) => notify(explain(err), "error", { sticky: true }));
  return { stop() {} };
}
