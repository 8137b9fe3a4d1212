// Gutenberg's table (renderer contract: README.md here). Words from the rulebook: order
// cards (a printing card and a refinement card), ink sets, specialty cards, gears and
// printing houses, patronage tiles, type tiles, guilders, fame points, the reward track.
// Everything shown comes from the view and its `catalogue`; nothing is computed here.

import { put, card, chip, chips, el, faceDown, kv, scoreTable, seatName, seatPanel, section, track, words } from "./common.js";

const ROWS = ["Take orders", "Take inks", "Develop specialties", "Improve printing houses", "Patronage"];
const INK_COST = [0, 1, 2]; // by position in a set, as the board prints it
const ROUNDS = 6;

export function render(root, answer, ctx) {
  const view = answer.state;
  const cat = view.catalogue || {};
  put(
    root,
    kv([
      ["Round", `${view.round} of ${ROUNDS}`],
      ["Phase", words(view.phase)],
      ["First player", seatName(ctx, view.first_player)],
      ["Board side", view.side],
    ]),
    view.result ? section("Final scores", finalScores(view.result, ctx)) : null,
    section("Plans", plans(view, ctx)),
    section("Orders on offer", el("div", { class: "grid" },
      (view.board.printing || []).map((id) => printingCard(id, cat)),
      (view.board.refinement || []).map((id) => refinementCard(id, cat)))),
    section("Ink sets", el("div", { class: "board" }, (view.board.inks || []).map((set, index) => inkSet(set, index)))),
    section("Specialty cards", el("div", { class: "grid" }, (view.board.specialty || []).map((id) => specialtyCard(id, cat)))),
    section("Gears on offer", el("div", { class: "grid" }, (view.board.gears || []).map((id) => gearCard(id, cat)))),
    section("Patronage", patronage(view, cat, ctx)),
    section("Supply", el("div", { class: "row" },
      Object.entries(view.decks || {}).map(([name, deck]) => faceDown(deck.draw_pile, `${words(name)} deck`)),
      faceDown(view.patronage_box, "Patronage tiles in the box"),
      el("div", {}, el("div", { class: "small", text: "Ink bag" }), chips(view.bag, { kind: null, zeros: true })))),
    section("Reward track", rewardTrack(view, ctx)),
    view.pending && view.pending.length ? section("Choices open", el("ul", {}, view.pending.map((p) =>
      el("li", { text: `${seatName(ctx, p.seat)}: ${words(p.kind)}` })))) : null,
    section("Players", view.seats.map((player, seat) => seatArea(player, seat, view, cat, ctx))),
  );
}

function plans(view, ctx) {
  const rows = el("tbody");
  ROWS.forEach((row, index) => rows.appendChild(el("tr", {}, el("th", { scope: "row", text: row }),
    view.seats.map((player) => el("td", { text: player.plan ? String(player.plan[index]) : player.plan_submitted ? "hidden" : "–" })))));
  return el("table", { class: "score-table" },
    el("caption", { text: "Markers per action row" }),
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Row" }),
      view.seats.map((_, seat) => el("th", { scope: "col", text: seatName(ctx, seat) })))),
    rows);
}

function typesText(types) {
  return Object.entries(types || {}).map(([letter, n]) => `${n}× ${letter}`).join(", ");
}

function printingCard(id, cat) {
  if (!id) return el("div", { class: "card muted", text: "taken" });
  const c = (cat.printing || {})[id] || {};
  return card({ name: `Printing ${id}`, kind: "printing_card", effect: `Types: ${typesText(c.types)}`, extra: el("div", {}, chip("Guilders", c.guilders, { kind: "guilders" })) });
}

function refinementCard(id, cat) {
  if (!id) return el("div", { class: "card muted", text: "taken" });
  const c = (cat.refinement || {})[id] || {};
  const bonus = c.bonus ? `${words(c.bonus.kind)}${c.bonus.amount ? ` ${c.bonus.amount}` : ""}` : "none";
  return card({
    name: `Refinement ${id}`,
    kind: "refinement_card",
    effect: `Colours: ${Object.entries(c.colours || {}).map(([ink, n]) => `${n} ${ink}`).join(", ")} → ${c.colour_fame} fame; `
      + `decoration: ${Object.entries(c.decorations || {}).map(([s, n]) => `${words(s)} ${n}`).join(", ")} → ${c.decoration_fame} fame; both: ${bonus}`,
  });
}

function inkSet(set, index) {
  return el("div", { class: "space", data: { set: index } }, el("div", { class: "card-name", text: `Ink set ${index + 1}` }),
    el("div", { class: "chips" }, set.map((ink, position) => (ink
      ? chip(words(ink), null, { kind: ink, title: `costs ${INK_COST[position]} guilders` })
      : el("span", { class: "chip muted", text: "taken" })))),
    el("div", { class: "small muted", text: "Costs 0, 1, 2 guilders from left to right" }));
}

