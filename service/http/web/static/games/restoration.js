// Restoration's table (renderer contract: README.md here). Words from the rulebook: the
// Workshop Area (the Main Workshop and four auxiliary Workshops, each with a Production
// token on its ring of spaces), worker positions and Influence Points, Construction tiles,
// Event tiles, Manager cards, the Development board (Technology and Reputation tracks),
// Research departments, Artisans, Upgrade tokens and Achievement Points.

import { put, card, chip, chips, el, faceDown, kv, scoreTable, seatColor, seatName, seatPanel, section, svg, track, words } from "./common.js";

const ROUNDS = 3;
// The lengths of the Development board's tracks as printed (levels 1-7, then the top).
const TECHNOLOGY_TOP = 8;
const REPUTATION_TOP = 15;
// The eight spaces of a workshop, clockwise around its board from the top-left corner.
const RING = [[0, 0], [1, 0], [2, 0], [2, 1], [2, 2], [1, 2], [0, 2], [0, 1]];
const CERAMICS = { blue: "#9cc3f0", red: "#f2a29b", green: "#a6d8b4", white: "#ffffff" };

export function render(root, answer, ctx) {
  const view = answer.state;
  put(
    root,
    kv([
      ["Round", `${view.round} of ${ROUNDS}`],
      ["Phase", words(view.phase)],
      ["First player", seatName(ctx, view.first_player)],
      ["Turn", view.turn && view.turn.seat !== undefined && view.turn.seat !== null ? turnText(view.turn, ctx) : undefined],
    ]),
    view.final ? section("Final scoring", finalScores(view.final, ctx)) : null,
    section("Event tiles", el("div", { class: "grid" },
      view.events.revealed.map((event, index) => card({ name: event.name, kind: `round ${index + 1}`, effect: event.text })),
      view.events.face_down ? faceDown(view.events.face_down, "Event tiles face down") : null)),
    section("Workshop Area", el("div", { class: "board workshops" },
      Object.entries(view.workshops).map(([letter, workshop]) => workshopBoard(letter, workshop)))),
    section("Worker positions", positions(view, ctx)),
    section("Construction tiles", el("div", { class: "grid" },
      view.construction.display.map((tile) => constructionTile(tile, ctx)),
      faceDown(view.construction.pile, "Construction tiles in the stack"))),
    section("Manager cards", el("div", { class: "row" },
      el("div", {}, el("div", { class: "small", text: "Open pool" }), chips(view.managers.supply)),
      faceDown(view.managers.deck.draw_pile, "Manager deck"),
      el("div", { class: "small", text: `Discarded: ${view.managers.discard_pile.length}; removed for this game: ${view.managers.removed.length}` }))),
    section("Supply", kv([
      ["Artisans", view.artisan_supply],
      ["Upgrade tokens", view.upgrade_supply],
      ["Scoring spaces taken", view.scoring_spaces_taken],
    ])),
    section("Development board", developmentBoard(view, ctx)),
    view.pending && view.pending.length ? section("Waiting for", el("ul", {}, view.pending.map((p) =>
      el("li", { text: `${seatName(ctx, p.seat)}: ${words(p.kind)}${p.optional ? " (may decline)" : ""}` })))) : null,
    section("Players", view.seats.map((player, seat) => seatArea(player, seat, ctx))),
  );
}

function turnText(turn, ctx) {
  const parts = [seatName(ctx, turn.seat)];
  if (turn.position) parts.push(`placed at ${turn.position}${turn.artisan ? " (an Artisan)" : ""}`);
  if (turn.moves_left !== undefined) parts.push(`${turn.moves_left} Production moves left`);
  if (turn.managers_played) parts.push(`${turn.managers_played} Manager cards played`);
  return parts.join(", ");
}

function workshopBoard(letter, workshop) {
  const size = 56;
  const cells = workshop.spaces.map((space, index) => {
    const [col, row] = RING[index];
    const here = index === workshop.token;
    return svg("g", { class: here ? "space-here" : null },
      svg("rect", { x: col * size + 2, y: row * size + 2, width: size - 4, height: size - 4, rx: 6,
        fill: CERAMICS[space] || "#f3ead6", stroke: here ? "#1d1b16" : "#8c8577", "stroke-width": here ? 4 : 1 }),
      svg("text", { x: col * size + size / 2, y: row * size + size / 2 + 4, "text-anchor": "middle", class: "ring-label" },
        shortSpace(space)),
      here ? svg("circle", { cx: col * size + size - 12, cy: row * size + 12, r: 6, fill: "#1d1b16" }) : null);
  });
  const label = `${workshop.name} (${letter}): Production token on ${words(workshop.spaces[workshop.token])}; spaces clockwise: ${workshop.spaces.map(words).join(", ")}`;
  return el("figure", { class: ["workshop", workshop.main ? "main" : null], data: { workshop: letter } },
    svg("svg", { viewBox: `0 0 ${3 * size} ${3 * size}`, width: 3 * size, height: 3 * size, label },
      cells,
      svg("text", { x: 1.5 * size, y: 1.5 * size + 6, "text-anchor": "middle", class: "ring-letter" }, letter)),
    el("figcaption", {}, el("strong", { text: workshop.name }), el("br"),
      el("span", { class: "small", text: `Production token: ${words(workshop.spaces[workshop.token])}` })));
}

