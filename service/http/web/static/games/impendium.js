// Impendium's table (rules/impendium.txt): the map of star cards around the central
// federation, with colonies, Arks of Salvation, harbingers of the void and galaxies; the
// victory point / subverting faction mat with its federation projects; and each player's
// mat. It draws what the view says and names each card from the game's component tables
// (ctx.components, GET /rulesets/impendium/components); it decides nothing the rules decide.
import { el, svg, put, section, seatPanel, kv, scoreTable, track, words, seatName, seatColor } from "./common.js";

/** The shell links games/impendium.css. */
export const stylesheet = true;
/** The shell passes GET /rulesets/impendium/components as ctx.components. */
export const components = true;

const RESOURCES = ["life_forms", "water", "artifacts", "hydrogen"];
const SHORT = { life_forms: "L", water: "W", artifacts: "A", hydrogen: "H" };
const UNIT = 92; // pixels between two lattice steps; a card spans nearly two
const CARD = 150;

export function render(root, view, ctx) {
  const game = view.state;
  const tables = indexTables(ctx.components);
  root.classList.add("table-impendium", "im");
  put(
    root,
    header(game, ctx),
    ctx.result ? finalScores(ctx.result, ctx) : null,
    el("div", { class: "im-top" }, mapPart(game, tables, ctx), matPart(game, tables, ctx)),
    el("div", { class: "im-seats" }, game.seats.map((mine, seat) => playerMat(game, mine, seat, tables, ctx))),
  );
}

function indexTables(components) {
  const c = (components && components.components) || components || {};
  const byId = (table) => {
    const found = {};
    for (const item of (c[table] && c[table][table]) || []) found[item.id] = item;
    return found;
  };
  return {
    stars: byId("stars"),
    harbingers: byId("harbingers"),
    factions: byId("factions"),
    rulers: byId("rulers"),
    diplomacy: byId("diplomacy"),
  };
}

// -- words --------------------------------------------------------------------------

function resourceWords(resource) {
  return words(resource).toLowerCase();
}

function amounts(counts) {
  const parts = Object.entries(counts || {}).filter(([, n]) => n).map(([r, n]) => `${n} ${resourceWords(r)}`);
  return parts.length ? parts.join(", ") : "nothing";
}

function shortAmounts(counts) {
  return Object.entries(counts || {}).filter(([, n]) => n).map(([r, n]) => `${n}${SHORT[r] || r}`).join(" ");
}

function slotText(slot) {
  return slot.cost ? amounts(slot.cost) : `${slot.any} of one resource of your choice`;
}

function slotShort(slot) {
  return slot.cost ? shortAmounts(slot.cost) : `${slot.any}`;
}

function factionText(faction) {
  const a = faction.ability || {};
  const r = resourceWords(a.resource);
  switch (a.kind) {
    case "gain": return `+${a.amount} ${r}: gain ${a.amount} ${r}`;
    case "substitute": return `SUB ${a.amount} (${r}): substitute up to ${a.amount} ${r} for ${a.amount} of any other resource`;
    case "project_discount": return `-${a.amount} ${r}, cost for a federation project slot that demands ${r}`;
    case "colony_discount": return `-${a.amount} ${r}, cost for a colony slot that demands ${r}`;
    default: return words(a.kind);
  }
}

function harbingerText(harbinger) {
  const a = harbinger.activation || {};
  switch (a.kind) {
    case "destroy_star": return "Activation: destroys the adjacent star with the fewest colonies (it becomes space dust)";
    case "drain": return `Activation: every player loses ${a.amount} ${resourceWords(a.resource)}`;
    case "ark_drain": return `Activation: every Ark on a card next to it, or on a space touching it, loses ${a.amount} ${resourceWords(a.resource)}`;
    default: return words(a.kind);
  }
}

function rulerText(ruler) {
  const gain = Object.keys(ruler.resources || {}).length ? ` and ${amounts(ruler.resources)}` : "";
  return `Each round: ${ruler.vp} VP${gain}`;
}

