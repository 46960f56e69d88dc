// The lobby: a new match against server bots or friends (open seats and invite links), the public
// matches waiting for players, and a match opened by id as spectator or replay.
import { api, seats } from "./api.js";
import { h, fill } from "./dom.js";
import { notify, explain } from "./common.js";

const CLOCKS = [["", "no clock"], ["10000", "10 s per move"], ["30000", "30 s per move"], ["60000", "1 min per move"], ["300000", "5 min per move"]];
const KINDS = [["heuristic", "computer (heuristic bot)"], ["random", "computer (random bot)"], ["open", "a friend (open seat, invite link)"]];

export function inviteLink(id, seat, invite) {
  return `${location.origin}/play#/join/${id}/${seat}/${encodeURIComponent(invite || "public")}`;
}

// One row per open seat: its invite link, a Copy button (the lobby after create, the match page).
export function inviteRows(id, open, invite) {
  return open.map((st) => {
    const field = h("input", { type: "text", readonly: true, value: inviteLink(id, st.seat, invite), class: "invite", "data-seat": st.seat,
      "aria-label": `Invite link for seat ${st.seat} (${st.name})` });
    return h("p", {}, h("label", {}, `Seat ${st.seat} (${st.name}): `, field), " ",
      h("button", { type: "button", onclick: () => copy(field) }, `Copy link for seat ${st.seat}`));
  });
}

const SEED_MAX = 2 ** 53 - 1;  // api.md 1.2: every JSON client reads a seed exactly

