// A match page: the caller's view (seat or spectator), live from the stream, moves as buttons.
import { api, seats } from "./api.js";
import { h, fill, seatName } from "./dom.js";
import { board, label, resultText, ending, status, notify, explain, eventText } from "./common.js";
import { inviteRows } from "./lobby.js";

export function matchPage(main, id, { spectate = false } = {}) {
  const held = spectate ? null : seats.get(id);
  const token = held && held.token;
  const page = { id, token, view: null, legal: [], busy: false, es: null, lastEvent: -1, closed: false, log: [], conn: "connecting", open: [] };
  fill(main, h("p", {}, "Loading the match…"));

  async function refresh() {
    try {
      const { data } = await api.view(id, token);
      await show(data, data.legal_moves, { force: true });
    } catch (err) {
      notify(explain(err), "error", { sticky: true });
      if (err.status === 404) fill(main, h("p", { class: "error" }, `No match ${id} (finished long ago, deleted, or a typo).`));
    }
  }

  // Draw a view unless it is older than the one shown (the stream repeats what a move's
  // response already gave: the same version is not drawn again unless forced).
  async function show(view, legalMap, { force = false } = {}) {
    if (page.view && (view.version < page.view.version || (view.version === page.view.version && !force))) return;
    page.view = view;
    const me = view.viewer.seat;
    if (me !== null && view.status === "active" && view.to_act.includes(me)) {
      if (legalMap && legalMap[String(me)]) page.legal = legalMap[String(me)];
      else page.legal = (await api.legal(id, token)).data.moves;
    } else page.legal = [];
    draw();
  }

  function draw() {
    const view = page.view;
    const me = view.viewer.seat;
    const moves = view.status === "finished" ? null : h("section", { class: "moves", "aria-label": "Your moves", id: "moves" },
      h("h2", {}, me === null ? "Spectating" : page.legal.length ? "Your move" : view.status === "active" ? "Waiting for the others…" : "Moves"),
      page.legal.map((mv, i) => h("button", { type: "button", class: "move", "data-move": i, disabled: page.busy,
        onclick: () => play(mv) }, label(mv, view))),
      me !== null && view.status === "active" ? h("button", { type: "button", class: "resign", disabled: page.busy,
        onclick: () => { if (confirm("Resign this match? The server plays your seat from now on.")) play({ type: "resign" }); } },
      "Resign") : null);
    const result = view.result ? h("section", { class: "result", id: "result", role: "status", "data-winners": view.result.winners.join(",") },
      h("h2", {}, "Result"), h("p", {}, resultText(view)), ending(view),
      h("a", { href: `#/replay/${id}` }, "Replay this match")) : null;
    // the creator's invite links, again for every seat still open (kept in this browser)
    const invites = page.open.length && view.status === "active" ? h("section", { class: "panel invites", id: "invites" },
      h("h2", {}, "Seats still open"), h("p", {}, "Send each friend the link of a seat; opening it claims the seat."),
      inviteRows(id, page.open, held.invite)) : null;
    const log = h("details", { class: "log" }, h("summary", {}, `Events (${page.log.length})`),
      h("ol", { reversed: true }, page.log.slice(-60).reverse().map((e) => h("li", {}, eventText(e, view)))));
    fill(main, 
      h("h1", {}, `${view.game} — match ${id}`),
      h("p", { class: "who" }, me === null ? "You are watching as a spectator." : `You play ${seatName(view, me)} (seat ${me}).`,
        " ", h("a", { href: `#/watch/${id}` }, "spectator link"), view.status === "finished" ? null : h("span", { id: "conn", class: "conn", "data-state": page.conn }, page.conn)),
      status(view), clock(view), result, invites, h("div", { class: "match-body" }, moves, board(view), log));
  }

  function clock(view) {
    const d = view.deadline || {};
    const entries = Object.entries(d);
    if (!entries.length || view.status !== "active") return null;
    const el = h("p", { class: "clock", id: "clock", "aria-live": "off" });
    const tick = () => {
      if (!el.isConnected) return;
      el.textContent = entries.map(([k, ms]) => `${seatName(view, Number(k))}: ${Math.max(0, Math.ceil((ms - Date.now()) / 1000))} s left`).join(" · ");
      el.classList.toggle("urgent", entries.some(([, ms]) => ms - Date.now() < 10000));
      setTimeout(tick, 250);
    };
    setTimeout(tick, 0);
    return el;
  }

  async function play(move) {
    if (page.busy) return;
    page.busy = true;
    draw();
    const clean = { ...move };
    delete clean.label;
    try {
      const { data } = await api.move(id, token, clean, page.view.version);
      addEvents(data.events);
      if (document.getElementById("notice").dataset.kind === "error") notify("");
      page.busy = false;
      await show(data.state, data.legal_moves, { force: true });  // the stream may have drawn it while busy
    } catch (err) {
      page.busy = false;
      notify(explain(err), err.status === 409 ? "warn" : "error", { sticky: err.status !== 409 });
      await refresh();
    }
  }

  function addEvents(events) {
    const before = page.lastEvent;
    for (const e of events) {
      if (e.version <= before) continue;
      page.log.push(e);
      page.lastEvent = Math.max(page.lastEvent, e.version);
    }
  }

  function connect(after) {
    if (page.closed) return;
    const es = new EventSource(api.streamUrl(id, after, token));
    page.es = es;
    es.addEventListener("open", () => { setConn("live"); notify(""); });
    es.addEventListener("events", (msg) => {
      const data = JSON.parse(msg.data);
      page.streamed = data.version;
      if (data.version > page.lastEvent) addEvents(data.events);
      if (data.state) show(data.state, data.legal_moves);
      if (page.open.length) openSeats().catch(() => {});
    });
    es.addEventListener("end", () => { es.close(); page.es = null; setConn("ended"); refresh(); });
    es.addEventListener("error", () => {
      if (page.closed) return;
      setConn("reconnecting");
      window.lodgePlay.reconnects += 1;
      notify("Lost the connection to the server; reconnecting (the stream resumes where it stopped)…", "warn", { sticky: true });
      if (es.readyState === EventSource.CLOSED) {  // an HTTP error: the browser gives up, we do not
        page.es = null;
        setTimeout(() => connect(page.streamed ?? after), 2000);
      }
    });
  }

  function setConn(text) {
    page.conn = text;
    const el = document.getElementById("conn");
    if (el) { el.textContent = text; el.dataset.state = text; }
  }

  // Which seats are still open, for a page that holds the match's invite (its creator's).
  async function openSeats() {
    if (!held || !held.invite || !page.view || page.view.status !== "active") return;
    const open = (await api.seats(id)).data.seats.filter((st) => st.kind === "open");
    if (open.length !== page.open.length) { page.open = open; draw(); }
  }

  page.play = play;
  page.stop = () => { page.closed = true; if (page.es) page.es.close(); };
  refresh().then(() => {
    if (page.view && page.view.status === "active") connect(page.view.version);
    openSeats().catch(() => {});
    if (page.view) api.events(id, -1, token).then(({ data }) => { page.log = []; page.lastEvent = -1; addEvents(data.events); draw(); }).catch(() => {});
  });
  return page;
}