const PHASES = {
  setup_stars: "Setup: placing the starting stars",
  setup_colonies: "Setup: placing colonies",
  setup_arks: "Setup: placing the Arks of Salvation",
  generate: "1. Generate resources and score victory points",
  federation_resource: "1. The federation's free resource",
  harbingers: "2. Activate harbingers of the void",
  turmoil: "Turmoil: the markers move",
  actions: "3. Action turns",
  round_end: "4. Pass the starting player marker, reset factions",
  final_scoring: "Final scoring",
  finished: "Game over",
};

// -- header -------------------------------------------------------------------------

function header(game, ctx) {
  const status = ctx.status || {};
  const waiting = (status.to_act || []).map((seat) => seatName(ctx, seat)).join(", ");
  const outcome = game.outcome;
  return el(
    "div",
    { class: "im-header", data: { part: "round" } },
    kv([
      ["Round", game.round],
      ["Phase", PHASES[game.phase] || words(game.phase)],
      ["Starting player", seatName(ctx, game.start_player)],
      ["Turn", game.turn ? `${seatName(ctx, game.turn.seat)} (done: ${game.turn.used.length ? game.turn.used.map(words).join(", ") : "nothing yet"})` : undefined],
      ["Waiting for", waiting || (status.awaiting_system ? `automatic step: ${words(status.awaiting_system)}` : "nobody")],
      ["A galaxy is", `${game.galaxy_size} connected stars of one colour`],
      ["Game end", game.end_trigger ? `${words(game.end_trigger.reason)}${game.end_trigger.seat !== null && game.end_trigger.seat !== undefined ? ` (${seatName(ctx, game.end_trigger.seat)})` : ""}; one more turn each` : undefined],
      ["Result", outcome ? `${outcome.won ? `Won by ${(outcome.winners || []).map((s) => seatName(ctx, s)).join(", ")}` : "Nobody won"} (${words(outcome.reason)})` : undefined],
    ]),
  );
}

/** The final scores as the game's result ranks them (ctx.result: only on the final state),
 * with the tie-breakers' figures (Game End: most colonies on the map, then most resources). */
function finalScores(result, ctx) {
  const bySeat = new Map(result.scores.map((s) => [s.seat, s]));
  const rows = result.ranking.flat().map((seat) => ({ seat, total: bySeat.get(seat).total, parts: bySeat.get(seat).breakdown }));
  const ties = result.ranking.flat().map((seat) => {
    const s = bySeat.get(seat);
    return `${seatName(ctx, seat)}: ${s.colonies_on_map} colonies on the map, ${s.resources_left} resources left`;
  });
  return section("Final scores", scoreTable(ctx, rows),
    el("p", { class: "im-small", text: `Ties broken by ${(result.tie_breakers || []).join(", then ")}. ${ties.join("; ")}.` }));
}

// -- the map ------------------------------------------------------------------------

function coords(name) {
  const [x, y] = name.split(",").map(Number);
  return { x, y };
}

