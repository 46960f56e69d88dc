// Replays: the record of a finished match (GET /record, anyone once finished) is played again into
// a scratch match through the public API (same game, players, seed, options; no clock, no bots:
// every recorded move is posted with the scratch match's admin token, bot and clock moves too).
// The scratch match keeps its own versions: a recorded move whose version it has already reached
// was made by the scratch match's server itself (a resigned seat's moves, `"by": "resigned"`) and is
// not posted again.  After each step the scratch match's spectator view is kept, so stepping
// backwards is instant.  The engines stay on the server (they are Python); the scratch match is
// deleted once every step is kept.
import { api } from "./api.js";
import { h, fill, s } from "./dom.js";
import { board, label, resultText, ending, status, notify, explain } from "./common.js";

//: the stepper's icons as SVG paths (stock Chromium has no font with ⏮ and ⏭)
const ICONS = {
  start: "M3 2h2v12H3zM14 2v12L6 8z",
  back: "M12 2v12L4 8z",
  forward: "M4 2v12l8-6z",
  end: "M2 2v12l8-6zM11 2h2v12h-2z",
};

function icon(name) {
  return s("svg", { viewBox: "0 0 16 16", width: 16, height: 16, class: "icon", "aria-hidden": "true", focusable: "false" },
    s("path", { d: ICONS[name], fill: "currentColor" }));
}

export function replayPage(main, id) {
  const rp = { id, record: null, states: [], at: 0, scratch: null, admin: null, version: 0, busy: false };
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
    if (!Number.isSafeInteger(r.seed)) {  // a match created before seeds stayed within 2^53−1
      fill(main, h("p", { class: "error" }, `This match's seed is beyond 2^53−1, which a browser cannot read exactly; it cannot be replayed here.`));
      return;
    }
    const players = r.players.map((p) => (typeof p === "string" ? p : p.name));
    const { data } = await api.create({ game: r.game, players, seed: r.seed, options: r.options });
    rp.scratch = data.match_id;
    rp.admin = data.admin_token;
    rp.version = data.version;
    rp.states.push(data.state);
    draw();
  }

  // Play recorded moves into the scratch match until `step` is kept.
  async function ensure(step) {
    while (rp.states.length <= step) {
      const rec = rp.record.moves[rp.states.length - 1];
      if (rp.version < rec.version) {
        const { data } = await api.moveAs(rp.scratch, rp.admin, { ...rec.move }, rec.seat, rec.version - 1);
        rp.version = data.version;
      }  // else the scratch match's server made this move itself (a resigned seat's)
      const view = (await api.view(rp.scratch)).data;
      rp.version = view.version;
      rp.states.push(view);
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

  const BY = { bot: "by a server bot", clock: "by the clock (time ran out)", resigned: "by the server for a resigned seat" };

  function moveText(rec, before) {
    const who = before.players.find((p) => p.seat === rec.seat)?.name ?? `seat ${rec.seat}`;
    const what = rec.move.type === "resign" ? "resigned" : `played “${label(rec.move, before)}”`;
    return `Move ${rp.at}: ${who} ${what}${rec.by ? ` (${BY[rec.by] || `by ${rec.by}`})` : ""}.`;
  }

  function draw() {
    const view = rp.states[rp.at];
    const n = rp.record.moves.length;
    const rec = rp.at > 0 ? rp.record.moves[rp.at - 1] : null;
    const btn = (name, text, step, disabled) => h("button", { type: "button", "aria-label": text, title: text, "data-step": name,
      disabled: disabled || rp.busy, onclick: () => go(step) }, icon(name));
    fill(main,
      h("h1", {}, `Replay of ${rp.record.game} match ${id}`),
      h("nav", { class: "stepper", "aria-label": "Replay controls" },
        btn("start", "Start", 0, rp.at === 0), btn("back", "Back one move", rp.at - 1, rp.at === 0),
        h("span", { id: "step", "data-step": rp.at, "data-moves": n }, ` move ${rp.at} of ${n} `),
        btn("forward", "Forward one move", rp.at + 1, rp.at === n), btn("end", "End", n, rp.at === n)),
      h("p", { class: "info", id: "replay-move" }, rec ? moveText(rec, rp.states[rp.at - 1]) : "The deal."),
      status(view),
      view.result ? h("section", { class: "result", id: "result", role: "status", "data-winners": view.result.winners.join(",") },
        h("h2", {}, "Result"), h("p", {}, resultText(view)), ending(view)) : null,
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
