// The lobby: games with filters (waiting for players too), joining an open seat, and a form
// to create a game whose seats are named players, open seats or bots.

import { api, device, rulesets, seatLink, seats } from "./api.js";
import { el, words } from "../games/common.js";
import { fill, notify, problemText } from "./ui.js";

const PAGE = 20;
const MAX_BRANCH_ROWS = 50;

export function showLobby(main, params) {
  const list = el("div", { class: "game-list", aria: { live: "polite" } });
  const filters = filterForm(params);
  const create = el("section", { class: "panel", aria: { labelledby: "create-title" } });
  const mine = el("section", { class: "panel my-games", aria: { labelledby: "my-games-title" } });
  fill(
    main,
    el("h1", { text: "Games" }),
    mine,
    el(
      "div",
      { class: "lobby" },
      el("section", { class: "panel", aria: { labelledby: "games-title" } },
        el("h2", { id: "games-title", text: "Find a game" }), filters, list),
      create,
    ),
  );
  myGames(mine).catch((error) => fill(mine, el("p", { class: "error", text: problemText(error) })));
  listGames(list, params).catch((error) => fill(list, el("p", { class: "error", text: problemText(error) })));
  createForm(create).catch((error) => notify(problemText(error), "error"));
  return () => {};
}

/** "My games": the games this device's application holds seats of, those where one of its
 * seats must act first, each seat a button that opens the game as that seat. */
async function myGames(box) {
  const key = device.key();
  const title = el("h2", { id: "my-games-title", text: "My games" });
  if (!key) {
    fill(box, title, el("p", { class: "muted", text: "Games you create or join on this device show here." }));
    return;
  }
  const page = await api("/apps/me/games?limit=50", { token: key });
  const games = [...page.games].sort((a, b) => Number(b.my_turn) - Number(a.my_turn));
  const forget = el("button", { type: "button", class: "secondary", id: "forget-device", text: "Forget this device" });
  forget.addEventListener("click", async () => {
    if (!window.confirm("Forget this device? Its games stay, but this browser holds their seats no more.")) return;
    await device.forget();
    notify("This device is forgotten: its key no longer works.");
    myGames(box);
  });
  const rows = games.map((game) => {
    const state = game.status.finished ? "finished" : game.my_turn ? "your turn"
      : game.status.waiting_for_players ? "waiting for players" : "being played";
    return el("li", { class: game.my_turn ? "my-turn" : "", data: { game: game.id } },
      el("span", { text: `${words(game.ruleset)} · ${game.players.join(", ")} · ` }),
      el("strong", { text: state }), " ",
      game.seats.map((seat) => {
        const open = el("a", { href: `#/games/${encodeURIComponent(game.id)}`, class: "button",
          text: `Play as ${seat.name}`, data: { seat: seat.seat } });
        open.addEventListener("click", () => {
          seats.set(game.id, { token: key, seat: seat.seat, holder: false, app: true });
        });
        return open;
      }));
  });
  fill(box, title,
    rows.length ? el("ul", { class: "my-games-list" }, rows) : el("p", { class: "muted", text: "No game yet on this device." }),
    el("p", { class: "small muted" }, "This device keeps its key in this browser. ", forget));
}

function filterForm(params) {
  const form = el("form", { class: "filters", role: "search", aria: { label: "Filter games" } });
  const ruleset = el("select", { id: "f-ruleset", name: "ruleset" }, el("option", { value: "", text: "any game" }));
  rulesets().then((all) => {
    for (const r of all) ruleset.appendChild(el("option", { value: r.id, text: r.title }));
    ruleset.value = params.get("ruleset") || "";
  });
  const status = el("select", { id: "f-status", name: "status" },
    el("option", { value: "", text: "any" }), el("option", { value: "active", text: "being played" }),
    el("option", { value: "finished", text: "finished" }));
  status.value = params.get("status") || "";
  const player = el("input", { id: "f-player", name: "player", type: "search", maxlength: 40, value: params.get("player") || "" });
  const branches = el("input", { id: "f-branches", name: "branches", type: "search", maxlength: 120,
    placeholder: "a game's id", value: params.get("branches") || "" });
  const open = el("input", { id: "f-open", name: "open", type: "checkbox", value: "true" });
  open.checked = params.get("open") === "true";
  form.append(
    field("Game", ruleset), field("Status", status), field("Player", player), field("Branches of", branches),
    el("label", { class: "inline", for: "f-open" }, open, " waiting for players"),
    el("button", { type: "submit", text: "Show" }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (value) query.set(name, value);
    const text = query.toString();
    window.location.hash = text ? `#/?${text}` : "#/";
  });
  return form;
}

