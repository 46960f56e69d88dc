// Lodge's reference front end: hash routes over the public contract only.
//   #/                       lobby
//   #/match/<id>             play with the token this browser holds (else spectate)
//   #/watch/<id>             spectate
//   #/join/<id>/<seat>/<inv> claim an open seat with the invite ("public" for public matches)
//   #/replay/<id>            step through a finished match's record
//   #/ladder/<id>            a rating ladder's leaderboard
import { h, fill } from "./dom.js";
import { lobbyPage, join } from "./lobby.js";
import { matchPage } from "./match.js";
import { replayPage } from "./replay.js";
import { ladderPage } from "./ladder.js";
import { notify } from "./common.js";

const main = document.getElementById("main");
let current = null;

function route() {
  if (current && current.stop) current.stop();
  current = null;
  notify("");
  const [, page, id, seat, invite] = (location.hash || "#/").slice(1).split("/");
  if (page === "match" && id) current = matchPage(main, id);
  else if (page === "watch" && id) current = matchPage(main, id, { spectate: true });
  else if (page === "replay" && id) current = replayPage(main, id);
  else if (page === "ladder" && id) current = ladderPage(main, id);
  else if (page === "join" && id) {
    fill(main, h("p", {}, `Claiming seat ${seat} of match ${id}…`));
    join(id, Number(seat), invite && invite !== "public" ? decodeURIComponent(invite) : null);
  } else lobbyPage(main);
  window.lodgePlay.current = current;
  main.focus({ preventScroll: true });
}

window.addEventListener("hashchange", route);
// For people debugging in the console (and the browser tests): the page object, reconnects.
window.lodgePlay = { loadedAt: Date.now(), reconnects: 0, current: null };
route();
