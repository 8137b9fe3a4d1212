// The shell's router: #/ is the lobby, #/games/<id> a game's page. A token arriving in the
// fragment (#/games/<id>?token=... or ?holder=...) moves into sessionStorage at once and
// leaves the address bar, so it is neither bookmarked nor shown over a shoulder.

import { seats } from "./api.js";
import { showLobby } from "./lobby.js";
import { showGame } from "./game.js";

let leave = null;

function route() {
  const hash = window.location.hash || "#/";
  const [path, query] = hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  const main = document.getElementById("main");
  if (leave) {
    leave();
    leave = null;
  }
  const game = path.match(/^\/games\/([^/]+)$/);
  if (game) {
    const gameId = decodeURIComponent(game[1]);
    const token = params.get("token");
    const holder = params.get("holder");
    if (token || holder) {
      seats.set(gameId, { token: token || holder, seat: null, holder: Boolean(holder) });
      history.replaceState(null, "", `#/games/${encodeURIComponent(gameId)}`);
    }
    leave = showGame(main, gameId);
    return;
  }
  leave = showLobby(main, params);
}

window.addEventListener("hashchange", route);
route();