function field(label, control) {
  return el("label", { class: "field", for: control.id }, el("span", { text: label }), control);
}

async function listGames(list, params) {
  const source = params.get("branches");
  if (source) return listBranches(list, source);
  const query = new URLSearchParams({ limit: String(PAGE) });
  for (const name of ["ruleset", "status", "player"]) if (params.get(name)) query.set(name, params.get(name));
  if (params.get("open") === "true") query.set("open", "true");
  const table = gamesTable();
  fill(list, table.node);
  let cursor = null;
  const more = el("button", { type: "button", class: "secondary", text: "More games" });
  const load = async () => {
    if (cursor) query.set("cursor", cursor);
    const page = await api(`/games?${query}`);
    for (const game of page.games) table.add(game);
    cursor = page.next_cursor;
    if (!cursor) more.remove();
    if (!table.count()) fill(list, el("p", { class: "muted", text: "No game matches." }));
  };
  more.addEventListener("click", () => load().catch((e) => notify(problemText(e), "error")));
  list.appendChild(more);
  await load();
}

async function listBranches(list, source) {
  const found = await api(`/games/${encodeURIComponent(source)}/branches`);
  if (!found.branches.length) {
    fill(list, el("p", { class: "muted", text: `No branch of ${source} yet.` }));
    return;
  }
  const table = gamesTable(true);
  fill(list, el("p", {}, "Branches of ", el("a", { href: `#/games/${encodeURIComponent(source)}`, text: source })), table.node);
  for (const branch of found.branches.slice(0, MAX_BRANCH_ROWS)) {
    const game = await api(`/games/${encodeURIComponent(branch.id)}`);
    table.add({ ...game, ...game.status, status: game.status.finished ? "finished" : "active", at: branch.at });
  }
}

function gamesTable(branches = false) {
  const body = el("tbody");
  const node = el(
    "table",
    { class: "games" },
    el("caption", { class: "visually-hidden", text: "Games" }),
    el("thead", {}, el("tr", {},
      ["Game", "Players", branches ? "From event" : null, "Status", "Round", "Version", branches ? null : "Open seats"].filter(Boolean)
        .map((h) => el("th", { scope: "col", text: h })))),
    body,
  );
  return {
    node,
    count: () => body.childNodes.length,
    add(game) {
      const toAct = (game.to_act || []).map((s) => game.players[s]).join(", ");
      const openSeats = game.open_seats || [];
      const state = game.status === "finished" ? "finished" : openSeats.length ? "waiting for players"
        : toAct ? `${toAct} to act` : game.awaiting_system ? "automatic step due" : "being played";
      const bots = new Set(game.bots || []);
      const who = game.players.map((name, seat) => (openSeats.includes(seat) ? `seat ${seat + 1} open`
        : bots.has(seat) ? `${name} (bot)` : name));
      body.appendChild(el("tr", { data: { game: game.id } },
        el("td", {}, el("a", { href: `#/games/${encodeURIComponent(game.id)}`, text: `${words(game.ruleset)} · ${game.id}` })),
        el("td", { text: who.join(", ") }),
        branches ? el("td", { text: String(game.at) }) : null,
        el("td", { text: state }),
        el("td", { text: game.round === null || game.round === undefined ? "" : String(game.round) }),
        el("td", { text: String(game.version) }),
        branches ? null : el("td", {}, game.status === "finished" ? null : openSeats.map((seat) => joinForm(game.id, seat)))));
    },
  };
}