export async function lobbyPage(main) {
  let catalogue;
  try { catalogue = (await api.games()).data.games; } catch (err) {
    fill(main, h("p", { class: "error" }, explain(err)));
    return {};
  }
  const byId = Object.fromEntries(catalogue.map((g) => [g.id, g]));
  const game = h("select", { id: "game", name: "game" }, catalogue.map((g) => h("option", { value: g.id }, g.title)));
  const summary = h("p", { class: "info", id: "summary" });
  const options = h("fieldset", { id: "options" });
  const opponents = h("div", { id: "opponents" });
  const count = h("input", { id: "opponent-count", type: "number", min: 1, value: 1, inputmode: "numeric" });
  const name = h("input", { id: "my-name", type: "text", value: localStorage.getItem("lodge:name") || "me", maxlength: 40, autocomplete: "nickname" });
  const clock = h("select", { id: "clock" }, CLOCKS.map(([v, t]) => h("option", { value: v }, t)));
  const pub = h("input", { id: "public", type: "checkbox" });
  const seed = h("input", { id: "seed", type: "number", min: 0, max: SEED_MAX, placeholder: "random", inputmode: "numeric" });
  const createButton = h("button", { type: "submit", id: "create" }, "Create match");
  const created = h("section", { id: "created", "aria-live": "polite" });

  function optionInputs() {
    const g = byId[game.value];
    summary.textContent = g.summary || "";
    count.max = g.max_players - 1;
    if (Number(count.value) > g.max_players - 1) count.value = g.max_players - 1;
    fill(options, h("legend", {}, `${g.title} options`), g.options.filter((o) => ["int", "bool", "string"].includes(o.type)).map((o) => {
      const idv = `opt-${o.name}`;
      let input;
      if (o.type === "bool") input = h("input", { id: idv, type: "checkbox", "data-option": o.name, "data-type": o.type, checked: o.default === true });
      else if (o.choices) input = h("select", { id: idv, "data-option": o.name, "data-type": o.type }, o.choices.map((c) => h("option", { value: c, selected: c === o.default }, c)));
      else input = h("input", { id: idv, type: "number", "data-option": o.name, "data-type": o.type, min: o.minimum ?? null, max: o.maximum ?? null,
        placeholder: o.default === null ? (o.default_doc || "default") : String(o.default), inputmode: "numeric" });
      return h("label", { for: idv, class: "opt", title: o.description }, h("span", {}, o.name), input,
        h("small", {}, o.description));
    }));
    opponentRows();
  }

  function opponentRows() {
    const n = Math.max(1, Math.min(Number(count.value) || 1, byId[game.value].max_players - 1));
    const rows = [...opponents.querySelectorAll(".opponent")];
    while (rows.length < n) {
      const k = rows.length + 1;
      const row = h("div", { class: "opponent" },
        h("label", {}, `Seat ${k}: `, h("select", { class: "kind", "aria-label": `Seat ${k} is played by` }, KINDS.map(([v, t]) => h("option", { value: v }, t)))),
        h("label", {}, " name ", h("input", { class: "opp-name", type: "text", value: `Biber ${k}`, maxlength: 40, "aria-label": `Seat ${k} name` })));
      opponents.append(row);
      rows.push(row);
    }
    rows.slice(n).forEach((r) => r.remove());
  }

  async function create(ev) {
    ev.preventDefault();
    if (createButton.disabled) return;  // a second click (or Enter) while the first create is under way
    const g = byId[game.value];
    const opts = {};
    for (const el of options.querySelectorAll("[data-option]")) {
      if (el.dataset.type === "bool") { if (el.checked) opts[el.dataset.option] = true; }
      else if (el.dataset.type === "int") { if (el.value !== "") opts[el.dataset.option] = Number(el.value); }
      else if (el.value !== "" && el.value !== String(g.options.find((o) => o.name === el.dataset.option).default)) opts[el.dataset.option] = el.value;
    }
    localStorage.setItem("lodge:name", name.value);
    const players = [{ name: name.value || "me" }, ...[...opponents.querySelectorAll(".opponent")].map((r) => {
      const kind = r.querySelector(".kind").value;
      const n = r.querySelector(".opp-name").value || "Biber";
      return kind === "open" ? { name: n, open: true } : { name: n, bot: kind };
    })];
    const body = { game: g.id, players, options: opts };
    if (seed.value !== "") {
      body.seed = Number(seed.value);
      if (!Number.isSafeInteger(body.seed) || body.seed < 0) { notify(`The seed is a whole number 0 … ${SEED_MAX}.`, "error"); return; }
    }
    if (clock.value) body.clock = { per_move_ms: Number(clock.value) };
    if (pub.checked) body.public = true;
    let data;
    createButton.disabled = true;
    try { data = (await api.create(body)).data; } catch (err) { notify(explain(err), "error"); return; } finally { createButton.disabled = false; }
    // the invite stays with this browser's entry: the match page shows it again for every open seat
    seats.put(data.match_id, { token: data.seats[0].token, admin: data.admin_token, game: g.id, invite: data.invite });
    const open = data.seats.filter((st) => st.open);
    if (!open.length) { location.hash = `#/match/${data.match_id}`; return; }
    fill(created, h("h2", {}, "Invite your friends"),
      h("p", {}, "Send each friend the link of a seat; opening it claims the seat. The match page shows the links again while a seat is open."),
      inviteRows(data.match_id, open, data.invite),
      h("p", {}, h("a", { href: `#/match/${data.match_id}`, id: "go-match", class: "button" }, "Go to the match")));
    created.querySelector("input").focus();
  }

  const publicList = h("ul", { id: "public-list" });
  const more = h("button", { type: "button", id: "more", hidden: true }, "More");
  let cursor = null;
  async function list(reset) {
    if (reset) { fill(publicList); cursor = null; }
    try {
      const { data } = await api.lobby(game.value, cursor);
      cursor = data.next;
      more.hidden = !cursor;
      if (!data.matches.length && reset) publicList.append(h("li", {}, "No public match of this game is waiting for players."));
      for (const m of data.matches) {
        publicList.append(h("li", { "data-match": m.match_id },
          `${m.game} · ${m.seats.map((st) => `${st.name} (${st.kind}${st.bot ? `: ${st.bot}` : ""})`).join(", ")} · ${m.created} `,
          m.seats.filter((st) => st.kind === "open").map((st) => h("button", { type: "button", onclick: () => join(m.match_id, st.seat, null, m.game) },
            `Join as ${st.name}`)), " ", h("a", { href: `#/watch/${m.match_id}` }, "watch")));
      }
    } catch (err) {
      fill(publicList, h("li", {}, err.status === 404 || err.status === 405 ? "This server has no lobby." : explain(err)));
    }
  }
  more.addEventListener("click", () => list(false));

  const watchId = h("input", { id: "watch-id", type: "text", placeholder: "match id", "aria-label": "Match id", autocomplete: "off" });
  const open = (route) => (ev) => { ev.preventDefault(); if (watchId.value.trim()) location.hash = `#/${route}/${watchId.value.trim()}`; };

  game.addEventListener("change", () => { optionInputs(); list(true); });
  count.addEventListener("input", opponentRows);
  const mine = seats.list();
  fill(main, 
    h("h1", {}, "Play beaver games"),
    h("form", { id: "new-match", class: "panel", onsubmit: create, "aria-labelledby": "new-h" },
      h("h2", { id: "new-h" }, "New match"),
      h("label", { for: "game" }, "Game "), game, summary,
      h("p", {}, h("label", { for: "my-name" }, "Your name "), name),
      h("p", {}, h("label", { for: "opponent-count" }, "Opponents "), count), opponents,
      h("p", {}, h("label", { for: "clock" }, "Clock "), clock, " ", h("label", {}, pub, " list in the lobby (anyone may join)")),
      options,
      h("p", {}, h("label", { for: "seed" }, "Seed "), seed),
      createButton, created),
    h("section", { class: "panel", "aria-labelledby": "pub-h" }, h("h2", { id: "pub-h" }, "Public matches waiting for players"), publicList, more,
      h("button", { type: "button", onclick: () => list(true) }, "Refresh")),
    h("form", { class: "panel", onsubmit: open("watch"), "aria-labelledby": "watch-h" }, h("h2", { id: "watch-h" }, "Open a match by id"), watchId, " ",
      h("button", { type: "submit" }, "Watch"), " ", h("button", { type: "button", onclick: open("replay") }, "Replay")),
    mine.length ? h("section", { class: "panel" }, h("h2", {}, "Your matches in this browser"),
      h("ul", {}, mine.map((e) => h("li", {}, h("a", { href: `#/match/${e.id}` }, `${e.game || "match"} ${e.id}`))))) : null);
  optionInputs();
  list(true);
  return {};
}