function shortSpace(space) {
  const short = { development: "Develop", breakthrough: "Breakthr.", transfer: "Transfer", manager: "Manager" };
  return short[space] || words(space);
}

function positions(view, ctx) {
  const open = Object.entries(view.positions).filter(([, p]) => !p.closed);
  const closed = Object.keys(view.positions).filter((id) => view.positions[id].closed);
  return el("div", {},
    el("div", { class: "board" }, open.map(([id, place]) => el("div",
      { class: ["space", place.workers.length ? "taken" : null], data: { position: id } },
      el("div", { class: "card-name", text: id }),
      el("div", { class: "small muted", text: `IP ${Object.entries(place.influence).map(([w, n]) => `${w}+${n}`).join(" ")}` }),
      place.workers.map((w) => el("div", { class: ["worker", seatColor(w.seat)] },
        el("span", { class: ["seat-dot", seatColor(w.seat)], aria: { hidden: "true" } }),
        el("span", { class: "worker-name", text: ` ${seatName(ctx, w.seat)}${w.artisan ? " (Artisan)" : ""}` })))))),
    closed.length ? el("p", { class: "small muted", text: `Closed in this game: ${closed.join(", ")}` }) : null);
}

function constructionTile(tile, ctx) {
  const spaces = el("ol", { class: "tile-spaces" }, tile.spaces.map((space, index) => {
    const worker = tile.workers.find((w) => w.space === index);
    return el("li", { class: ["space", worker ? "taken" : null] },
      chip(words(space.colour), null, { kind: space.colour }),
      space.effect ? ` ${words(space.effect)}` : "",
      worker ? el("span", { class: seatColor(worker.seat), text: ` ● ${seatName(ctx, worker.seat)}` }) : null);
  }));
  return card({ name: tile.name, kind: "construction_tile", points: tile.ap, extra: spaces });
}

function developmentBoard(view, ctx) {
  const marks = (key) => view.seats.map((player, seat) => ({ seat, value: player[key] }));
  return el("div", {},
    track({ label: "Technology track", min: 0, max: TECHNOLOGY_TOP, marks: marks("technology"), seats: ctx.players }),
    track({ label: "Reputation track", min: 0, max: REPUTATION_TOP, marks: marks("reputation"), seats: ctx.players }),
    track({ label: "Research AP track", min: 0, marks: marks("ap_track"), seats: ctx.players }));
}

function seatArea(player, seat, ctx) {
  // Its own cards to a seat, face down to the others; an empty hand is "none" to everyone.
  const none = el("div", { class: "row" }, el("span", { class: "muted", text: "none" }));
  const hand = player.hand
    ? (player.hand.length
      ? el("div", { class: "row" }, player.hand.map((name) => card({ name: words(name), kind: "manager_card" })))
      : none)
    : (player.hand_size ? faceDown(player.hand_size, "Manager cards in hand") : none);
  return seatPanel(ctx, seat,
    kv([
      ["Workers on the player board", player.board_workers],
      ["Artisans on the player board", player.board_artisans],
      ["Recruitment", player.recruitment],
      ["Resting", player.rest],
      ["Technology", player.technology],
      ["Reputation", player.reputation],
      ["Upgrade tokens kept", player.upgrades_kept],
      ["Completed Construction tiles", player.tiles.length ? player.tiles.join(", ") : "none"],
    ]),
    el("div", {}, el("strong", { text: "Research department: " }),
      el("span", { class: "row" }, Object.entries(player.research).map(([id, slot]) => el("span",
        { class: ["badge", slot.unlocked ? "unlocked" : null], text: `${id} ${slot.unlocked ? "unlocked" : "locked"}${slot.workers.length ? ` (${slot.workers.length} workers)` : ""}` })))),
    el("div", {}, el("strong", { text: "Manager cards in hand" }), hand),
    player.hand_public && player.hand_public.length
      ? el("div", { class: "small", text: `Shown to the table: ${player.hand_public.map(words).join(", ")}` }) : null,
  );
}

function finalScores(final, ctx) {
  const bySeat = new Map(final.scores.map((s) => [s.seat, s]));
  return scoreTable(ctx, final.ranking.flat().map((seat) => ({ seat, total: bySeat.get(seat).total, parts: bySeat.get(seat).breakdown })));
}