async function createForm(box) {
  const all = await rulesets();
  const ruleset = el("select", { id: "c-ruleset", name: "ruleset" }, all.map((r) => el("option", { value: r.id, text: r.title })));
  const seatsBox = el("fieldset", { class: "seats" });
  const optionsBox = el("div", { class: "options" });
  const result = el("div", { class: "created", aria: { live: "polite" } });
  const form = el("form", { class: "create" }, field("Game", ruleset), seatsBox, optionsBox,
    el("button", { type: "submit", text: "Create the game" }));
  const current = () => all.find((r) => r.id === ruleset.value);
  let seatRows = null;
  const redraw = () => {
    seatRows = seatControls(seatsBox, current());
    optionControls(optionsBox, current());
  };
  ruleset.addEventListener("change", redraw);
  redraw();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { ruleset: ruleset.value, ...seatRows.body(), options: readOptions(optionsBox, current()) };
    try {
      // Created with this device's key: its seats are this device's, found again under "My games".
      const game = await api("/games", { method: "POST", body, token: await device.ensure() });
      showCreated(result, game);
    } catch (error) {
      fill(result, el("p", { class: "error", text: problemText(error) }));
    }
  });
  fill(box, el("h2", { id: "create-title", text: "Create a game" }), form, result);
}

/** The seats of a new game, as POST /games takes them (`players`): each seat a named
 * player (a name), open for someone to join later (`{"open": true}`) or a bot's
 * (`{"bot": {"agent", "playouts"?}}`, with an optional name). */
export function seatControls(box, ruleset) {
  let count = Math.min(Math.max(2, ruleset.min_players), ruleset.max_players);
  const rows = [];
  const number = el("select", { id: "c-count", name: "count" });
  for (let n = ruleset.min_players; n <= ruleset.max_players; n += 1) number.appendChild(el("option", { value: n, text: String(n) }));
  number.value = String(count);
  const list = el("div", { class: "seat-rows" });
  const draw = () => {
    const kept = rows.map((row) => row.keep());
    rows.length = 0;
    fill(list);
    for (let seat = 0; seat < count; seat += 1) {
      const row = seatRow(seat, kept[seat]);
      rows.push(row);
      list.appendChild(row.node);
    }
  };
  number.addEventListener("change", () => {
    count = Number(number.value);
    draw();
  });
  draw();
  fill(box, el("legend", { text: "Seats" }), field("Players", number), list);
  return { body: () => ({ players: rows.map((row) => row.value()) }) };
}

export const AGENTS = [
  ["random", "random (any legal move)"],
  ["greedy", "greedy (one move ahead)"],
  ["mcts", "MCTS (searches playouts)"],
];
export const MAX_BOT_PLAYOUTS = 1000; // the API's bound for a bot's playouts a decision

function seatRow(seat, kept = {}) {
  const kind = el("select", { id: `c-kind-${seat}`, name: `kind-${seat}`, data: { seat } },
    el("option", { value: "player", text: "a player" }), el("option", { value: "open", text: "open: someone joins" }),
    el("option", { value: "bot", text: "a bot" }));
  kind.value = kept.kind || "player";
  const name = el("input", { id: `c-seat-${seat}`, name: `seat-${seat}`, maxlength: 40, value: kept.name ?? `Player ${seat + 1}` });
  const agent = el("select", { id: `c-agent-${seat}`, name: `agent-${seat}` }, AGENTS.map(([value, text]) => el("option", { value, text })));
  agent.value = kept.agent || "greedy";
  const playouts = el("input", { id: `c-playouts-${seat}`, name: `playouts-${seat}`, type: "number", min: 1,
    max: MAX_BOT_PLAYOUTS, step: 1, value: kept.playouts || "100" });
  const nameField = field("Name", name);
  const agentField = field("Bot", agent);
  const playoutsField = field("Playouts a move", playouts);
  const node = el("div", { class: "seat-row", role: "group", aria: { label: `Seat ${seat + 1}` } },
    field(`Seat ${seat + 1}`, kind), nameField, agentField, playoutsField);
  const show = () => {
    const k = kind.value;
    nameField.hidden = k === "open";
    name.required = k === "player";
    name.placeholder = k === "bot" ? "optional" : "";
    agentField.hidden = k !== "bot";
    playoutsField.hidden = k !== "bot" || agent.value !== "mcts";
  };
  kind.addEventListener("change", () => {
    if (kind.value === "bot" && name.value === `Player ${seat + 1}`) name.value = "";
    show();
  });
  agent.addEventListener("change", show);
  show();
  return {
    node,
    keep: () => ({ kind: kind.value, name: name.value, agent: agent.value, playouts: playouts.value }),
    value() {
      if (kind.value === "open") return { open: true };
      if (kind.value === "bot") {
        const bot = { agent: agent.value };
        if (agent.value === "mcts") bot.playouts = Number(playouts.value);
        const named = name.value.trim();
        return named ? { bot, name: named } : { bot };
      }
      return name.value.trim();
    },
  };
}