function specialtyCard(id, cat) {
  if (!id) return el("div", { class: "card muted", text: "taken" });
  const c = (cat.specialty || {})[id] || {};
  return card({ name: `Specialty ${id}`, kind: "specialty_card", effect: (c.symbols || []).map(words).join(" + ") });
}

function sectorText(sector) {
  if (!sector) return "";
  const detail = sector.ink || sector.specialty || sector.type || "";
  return `${words(sector.symbol)}${detail ? ` (${words(detail)})` : ""}`;
}

function gearCard(id, cat, extra) {
  if (!id) return el("div", { class: "card muted", text: "taken" });
  const c = (cat.gears || {})[id] || {};
  return card({ name: `Gear ${id}`, kind: "gear", effect: (c.sectors || []).map(sectorText).join(" · "), extra });
}

function patronage(view, cat, ctx) {
  const rewards = view.board.patronage_rewards || {};
  return el("div", {},
    el("div", { class: "grid" }, (view.board.patronage || []).map((space) => {
      const c = (cat.patronage || {})[space.card] || {};
      return card({
        name: `Patronage ${space.card}`,
        kind: "patronage_tile",
        effect: `From round ${space.unlock}. Needs ${Object.entries(c.specialties || {}).map(([s, n]) => `${words(s)} ${n}`).join(", ")}; types ${typesText(c.types)}; pays ${Object.entries(c.inks || {}).map(([i, n]) => `${n} ${i}`).join(", ")}`,
      });
    })),
    el("p", { class: "small" }, "Rewards this round: ", Object.entries(rewards).map(([kind, seat]) =>
      el("span", { class: "badge", text: `${words(kind)}: ${seat === null ? "open" : `taken by ${seatName(ctx, seat)}`}` }))));
}

function rewardTrack(view, ctx) {
  const levels = Object.entries(view.reward_track || {});
  return el("div", {},
    el("ul", { class: "row plain" }, levels.map(([level, reward]) => el("li", { class: "space", text: `${level}: ${words(reward.kind)}${reward.amount ? ` ${reward.amount}` : ""}` }))),
    track({ label: "Reward level", min: 0, max: levels.length, seats: ctx.players,
      marks: view.seats.map((player, seat) => ({ seat, value: player.reward_level })) }));
}

function seatArea(player, seat, view, cat, ctx) {
  const character = player.character ? ((cat.characters || {})[player.character] || {}).name || words(player.character) : null;
  const offer = Array.isArray(player.character_offer)
    ? player.character_offer.map((id) => ((cat.characters || {})[id] || {}).name || words(id)).join(" or ")
    : player.character_offer ? `${player.character_offer} tiles, face down` : null;
  return seatPanel(ctx, seat,
    kv([
      ["Guilders", player.guilders],
      ["Fame points", player.fame],
      ["Markers", player.markers],
      ["Character", character || (offer ? `choosing: ${offer}` : "none")],
      ["Next type costs", `${player.next_type_cost} guilder${player.next_type_cost === 1 ? "" : "s"}`],
      ["Wild ink", player.wild_ink ? words(player.wild_ink) : undefined],
    ]),
    el("div", {}, el("strong", { text: "Type tiles: " }), chips(player.types, { names: {}, kind: "type" })),
    el("div", {}, el("strong", { text: "Inks: " }), chips(player.inks)),
    el("div", {}, el("strong", { text: "Specialties" }),
      el("div", { class: "row" }, Object.entries(player.specialties || {}).map(([name, level]) => chip(words(name), level, { kind: "specialty" })))),
    el("div", {}, el("strong", { text: `Orders (${player.orders.length} of 4)` }),
      el("div", { class: "board" }, player.orders.map((order) => el("div", { class: "order" },
        printingCard(order.printing, cat), refinementCard(order.refinement, cat))))),
    el("div", {}, el("strong", { text: "Printing house (gears)" }),
      el("div", { class: "grid" }, player.gears.map((axle, index) => (axle
        ? gearCard(axle.gear, cat, el("div", { class: "small" }, `Active: ${sectorText(axle.active_sector)}`,
          player.gear_uses && player.gear_uses[index] ? " · used this round" : ""))
        : el("div", { class: "card muted", text: `Axle ${index + 1}: empty` }))))),
    player.patronage.length ? el("div", {}, el("strong", { text: "Patronage tiles: " }), player.patronage.join(", ")) : null,
  );
}

function finalScores(result, ctx) {
  const bySeat = new Map(result.scores.map((s) => [s.seat, s]));
  const rows = result.ranking.flat().map((seat) => ({ seat, total: bySeat.get(seat).total, parts: bySeat.get(seat).breakdown }));
  return scoreTable(ctx, rows);
}