function slotsRow(slots, discs, x, y, ctx, width) {
  const gap = width / Math.max(1, slots.length);
  return slots.map((slot, i) => {
    const owner = discs ? discs[i] : null;
    const cx = x + gap * i + gap / 2;
    const taken = owner !== null && owner !== undefined;
    const shape = taken
      ? svg("circle", { cx, cy: y, r: 10, class: ["im-disc", seatColor(owner)] })
      : svg("rect", { x: cx - gap / 2 + 1.5, y: y - 10, width: gap - 3, height: 20, rx: 6, class: "im-slot-free" });
    return svg("g", { class: ["im-slot", slot.cost ? "im-slot-cost" : "im-slot-any"] },
      shape,
      svg("text", { x: cx, y: y + 4, "text-anchor": "middle", class: taken ? "im-disc-text" : ["im-slot-text", slotShort(slot).length > 5 ? "im-slot-long" : null] }, taken ? seatName(ctx, owner).slice(0, 1) : slotShort(slot)),
      svg("title", {}, `${slotText(slot)}${taken ? `: ${seatName(ctx, owner)}'s colony` : ": free"}`));
  });
}

function starCard(entry, position, tables, ctx, galaxy) {
  const star = tables.stars[entry.card] || { name: entry.card, colour: "grey", production: {}, slots: [] };
  const { x, y } = coords(position);
  const left = x * UNIT - CARD / 2;
  const top = y * UNIT - CARD / 2;
  return svg("g", { class: ["im-card", "im-star", `im-colour-${star.colour}`, galaxy ? "im-in-galaxy" : null], data: { cell: position, position } },
    svg("rect", { x: left, y: top, width: CARD, height: CARD, rx: 10, class: "im-card-face" }),
    svg("circle", { cx: left + 22, cy: top + 22, r: 13, class: "im-star-dot" }),
    svg("text", { x: left + 42, y: top + 22, class: "im-card-name" }, star.name),
    svg("text", { x: left + 42, y: top + 36, class: "im-card-sub" }, `${words(star.colour)} star`),
    svg("text", { x: left + 8, y: top + 60, class: "im-card-line" }, `Produces: ${shortAmounts(star.production)}`),
    svg("title", {}, `${star.name}, a ${star.colour} star: produces ${amounts(star.production)} per colony; colony slots: ${star.slots.map(slotText).join("; ")}${galaxy ? `; part of galaxy ${galaxy.id}` : ""}`),
    slotsRow(star.slots, entry.colonies, left + 4, top + CARD - 24, ctx, CARD - 8),
    galaxy ? svg("text", { x: left + CARD - 8, y: top + CARD - 44, "text-anchor": "end", class: "im-card-sub" }, `Galaxy ${galaxy.id}`) : null);
}

function mapPart(game, tables, ctx) {
  const positions = Object.keys(game.board);
  const cells = [...positions, ...game.arks.filter(Boolean)];
  if (game.turmoil) for (const spot of Object.values(game.turmoil.markers || {})) if (spot) cells.push(spot);
  const xs = cells.map((c) => coords(c).x);
  const ys = cells.map((c) => coords(c).y);
  const minX = Math.min(...xs) * UNIT - CARD / 2 - 20;
  const minY = Math.min(...ys) * UNIT - CARD / 2 - 20;
  const width = (Math.max(...xs) - Math.min(...xs)) * UNIT + CARD + 40;
  const height = (Math.max(...ys) - Math.min(...ys)) * UNIT + CARD + 40;
  const galaxyOf = {};
  for (const galaxy of game.galaxies) for (const star of galaxy.stars) galaxyOf[star] = galaxy;
  const drawn = [];
  for (const [position, entry] of Object.entries(game.board)) {
    const { x, y } = coords(position);
    const left = x * UNIT - CARD / 2;
    const top = y * UNIT - CARD / 2;
    if (entry.kind === "star") drawn.push(starCard(entry, position, tables, ctx, galaxyOf[position]));
    else if (entry.kind === "federation") {
      drawn.push(svg("g", { class: ["im-card", "im-federation"], data: { cell: position } },
        svg("rect", { x: left, y: top, width: CARD, height: CARD, rx: 10, class: "im-card-face" }),
        svg("text", { x: x * UNIT, y: top + 30, "text-anchor": "middle", class: "im-card-name" }, "Central Federation"),
        svg("text", { x: x * UNIT, y: top + 50, "text-anchor": "middle", class: "im-card-sub" }, "1 free resource"),
        svg("text", { x: x * UNIT, y: top + 64, "text-anchor": "middle", class: "im-card-sub" }, "each round"),
        game.federation_taken.map((taken, seat) =>
          svg("circle", { cx: left + 20 + seat * 22, cy: top + CARD - 22, r: 8, class: taken ? ["im-disc", seatColor(seat)] : "im-slot-free" },
            svg("title", {}, `${seatName(ctx, seat)} ${taken ? "took" : "has not taken"} this round's free resource`)))));
    } else if (entry.kind === "dust") {
      const star = tables.stars[entry.card];
      drawn.push(svg("g", { class: ["im-card", "im-dust"], data: { cell: position } },
        svg("rect", { x: left, y: top, width: CARD, height: CARD, rx: 10, class: "im-card-face" }),
        svg("text", { x: x * UNIT, y: top + 60, "text-anchor": "middle", class: "im-card-name" }, "Space dust"),
        svg("text", { x: x * UNIT, y: top + 78, "text-anchor": "middle", class: "im-card-sub" }, star ? `once ${star.name}` : "a destroyed star"),
        svg("title", {}, `Space dust${star ? ` (once ${star.name})` : ""}: 1 hydrogen to move off`)));
    } else if (entry.kind === "harbinger") {
      const harbinger = tables.harbingers[entry.card] || { name: entry.card, slots: [], vp: "?" };
      drawn.push(svg("g", { class: ["im-card", "im-harbinger"], data: { cell: position } },
        svg("rect", { x: left, y: top, width: CARD, height: CARD, rx: 10, class: "im-card-face" }),
        svg("text", { x: left + 8, y: top + 20, class: "im-card-name" }, harbinger.name),
        svg("text", { x: left + 8, y: top + 36, class: "im-card-sub" }, "Harbinger of the Void"),
        svg("text", { x: left + 8, y: top + 52, class: "im-card-sub" }, `${harbinger.vp} VP to the majority`),
        svg("title", {}, `${harbinger.name}: ${harbingerText(harbinger)}; slots ${(harbinger.slots || []).map(slotText).join("; ")}; ${harbinger.vp} VP to the majority`),
        slotsRow(harbinger.slots || [], entry.discs, left + 4, top + CARD - 24, ctx, CARD - 8)));
    }
  }
  const arksAt = {};
  game.arks.forEach((cell, seat) => cell && (arksAt[cell] ||= []).push(seat));
  for (const [cell, seats] of Object.entries(arksAt)) {
    const { x, y } = coords(cell);
    const onCard = x % 2 === 0 && y % 2 === 0;
    seats.forEach((seat, i) => {
      const cx = x * UNIT + (onCard ? -CARD / 2 + 24 + i * 26 : (i - (seats.length - 1) / 2) * 24);
      const cy = y * UNIT + (onCard ? 8 : 0);
      drawn.push(svg("g", { class: ["im-ark", `im-ark-${game.seats[seat].ark_colour}`], data: { ark: seat } },
        svg("path", { d: `M ${cx} ${cy - 12} L ${cx + 10} ${cy + 9} L ${cx} ${cy + 4} L ${cx - 10} ${cy + 9} Z`, class: "im-ark-shape" }),
        svg("text", { x: cx, y: cy + 22, "text-anchor": "middle", class: "im-ark-name" }, seatName(ctx, seat).slice(0, 1)),
        svg("title", {}, `${seatName(ctx, seat)}'s Ark of Salvation (${game.seats[seat].ark_colour})`)));
    });
  }
  if (game.turmoil) {
    for (const [marker, spot] of Object.entries(game.turmoil.markers || {})) {
      if (!spot) continue;
      const { x, y } = coords(spot);
      drawn.push(svg("text", { x: x * UNIT + CARD / 2 - 6, y: y * UNIT + 4, "text-anchor": "end", class: "im-turmoil" }, words(marker)));
    }
  }
  const arks = game.arks.map((cell, seat) => `${seatName(ctx, seat)}'s Ark ${cell ? `at ${describeCell(game, cell, tables)}` : "not placed"}`).join("; ");
  const legend = el("p", { class: "im-legend" }, "Slots and production: L life forms, W water, A artifacts, H hydrogen; a number alone is that many of one resource of your choice. A filled disc is a colony.");
  const galaxies = game.galaxies.length
    ? el("ul", { class: "im-list" }, game.galaxies.map((g) => {
        const ruler = g.card ? tables.rulers[g.card] : null;
        return el("li", { text: `Galaxy ${g.id}: ${g.stars.length} ${g.colour} stars; ruler ${g.ruler !== null && g.ruler !== undefined ? seatName(ctx, g.ruler) : "none"}${ruler ? ` (Ruler of the Galaxy ${g.card}: ${rulerText(ruler)})` : ""}` });
      }))
    : el("p", { class: "muted", text: "No galaxy yet." });
  return section(
    "Map",
    svg("svg", { viewBox: `${minX} ${minY} ${width} ${height}`, width: Math.round(width * 0.7), class: "im-map", label: `The map: ${positions.length} cards. ${arks}` }, drawn),
    legend,
    el("p", { text: arks }),
    el("h4", { text: "Galaxies" }),
    galaxies,
    game.turmoil ? turmoilPart(game, ctx, tables) : null,
  );
}

function describeCell(game, cell, tables) {
  const entry = game.board[cell];
  if (!entry) return "a space between cards";
  if (entry.kind === "federation") return "the Central Federation";
  if (entry.kind === "star") return (tables.stars[entry.card] || { name: entry.card }).name;
  if (entry.kind === "dust") return "space dust";
  return words(entry.kind);
}

function turmoilPart(game, ctx, tables) {
  const t = game.turmoil;
  return el("div", {},
    el("h4", { text: "Turmoil" }),
    el("ul", { class: "im-list" }, Object.entries(t.markers || {}).map(([marker, spot]) =>
      el("li", { text: `${words(marker)}: ${spot ? describeCell(game, spot, tables) : "not on the map"}` }))));
}

// -- the victory point / subverting faction mat, projects, decks ----------------------

function matPart(game, tables, ctx) {
  const factions = el("div", { class: "im-row" }, RESOURCES.map((resource) => {
    const id = game.subverting[resource];
    const faction = id ? tables.factions[id] : null;
    return el("div", { class: "im-faction-spot" },
      el("div", { class: "im-resource-head", text: words(resource) }),
      faction ? factionCard(id, tables, false) : el("div", { class: "im-empty", text: id || "empty" }));
  }));
  const projects = el("div", { class: "im-row" }, game.projects.map((project) => {
    const star = tables.stars[project.card] || { name: project.card, slots: [], production: {}, colour: "grey" };
    const box = svg("svg", { viewBox: "0 0 170 40", class: "im-project-slots", label: `${star.name} slots` },
      slotsRow(star.slots, project.discs, 2, 20, ctx, 166));
    return el("div", { class: ["im-project", `im-colour-${star.colour}`] },
      el("div", { class: "im-project-name", text: `${star.name} (${star.colour} star)` }),
      el("div", { class: "im-small", text: `Produces ${amounts(star.production)}` }),
      box,
      el("div", { class: "im-small", text: star.slots.map((slot, i) => `${i + 1}: ${slotText(slot)}${project.discs[i] !== null && project.discs[i] !== undefined ? ` (${seatName(ctx, project.discs[i])})` : ""}`).join(" · ") }));
  }));
  const d = game.decks;
  const decks = el("p", { class: "im-small", text: `Decks: stars ${d.stars.draw_pile}, harbingers of the void ${d.harbingers.draw_pile}, factions ${d.factions.draw_pile}, rulers of the galaxy ${d.rulers.draw_pile}, galactic diplomacy ${d.diplomacy.draw_pile} (${d.diplomacy.discard_pile} discarded)` });
  const vpTrack = track({
    label: "Victory points",
    min: 0,
    max: Math.max(25, ...game.seats.map((s) => s.vp)),
    marks: game.seats.map((s, seat) => ({ seat, value: s.vp })),
    seats: ctx.players,
  });
  return section(
    "Victory point and subverting faction mat",
    vpTrack,
    el("h4", { text: "Subverting factions (recruit: 14 of the resource above, less your colonies producing it)" }),
    factions,
    el("h4", { text: "Federation projects" }),
    projects,
    game.setup_star ? el("p", { text: `Starting star being placed: ${(tables.stars[game.setup_star] || { name: game.setup_star }).name}` }) : null,
    pendingPart(game, ctx, tables),
    game.last_attack ? attackPart(game.last_attack, ctx) : null,
    decks,
  );
}

function pendingPart(game, ctx, tables) {
  if (!game.pending.length) return null;
  return el("div", {},
    el("h4", { text: "Waiting on" }),
    el("ul", { class: "im-list" }, game.pending.map((p) => {
      let text = `${seatName(ctx, p.seat)}: ${words(p.kind)}`;
      if (p.kind === "keep_diplomacy") text += p.cards ? ` from ${p.cards.map((c) => (tables.diplomacy[c] || { text: c }).text).join(" / ")}` : ` (${p.card_count} cards, face down)`;
      if (p.kind === "trade") text += p.give ? ` from ${seatName(ctx, p.from)}: gives ${amounts(p.give)} for ${amounts(p.get)}` : ` from ${seatName(ctx, p.from)} (terms hidden)`;
      if (p.kind === "spoils") text += ` from ${seatName(ctx, p.from)}: ${p.amount} resources`;
      if (p.kind === "place_star" && p.card) text += ` ${(tables.stars[p.card] || { name: p.card }).name}`;
      if (p.kind === "place_harbinger" && p.card) text += ` ${(tables.harbingers[p.card] || { name: p.card }).name}`;
      return el("li", { text });
    })));
}

function attackPart(attack, ctx) {
  const winner = attack.winner !== null && attack.winner !== undefined ? seatName(ctx, attack.winner) : "nobody (a tie)";
  return el("p", { class: "im-small", text: `Last attack: ${seatName(ctx, attack.attacker)} on ${seatName(ctx, attack.defender)}, dice ${attack.dice.join(" vs ")}, totals ${attack.totals.join(" vs ")}; ${winner} won${attack.spoils ? `, ${attack.spoils} resources of spoils` : ""}` });
}

function factionCard(id, tables, used) {
  const faction = tables.factions[id];
  return el("div", { class: ["im-faction", used ? "im-used" : null] },
    el("div", { class: "im-faction-name", text: faction ? faction.name : id }),
    el("div", { class: "im-small", text: faction ? factionText(faction) : "" }),
    used ? el("div", { class: "im-small", text: "used this round (turned)" }) : null);
}

// -- a player's mat -----------------------------------------------------------------

function playerMat(game, mine, seat, tables, ctx) {
  const rulers = game.galaxies.filter((g) => g.ruler === seat && g.card);
  const hand = mine.hand
    ? el("div", { class: "im-row" }, mine.hand.length
        ? mine.hand.map((id) => el("div", { class: "im-diplomacy" }, el("div", { class: "im-faction-name", text: `Galactic Diplomacy ${id}` }), el("div", { class: "im-small", text: (tables.diplomacy[id] || { text: id }).text })))
        : el("span", { class: "muted", text: "no cards" }))
    : el("p", { class: "im-facedown", text: `${mine.hand_size} galactic diplomacy card${mine.hand_size === 1 ? "" : "s"} (face down)` });
  const resources = el("ul", { class: "im-resources" }, RESOURCES.map((r) =>
    el("li", { class: `im-res-${r}` }, el("span", { class: "im-res-name", text: words(r) }), el("span", { class: "im-res-count", text: String(mine.resources[r]) }))));
  return seatPanel(
    ctx,
    seat,
    el("p", { class: "im-score", data: { score: mine.vp } }, `Victory points: ${mine.vp}`),
    el("p", { class: "im-small", text: `From ${Object.entries(mine.vp_sources).map(([k, v]) => `${words(k).toLowerCase()} ${v}`).join(", ")}` }),
    resources,
    kv([
      ["Ark of Salvation", `${words(mine.ark_colour)}, ${game.arks[seat] ? `at ${describeCell(game, game.arks[seat], tables)}` : "not placed"}`],
      ["Colonies on the map", `${mine.colonies_on_map} of ${mine.colony_cap}`],
      ["Colony discs on the mat", mine.free_discs],
      ["Recruit cost", RESOURCES.map((r) => `${mine.recruit_costs[r]} ${resourceWords(r)}`).join(", ")],
    ]),
    el("h4", { text: "Factions" }),
    el("div", { class: "im-row" }, mine.factions.map((id) => factionCard(id, tables, mine.turned.includes(id)))),
    rulers.length ? el("h4", { text: "Ruler of the Galaxy" }) : null,
    rulers.map((g) => el("p", { class: "im-small", text: `${g.card} (galaxy ${g.id}): ${tables.rulers[g.card] ? rulerText(tables.rulers[g.card]) : ""}` })),
    el("h4", { text: "Galactic diplomacy" }),
    hand,
  );
}