/** Take an open seat: POST .../seats/{seat}/join with a name; the seat's token (given once)
 * goes to this tab's sessionStorage, as a creator's "Play as" does, and the game opens. */
export function joinForm(gameId, seat, joined = null) {
  const id = `join-${gameId}-${seat}`;
  const name = el("input", { id, name: "name", required: true, maxlength: 40, autocomplete: "nickname", placeholder: "your name" });
  const said = el("span", { class: "error small", aria: { live: "polite" } });
  const form = el("form", { class: "join", data: { seat } },
    el("label", { class: "visually-hidden", for: id, text: `Your name for seat ${seat + 1}` }), name,
    el("button", { type: "submit", text: `Join seat ${seat + 1}` }), said);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const taken = await api(`/games/${encodeURIComponent(gameId)}/seats/${seat}/join`,
        { method: "POST", body: { name: name.value.trim() }, token: await device.ensure() });
      seats.set(gameId, { token: taken.token, seat: taken.seat, holder: false });
      if (joined) joined();
      else window.location.hash = `#/games/${encodeURIComponent(gameId)}`;
    } catch (error) {
      said.textContent = problemText(error);
    }
  });
  return form;
}

function optionControls(box, ruleset) {
  fill(box);
  const descriptions = ruleset.option_descriptions || {};
  for (const [name, value] of Object.entries(ruleset.options || {})) {
    const id = `c-option-${name}`;
    const help = descriptions[name] ? el("small", { id: `${id}-help`, class: "muted", text: descriptions[name] }) : null;
    let control;
    if (typeof value === "boolean") {
      control = el("input", { id, type: "checkbox", data: { option: name, kind: "boolean" } });
      control.checked = value;
    } else if (typeof value === "number" || value === null) {
      control = el("input", { id, type: "number", min: 0, step: 1, data: { option: name, kind: "number" },
        placeholder: "none", value: value === null ? "" : String(value) });
    } else {
      control = el("input", { id, type: "text", maxlength: 64, data: { option: name, kind: "text" }, value: String(value) });
    }
    if (help) control.setAttribute("aria-describedby", help.id);
    box.appendChild(el("div", { class: "option" }, field(words(name), control), help));
  }
}

function readOptions(box, ruleset) {
  const options = {};
  for (const control of box.querySelectorAll("[data-option]")) {
    const name = control.dataset.option;
    const kind = control.dataset.kind;
    const value = kind === "boolean" ? control.checked : kind === "number" ? (control.value === "" ? null : Number(control.value)) : control.value;
    // Only what differs from the default goes in: the game keeps its defaults.
    if (JSON.stringify(value) !== JSON.stringify(ruleset.options[name])) options[name] = value;
  }
  return options;
}

function showCreated(box, game) {
  fill(
    box,
    el("h3", { text: `Game ${game.id} created` }),
    el("p", { class: "warning", text: "Each seat's link holds its token and is shown only now: keep them, and give each player theirs." }),
    // Only a player's seat has a token to hand over.
    el("ul", { class: "seat-links" }, game.seats.map((seat) => {
      if (!seat.token) {
        const what = seat.kind === "open" ? "open: anyone may join it from the list of games" : `a bot (${seat.bot ? seat.bot.agent : "bot"})`;
        return el("li", { class: "muted", data: { seat: seat.seat, kind: seat.kind } }, `Seat ${seat.seat + 1}${seat.name ? ` (${seat.name})` : ""}: ${what}`);
      }
      const link = seatLink(game.id, seat.token);
      const copy = el("input", { readonly: true, value: link, id: `link-${seat.seat}`, class: "link", aria: { label: `Link for ${seat.name}` } });
      const open = el("a", { href: "#", class: "button", text: `Play as ${seat.name}`, data: { seat: seat.seat } });
      open.addEventListener("click", (event) => {
        event.preventDefault();
        seats.set(game.id, { token: seat.token, seat: seat.seat, holder: false });
        window.location.hash = `#/games/${encodeURIComponent(game.id)}`;
      });
      return el("li", {}, open, " ", copy);
    })),
    el("p", {}, el("a", { href: `#/games/${encodeURIComponent(game.id)}`, text: "Watch as a spectator" })),
  );
}