export async function join(id, seat, invite, game) {
  try {
    const { data } = await api.claim(id, seat, invite);
    seats.put(id, { token: data.token, game: game || data.state.game });
    location.hash = `#/match/${id}`;
  } catch (err) {
    notify(explain(err), "error", { sticky: true });
    unusable(id, seat, err);
  }
}

// The page for an invite that cannot be used (taken, wrong, no such match): why, and where to go.
function unusable(id, seat, err) {
  const why = err.code === "seat_taken" ? `Seat ${seat} of match ${id} is already taken (or is no open seat): an invite link claims its seat once.`
    : err.code === "forbidden" ? `This invite link does not open seat ${seat} of match ${id}: it is mistyped, cut short, or for another match.`
      : err.status === 404 ? `There is no match ${id} (finished long ago, deleted, or a typo in the link).` : explain(err);
  const mine = seats.get(id);
  fill(document.getElementById("main"), h("section", { class: "panel", id: "bad-invite" },
    h("h1", {}, "This invite cannot be used"), h("p", {}, why),
    mine && mine.token ? h("p", {}, h("a", { href: `#/match/${id}`, class: "button", id: "my-seat" }, "Open your own seat in this match")) : null,
    err.status === 404 ? null : h("p", {}, h("a", { href: `#/watch/${id}`, class: "button", id: "spectate" }, "Watch the match as a spectator")),
    h("p", {}, h("a", { href: "#/" }, "Back to the lobby"))));
}

function copy(field) {
  field.select();
  const done = () => notify("Link copied.");
  if (navigator.clipboard) navigator.clipboard.writeText(field.value).then(done, () => { document.execCommand("copy"); done(); });
  else { document.execCommand("copy"); done(); }
}
