// Impression's table (rules/impression.txt): the city of shops, the travel board with its
// map and order track, the trading board, the orders and contracts, the typesetting table,
// and each player's workshop. It draws what the view says and names each tile from the
// game's component tables (ctx.components, GET /rulesets/impression/components); it decides
// nothing the rules decide.
import { el, svg, put, section, seatPanel, kv, scoreTable, words, seatName, seatColor } from "./common.js";

/** The shell links games/impression.css. */
export const stylesheet = true;
/** The shell passes GET /rulesets/impression/components as ctx.components. */
export const components = true;

const LEVELS = ["I", "II", "III", "IV"];
const GOODS = ["paper", "lead", "ink", "mark", "vp"];
const GOOD_WORDS = { paper: "paper", lead: "lead", ink: "ink", mark: "mark", vp: "victory point" };

export function render(root, view, ctx) {
  const game = view.state;
  const tables = indexTables(ctx.components);
  root.classList.add("table-impression", "ip");
  put(
    root,
    header(game, ctx),
    el(
      "div",
      { class: "ip-boards" },
      cityBoard(game, tables, ctx),
      travelBoard(game, tables, ctx),
      tradingBoard(game, tables),
      orderDisplay(game, tables),
      typesettingTable(game, tables),
    ),
    el("div", { class: "ip-seats" }, game.seats.map((mine) => workshop(game, mine, tables, ctx))),
    game.final_scores ? finalScores(game, ctx) : null,
  );
}

// -- the component tables, by id ------------------------------------------------------

function indexTables(components) {
  const c = (components && components.components) || components || {};
  const byId = (table, key) => {
    const found = {};
    for (const item of (c[table] && c[table][key]) || []) found[item.id] = item;
    return found;
  };
  return {
    known: Boolean(c.shops),
    shops: byId("shops", "shops"),
    technologies: byId("technologies", "technologies"),
    factories: byId("factories", "factories"),
    orders: byId("orders", "orders"),
    contracts: byId("contracts", "contracts"),
    letters: byId("lead_letters", "lead_letters"),
    trading: byId("trading_tiles", "trading_tiles"),
    discs: byId("city_discs", "city_discs"),
    map: c.map || null,
    board: c.player_board || null,
    techData: c.technologies || {},
    orderPrices: (c.orders && c.orders.prices) || [],
    contractPrices: (c.contracts && c.contracts.prices) || [],
  };
}

// -- words: the Iconography, the factories' triggers, the contracts' scoring ----------

function amounts(gain) {
  return Object.entries(gain || {})
    .filter(([, n]) => n)
    .map(([good, n]) => `${n} ${GOOD_WORDS[good] || words(good)}${n === 1 || good === "paper" || good === "lead" || good === "ink" ? "" : "s"}`)
    .join(", ");
}

function iconText(effect) {
  const count = effect.count || 1;
  switch (effect.icon) {
    case "gain": return `Gain ${amounts(effect.gain)}`;
    case "gain_choice": return `Gain ${count} resource${count === 1 ? "" : "s"} of your choice`;
    case "use_letter": return "Take the resources of one of your lead letters";
    case "capacity": return "+1 capacity";
    case "capacity_down": return "-1 capacity";
    case "workforce": return "+1 workforce";
    case "workforce_down": return "-1 workforce";
    case "capacity_gain": return "Gain 1 capacity and the reward it steps onto";
    case "trade": return effect.keep_tile ? "A free trade action (the tile stays)" : "Trade";
    case "typeset": return "Typesetting";
    case "travel": return effect.free ? "Travel without paying money" : "Travel";
    case "steps": return `${count} step${count === 1 ? "" : "s"} on the map or order track`;
    case "technology": {
      const waived = [effect.no_resources ? "resources" : null, effect.no_money ? "money" : null].filter(Boolean);
      return waived.length ? `Technology without paying ${waived.join(" or ")}` : "Technology";
    }
    case "free_technology": return `A level ${effect.level} technology for free`;
    case "factory": return "Build a factory (discard your next city marker)";
    case "assistant": return "Place an assistant";
    case "signboard_action": return "One signboard action of your choice";
    case "city_tile": return "A city tile of your choice (the director stays)";
    case "move_down": return `Move a tradesman down to room II${effect.times === 2 ? ", its reward twice" : ""}`;
    case "discard_letter": return "Discard a lead letter from the typesetting table for its resources";
    case "advance_order": return effect.free ? "Advance an order 1 stage, no resources" : "Advance an order 1 stage";
    case "buy": return effect.free ? "Buy an order or contract for no money" : "Buy an order or contract";
    case "gain_letter": return effect.with_resources ? "Gain a lead letter and its resources" : "Gain a lead letter";
    case "reposition_letter": return "Reposition one of your lead letters";
    case "pair": return "Pair city tiles with lead letters";
    default: return words(effect.icon);
  }
}

function effectsText(effects) {
  const list = (effects || []).map(iconText);
  return list.length ? list.join("; ") : "nothing";
}

const TRIGGERS = {
  reset: "whenever you choose the Reset action",
  letter_taken: "whenever you take a lead letter into your workshop",
  workforce_gained: "whenever you gain a workforce",
  travel: "whenever you perform a travel action",
  trade: "whenever you perform a trade action",
  technology: "whenever you perform a technology action",
  buy_order: "whenever you buy an order",
  buy_contract: "whenever you buy a contract",
  reset_discard: "whenever you discard a lead letter during Reset",
  city_disc_gained: "whenever you gain a city disc",
  typeset: "whenever you perform a Typesetting action",
};

function factoryText(factory) {
  const trigger = factory.trigger || {};
  let when = TRIGGERS[trigger.on] || words(trigger.on);
  if (trigger.on === "stage_completed") when = `whenever an order completes stage ${trigger.stage}`;
  if (trigger.on === "order_completed") when = `whenever you complete an order carrying a ${trigger.signboard} signboard`;
  if (trigger.discount) return `${trigger.discount} mark less ${when}`;
  return `${effectsText(factory.bonus)} ${when}`;
}

function scoringText(scoring) {
  const per = scoring.per && scoring.per > 1 ? `${scoring.per} ` : "";
  const plural = scoring.per && scoring.per > 1 ? "s" : "";
  const things = {
    per_marks: `${scoring.per} marks held`,
    technologies_of_level: `${per}technolog${plural ? "ies" : "y"} of level ${scoring.level}`,
    assistants: "assistant on the city board",
    signboards: `${scoring.colour} signboard`,
    city_tiles: `${per}city tile${plural}`,
    completed_orders: `${per}finished order${plural}`,
    workforce: `${per}workforce`,
    factories: "factory",
    active_contracts: "activated contract",
    unlocked_slots: "unlocked contract slot",
    letter: `letter ${scoring.letter} on your composing stick board`,
    full_columns: "column of lead letters on your composing stick board",
    full_diagonals: "diagonal line of lead letters on your composing stick board",
  };
  return `${scoring.points} VP per ${things[scoring.kind] || words(scoring.kind)}`;
}

function greenText(points) {
  const kinds = {
    half_capacity: "half your capacity (rounded down)",
    assistants: "your assistants on the city board",
    workforce: "your workforce",
    technologies_of_level: `your level ${points.level} technologies`,
    letter: `your ${points.letter} letters on your composing sticks`,
  };
  return `Victory points: ${kinds[points.kind] || words(points.kind)}`;
}

function techText(tile) {
  if (!tile) return "";
  return tile.colour === "green" ? greenText(tile.victory_points || {}) : effectsText(tile.action);
}

// -- tiles ------------------------------------------------------------------------------

function tile(kind, title, lines, extraClass) {
  return el(
    "div",
    { class: ["ip-tile", `ip-${kind}`, extraClass] },
    el("div", { class: "ip-tile-title", text: title }),
    lines.filter(Boolean).map((line) => el("div", { class: "ip-tile-line", text: line })),
  );
}

function techTile(id, tables, extraClass) {
  const tech = tables.technologies[id];
  if (!tech) return tile("tech", `Technology ${id}`, [], extraClass);
  const kind = tech.colour === "green" ? "Instant (green)" : "Chain (blue)";
  return tile(`tech-${tech.colour}`, `Technology ${id}`, [`Level ${tech.level} · ${kind}`, techText(tech)], extraClass);
}

function factoryTile(id, tables, extraClass) {
  const factory = tables.factories[id];
  if (!factory) return tile("factory", `Factory ${id}`, [], extraClass);
  return tile("factory", `Factory ${id}`, [`Level ${factory.level}`, factoryText(factory)], extraClass);
}

function stageCost(cost) {
  const text = amounts(cost);
  return text || "no resources";
}

function orderTile(id, tables, extraClass, note) {
  const order = tables.orders[id];
  if (!order) return tile("order", `Order ${id}`, [note], extraClass);
  return tile(
    "order",
    `Order ${id}`,
    [
      `Type ${order.level} · ${order.vp} VP`,
      order.signboard ? `${words(order.signboard)} signboard` : "No signboard",
      `Stages: ${order.stage_costs.map((cost, i) => `${i + 1}: ${stageCost(cost)}`).join(" · ")}`,
      note,
    ],
    [extraClass, order.signboard ? `ip-sign-${order.signboard}` : null],
  );
}

function contractTile(id, tables, extraClass, note) {
  const contract = tables.contracts[id];
  return tile("contract", `Contract ${id}`, [contract ? scoringText(contract.scoring) : null, note], extraClass);
}

function letterText(id, tables) {
  const letter = tables.letters[id];
  return letter ? `${letter.letter} (${amounts(letter.gain)})` : id;
}

function letterTile(id, tables, extraClass) {
  const letter = tables.letters[id];
  return el(
    "div",
    { class: ["ip-letter", extraClass], title: `Lead letter ${id}` },
    el("span", { class: "ip-letter-face", text: letter ? letter.letter : "?" }),
    el("span", { class: "ip-letter-gain", text: letter ? amounts(letter.gain) : id }),
  );
}

function discText(id, tables) {
  const disc = tables.discs[id];
  if (!disc) return `City disc ${id}`;
  const reward = disc.signboard ? `${words(disc.signboard)} signboard` : effectsText(disc.reward);
  return `${disc.letter}: ${reward}`;
}

function pawn(seat, ctx, label, extraClass) {
  return el("span", { class: ["ip-pawn", seatColor(seat), extraClass], title: label, aria: { label } }, seatName(ctx, seat).slice(0, 1));
}

// -- the header: round, phase, player order ------------------------------------------

const PHASES = {
  placement: "Placing the tradesmen",
  action: "Action phase",
  buying: "Order and contract phase",
  production: "Production phase",
  final_optionals: "Game end: last optional actions",
  finished: "Game over",
};

function header(game, ctx) {
  const status = ctx.status || {};
  const waiting = (status.to_act || []).map((seat) => seatName(ctx, seat)).join(", ");
  return el(
    "div",
    { class: "ip-header", data: { part: "round" } },
    kv([
      ["Round", game.round],
      ["Phase", PHASES[game.phase] || words(game.phase)],
      ["Action round", game.phase === "action" && game.turn ? `${game.turn.pass} of 2` : undefined],
      ["Player order", (game.order || []).map((seat, i) => `${i + 1}. ${seatName(ctx, seat)}`).join("  ")],
      ["Buying order", game.buying ? game.buying.queue.map((seat, i) => `${i + 1}. ${seatName(ctx, seat)}${i === game.buying.index ? " (buying now)" : ""}`).join("  ") : undefined],
      ["Waiting for", waiting || (status.awaiting_system ? `automatic step: ${words(status.awaiting_system)}` : "nobody")],
    ]),
  );
}

// -- the city board: shops, rooms, tradesmen, assistants -----------------------------

function cityBoard(game, tables, ctx) {
  const inPlay = new Set(game.shops);
  const here = {};
  game.seats.forEach((mine, seat) =>
    mine.tradesmen.forEach((man) => {
      if (man.shop) (here[`${man.shop}/${man.room}`] ||= []).push({ seat, man });
    }),
  );
  const shops = Object.values(tables.shops);
  const grid = el("div", { class: "ip-city" });
  const place = (node, row, col) => {
    node.style.gridRow = String(row + 1);
    node.style.gridColumn = String(col + 1);
    grid.appendChild(node);
  };
  const shopList = shops.length ? shops : game.shops.map((id, i) => ({ id, name: id, row: Math.floor(i / 4), col: i % 4 }));
  for (const shop of shopList) {
    if (!inPlay.has(shop.id)) continue;
    const room = (name, effects) =>
      el(
        "div",
        { class: "ip-room" },
        el("span", { class: "ip-room-name", text: `Room ${name}` }),
        el("span", { class: "ip-room-action", text: effects ? effectsText(effects) : "" }),
        el("span", { class: "ip-room-men" },
          (here[`${shop.id}/${name}`] || []).map(({ seat, man }) =>
            pawn(seat, ctx, `${seatName(ctx, seat)}'s tradesman, ${man.upright ? "upright" : "lying down"}`, man.upright ? "ip-upright" : "ip-lying"))),
      );
    place(
      el("div", { class: "ip-shop", data: { shop: shop.id } },
        el("div", { class: "ip-shop-name", text: shop.name }),
        room("I", shop.room_I),
        room("II", shop.room_II)),
      shop.row * 2,
      shop.col * 2,
    );
  }
  const assistants = [];
  for (const name of game.street_names || []) {
    const [a, b] = name.split("-").map((id) => tables.shops[id]);
    if (!a || !b) continue;
    const street = game.streets[name];
    const label = street ? `${seatName(ctx, street.owner)}'s assistant between ${a.name} and ${b.name} (1 ${words(street.reward).toLowerCase()})` : null;
    const node = el("div", { class: ["ip-street", a.row === b.row ? "ip-street-v" : "ip-street-h"], data: { street: name } },
      street ? el("span", { class: ["ip-assistant", seatColor(street.owner)], title: label, aria: { label } }, seatName(ctx, street.owner).slice(0, 1)) : null);
    if (label) assistants.push(label);
    place(node, a.row + b.row, a.col + b.col);
  }
  return section(
    "City",
    el("p", { class: "muted", text: "Shops with their rooms; upright tradesmen stand, lying ones have acted; assistants stand in the streets." }),
    grid,
    el("p", { class: "ip-note", text: assistants.length ? `Assistants: ${assistants.join("; ")}` : "No assistant in the streets yet." }),
  );
}

// -- the travel board: the map, city discs, markers, agents, order track -------------

// The map's cities as a drawing: the tables give the roads, not where the cities lie, so
// the renderer lays the graph out itself, the same way on every draw: a few deterministic
// starting positions, each relaxed as springs (roads pull, cities push apart), and the one
// with the fewest crossing roads and overlapping cities wins.
function mapLayout(map) {
  const cities = map.cities.map((c) => c.id);
  let seed = 7;
  const next = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  let best = null;
  for (let attempt = 0; attempt < 24; attempt++) {
    const at = {};
    cities.forEach((city, i) => {
      const turn = attempt === 0 ? (i / cities.length) * 2 * Math.PI : next() * 2 * Math.PI;
      const r = city === map.start_city ? 0 : 120 + next() * 180;
      at[city] = { x: r * Math.cos(turn), y: r * Math.sin(turn) };
    });
    relax(at, map.roads);
    const cost = layoutCost(at, map.roads);
    if (!best || cost < best.cost) best = { at, cost };
  }
  const at = best.at;
  map.roads.forEach((road, index) => {
    for (let k = 1; k <= road.coins; k++) {
      const t = k / (road.coins + 1);
      at[`coin${index + 1}.${k}`] = {
        x: at[road.a].x + (at[road.b].x - at[road.a].x) * t,
        y: at[road.a].y + (at[road.b].y - at[road.a].y) * t,
      };
    }
  });
  return at;
}

function relax(at, roads) {
  const names = Object.keys(at);
  for (let round = 0; round < 300; round++) {
    const limit = 30 * (1 - round / 300) + 1;
    const move = Object.fromEntries(names.map((n) => [n, { x: 0, y: 0 }]));
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const a = at[names[i]];
        const b = at[names[j]];
        // a city is a wide label: measure sideways distance at half weight
        const dx = (a.x - b.x) / 2 || 0.01;
        const dy = a.y - b.y || 0.01;
        const d2 = Math.max(dx * dx + dy * dy, 25);
        const d = Math.sqrt(d2);
        const push = 12000 / d2;
        move[names[i]].x += (dx / d) * push;
        move[names[i]].y += (dy / d) * push;
        move[names[j]].x -= (dx / d) * push;
        move[names[j]].y -= (dy / d) * push;
      }
    }
    for (const road of roads) {
      const a = at[road.a];
      const b = at[road.b];
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const d = Math.sqrt(dx * dx + dy * dy) || 1;
      const pull = (d - 75 * (road.coins + 1)) * 0.08;
      move[road.a].x += (dx / d) * pull;
      move[road.a].y += (dy / d) * pull;
      move[road.b].x -= (dx / d) * pull;
      move[road.b].y -= (dy / d) * pull;
    }
    for (const n of names) {
      at[n].x += Math.max(-limit, Math.min(limit, move[n].x));
      at[n].y += Math.max(-limit, Math.min(limit, move[n].y));
    }
  }
}

function layoutCost(at, roads) {
  const cross = (p, q, r, s) => {
    const side = (a, b, c) => Math.sign((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x));
    return side(p, q, r) * side(p, q, s) < 0 && side(r, s, p) * side(r, s, q) < 0;
  };
  let cost = 0;
  for (let i = 0; i < roads.length; i++) {
    for (let j = i + 1; j < roads.length; j++) {
      const a = roads[i];
      const b = roads[j];
      if ([a.a, a.b].some((c) => c === b.a || c === b.b)) continue;
      if (cross(at[a.a], at[a.b], at[b.a], at[b.b])) cost += 10;
    }
  }
  const names = Object.keys(at);
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const a = at[names[i]];
      const b = at[names[j]];
      if (Math.abs(a.x - b.x) < 110 && Math.abs(a.y - b.y) < 50) cost += 5;
    }
  }
  return cost;
}

function travelBoard(game, tables, ctx) {
  const parts = [];
  if (tables.map) {
    const at = mapLayout(tables.map);
    const drawing = [];
    for (const road of tables.map.roads) {
      drawing.push(svg("line", { x1: at[road.a].x, y1: at[road.a].y, x2: at[road.b].x, y2: at[road.b].y, class: "ip-road" }));
    }
    for (const [node, p] of Object.entries(at)) {
      if (node.startsWith("coin")) drawing.push(svg("circle", { cx: p.x, cy: p.y, r: 7, class: "ip-coin" }, svg("title", {}, "a coin space on the road")));
    }
    for (const city of tables.map.cities) {
      const p = at[city.id];
      const disc = game.map_discs[city.id];
      const markers = game.city_markers[city.id] || [];
      const caption = disc ? `disc ${discText(disc, tables)}` : city.grey ? "disc taken" : "start";
      const wide = Math.max(92, caption.length * 4.9 + 14);
      drawing.push(
        svg("g", { class: ["ip-city-node", city.grey ? "ip-grey" : "ip-start"], data: { city: city.id } },
          svg("rect", { x: p.x - wide / 2, y: p.y - 16, width: wide, height: 32, rx: 8 }),
          svg("text", { x: p.x, y: p.y - 2, "text-anchor": "middle", class: "ip-city-name" }, city.id),
          svg("text", { x: p.x, y: p.y + 11, "text-anchor": "middle", class: "ip-city-disc" }, caption),
          markers.map((seat, i) => svg("rect", { x: p.x - 44 + i * 12, y: p.y + 18, width: 10, height: 10, class: ["ip-marker", seatColor(seat)] },
            svg("title", {}, `${seatName(ctx, seat)}'s city marker`)))),
      );
    }
    const bySpot = {};
    game.agents.forEach((spot, seat) => (bySpot[spot] ||= []).push(seat));
    for (const [spot, seats] of Object.entries(bySpot)) {
      const p = at[spot];
      if (!p) continue;
      seats.forEach((seat, i) =>
        drawing.push(svg("circle", { cx: p.x - 30 + i * 14, cy: p.y - 24, r: 7, class: ["ip-agent", seatColor(seat)] },
          svg("title", {}, `${seatName(ctx, seat)}'s agent`))));
    }
    const where = game.agents.map((spot, seat) => `${seatName(ctx, seat)}'s agent at ${spot.startsWith("coin") ? "a coin space" : spot}`).join("; ");
    const xs = Object.values(at).map((p) => p.x);
    const ys = Object.values(at).map((p) => p.y);
    const box = [Math.min(...xs) - 130, Math.min(...ys) - 45, Math.max(...xs) - Math.min(...xs) + 260, Math.max(...ys) - Math.min(...ys) + 90];
    parts.push(svg("svg", { viewBox: box.join(" "), class: "ip-map", label: `Travel map. ${where}` }, drawing));
  }
  const sections = (tables.map && tables.map.order_track_sections) || 4;
  const track = el("ol", { class: "ip-order-track", aria: { label: "Order track" } });
  for (let s = 0; s < sections; s++) {
    const seats = game.track.map((t, seat) => ({ ...t, seat })).filter((t) => t.section === s).sort((a, b) => a.arrival - b.arrival);
    track.appendChild(el("li", { class: "ip-track-section" }, el("span", { class: "ip-track-name", text: `Section ${s + 1}` }),
      seats.map((t) => el("span", { class: ["ip-agent-token", seatColor(t.seat)], text: seatName(ctx, t.seat) }))));
  }
  const factories = el("div", { class: "ip-row" },
    LEVELS.map((level) => {
      const pile = game.factories[level];
      return el("div", { class: "ip-pile" },
        pile.top ? factoryTile(pile.top, tables) : el("div", { class: "ip-empty", text: "empty" }),
        el("div", { class: "ip-pile-label", text: `Level ${level} factories: ${pile.draw_pile} in the pile` }));
    }));
  const directors = el("p", { class: "ip-note", text: `City discs left in the box: ${game.boxed_discs}` });
  return section("Travel board", parts, el("h4", { text: "Order track" }), track, el("h4", { text: "Factories (face up)" }), factories, directors);
}

// -- the trading board: technologies and trading tiles --------------------------------

function tradingBoard(game, tables) {
  const costs = tables.techData.row_costs || [];
  const marks = tables.techData.column_marks || {};
  const grid = el("div", { class: "ip-tech-grid" });
  grid.appendChild(el("div", { class: "ip-tech-corner", text: "Row cost \\ column" }));
  for (const level of LEVELS) {
    grid.appendChild(el("div", { class: "ip-tech-head", text: `Level ${level}${marks[level] !== undefined ? ` · ${marks[level]} mark${marks[level] === 1 ? "" : "s"}` : ""}` }));
  }
  const rows = Math.max(...LEVELS.map((level) => game.tech[level].display.length));
  for (let row = 0; row < rows; row++) {
    grid.appendChild(el("div", { class: "ip-tech-rowcost", text: costs[row] ? amounts(costs[row]) : "" }));
    for (const level of LEVELS) {
      const id = game.tech[level].display[row];
      grid.appendChild(id ? techTile(id, tables) : el("div", { class: "ip-empty", text: "empty" }));
    }
  }
  grid.appendChild(el("div", { class: "ip-tech-rowcost", text: "Draw piles" }));
  for (const level of LEVELS) grid.appendChild(el("div", { class: "ip-pile-label", text: `${game.tech[level].draw_pile} face down` }));
  const trades = el("div", { class: "ip-row" },
    game.trading.display.map((id) => {
      const t = tables.trading[id];
      if (!t) return tile("trade", `Trading tile ${id}`, []);
      return tile("trade", `Trading tile ${id}`, [
        `Give ${amounts(t.give)} ${t.two_way ? "⇄" : "→"} take ${amounts(t.take)}`,
        t.two_way ? "Both ways" : "One way",
        `Up to ${t.repeats} time${t.repeats === 1 ? "" : "s"}`,
      ]);
    }),
    el("div", { class: "ip-pile-label", text: `Trading tiles: ${game.trading.draw_pile} in the pile, ${game.trading.discard_pile.length} discarded` }));
  return section("Trading board", el("h4", { text: "Technologies" }), grid, el("h4", { text: "Trading tiles" }), trades);
}

// -- orders and contracts next to the order track -------------------------------------

function orderDisplay(game, tables) {
  const price = (prices, i) => (prices[i] !== undefined ? `Position ${i + 1}: ${prices[i]} mark${prices[i] === 1 ? "" : "s"}` : `Position ${i + 1}`);
  const orders = el("div", { class: "ip-row" }, game.orders.display.map((id, i) =>
    id ? orderTile(id, tables, null, price(tables.orderPrices, i)) : el("div", { class: "ip-empty", text: `${price(tables.orderPrices, i)}: empty` })));
  const contracts = el("div", { class: "ip-row" }, game.contracts.display.map((id, i) =>
    id ? contractTile(id, tables, null, price(tables.contractPrices, i)) : el("div", { class: "ip-empty", text: `${price(tables.contractPrices, i)}: empty` })));
  const piles = LEVELS.map((level) => `type ${level}: ${game.orders.piles[level]}`).join(", ");
  return section(
    "Orders and contracts",
    el("h4", { text: "Orders" }), orders,
    el("p", { class: "ip-pile-label", text: `Order piles ${piles}; ${game.orders.discard_pile.length} discarded` }),
    el("h4", { text: "Contracts" }), contracts,
    el("p", { class: "ip-pile-label", text: `Contract pile: ${game.contracts.draw_pile}; ${game.contracts.discard_pile.length} discarded` }),
  );
}

// -- the typesetting table: lead letters and the supply -------------------------------

function typesettingTable(game, tables) {
  const letters = game.letters;
  return section(
    "Typesetting table",
    el("div", { class: "ip-row" },
      letters.desk.map((id, i) => (id ? letterTile(id, tables) : el("div", { class: "ip-empty", text: `Space ${i + 1}: empty` }))),
      el("div", { class: "ip-pile" },
        el("div", { class: "ip-letter ip-letter-back", text: letters.top_back || "–" }),
        el("div", { class: "ip-pile-label", text: `Lead letters: ${letters.draw_pile} face down${letters.top_back ? `, the top shows ${letters.top_back}` : ""}` })),
      el("div", { class: "ip-pile-label", text: `Discarded letters: ${letters.discard_pile.length}` })),
  );
}

// -- a player's workshop ------------------------------------------------------------

function workshopTree(mine, tables) {
  const spaces = (tables.board && tables.board.workshop) || Object.keys(mine.workshop).map((id) => ({ id, level: "", parent: null, action: [] }));
  const children = {};
  for (const space of spaces) (children[space.parent || ""] ||= []).push(space);
  const rows = [];
  const walk = (space, row) => {
    rows[row] ||= [];
    rows[row][LEVELS.indexOf(space.level)] = space;
    (children[space.id] || []).forEach((child, i) => walk(child, i === 0 ? row : rows.length));
  };
  (children[""] || []).forEach((root) => walk(root, rows.length));
  const grid = el("div", { class: "ip-tree" });
  for (const row of rows) {
    for (let col = 0; col < LEVELS.length; col++) {
      const space = row[col];
      if (!space) {
        grid.appendChild(el("div", { class: "ip-tree-gap" }));
        continue;
      }
      const placed = mine.workshop[space.id] || {};
      const shown = (piece, face) => {
        if (!piece) return null;
        const node = piece.kind === "factory" ? factoryTile(piece.id, tables, `ip-${face}`) : techTile(piece.id, tables, `ip-${face}`);
        node.prepend(el("span", { class: "ip-face", text: face === "up" ? "face up" : "face down" }));
        return node;
      };
      grid.appendChild(
        el("div", { class: ["ip-space", placed.up || placed.down ? "ip-covered" : null], data: { space: space.id } },
          el("div", { class: "ip-space-head", text: `${space.id} · level ${space.level}` }),
          el("div", { class: "ip-space-action", text: effectsText(space.action) }),
          shown(placed.down, "down"),
          shown(placed.up, "up")),
      );
    }
  }
  return grid;
}

function stickBoard(mine, tables) {
  const sticks = (tables.board && tables.board.composing_sticks) || [];
  const grid = el("div", { class: "ip-sticks" });
  mine.board.forEach((cell, index) => {
    const printed = sticks[Math.floor(index / 3)] ? sticks[Math.floor(index / 3)][index % 3] : null;
    grid.appendChild(
      el("div", { class: ["ip-stick-cell", cell ? "ip-filled" : null], data: { cell: index } },
        el("span", { class: "ip-stick-letter", text: printed ? printed.letter : "" }),
        el("span", { class: "ip-stick-bonus", text: printed ? effectsText(printed.bonus) : "" }),
        cell ? letterTile(cell.letter, tables, "ip-on-stick") : null,
        cell && cell.paired ? el("span", { class: "ip-paired", text: `paired with city tile ${discText(cell.paired, tables)}` }) : null),
    );
  });
  return grid;
}

function contractSlots(mine, tables) {
  const printed = (tables.board && tables.board.contract_slots) || [];
  return el("ol", { class: "ip-slots" },
    mine.slots.map((slot, i) => {
      const info = printed[i];
      const formation = info ? `letters at ${info.formation.map(([r, c]) => `${r + 1}/${c + 1}`).join(", ")}` : "";
      const under = slot.contract && mine.letters_under[slot.contract];
      return el("li", { class: ["ip-slot", slot.active ? "ip-open" : "ip-locked"] },
        el("span", { text: `Slot ${i + 1}: ${slot.active ? "unlocked" : "locked"}${formation ? ` (${formation})` : ""}${info ? `, covers ${effectsText(info.bonus)}` : ""}` }),
        slot.contract ? contractTile(slot.contract, tables, "ip-active", under ? `Lead letter ${letterText(under, tables)} under it: scores double` : null) : null);
    }));
}

function workshop(game, mine, tables, ctx) {
  const seat = mine.seat;
  const inHand = mine.assistants_in_hand || [];
  const inSlots = new Set(mine.slots.map((slot) => slot.contract).filter(Boolean));
  const director = tables.board && tables.board.director ? tables.board.director[mine.director] : null;
  const score = game.final_scores ? game.final_scores.find((s) => s.seat === seat) : null;
  const pending = (game.pending && game.pending[seat]) || [];
  return seatPanel(
    ctx,
    seat,
    el("p", { class: "ip-score", data: { score: score ? score.total : mine.vp } },
      score ? `Final score: ${score.total} VP` : `Victory points: ${mine.vp}`),
    el("dl", { class: "ip-stats" },
      [["Marks", mine.marks], ["Paper", mine.paper], ["Lead", mine.lead], ["Ink", mine.ink],
        ["Workforce", mine.workforce], ["Capacity", mine.capacity], ["Assistants", mine.assistants], ["City markers", mine.city_markers]]
        .map(([term, value]) => el("div", { class: "ip-stat" }, el("dt", { text: term }), el("dd", { text: String(value) })))),
    inHand.length
      ? el("p", { class: "ip-note", data: { assistants: inHand.join(" ") }, text: `Assistants in hand: ${inHand.map((reward) => `1 ${words(reward).toLowerCase()}`).join(", ")}` })
      : null,
    boardTracks(mine, tables),
    game.phase === "production" ? el("p", { class: "ip-note", text: game.production_done[seat] ? "Production: done" : "Production: advancing orders" }) : null,
    pending.length ? el("p", { class: "ip-pending", text: `Waiting to resolve: ${pending.map(iconText).join("; ")}` }) : null,
    el("h4", { text: "Tradesmen" }),
    el("p", { text: mine.tradesmen.length ? mine.tradesmen.map((man) => (man.shop ? `${tables.shops[man.shop] ? tables.shops[man.shop].name : man.shop}, room ${man.room} (${man.upright ? "upright" : "lying"})` : "not placed")).join("; ") : "None placed yet" }),
    el("h4", { text: "Workshop" }),
    workshopTree(mine, tables),
    el("h4", { text: "Composing stick board" }),
    stickBoard(mine, tables),
    el("div", { class: "ip-row" },
      mine.stacks.map((stack, i) =>
        el("div", { class: "ip-stack" },
          el("div", { class: "ip-pile-label", text: `Letter stack ${i + 1} (${stack.length})` }),
          stack.length ? stack.slice().reverse().map((id, j) => letterTile(id, tables, j === 0 ? "ip-top" : null)) : el("span", { class: "muted", text: "empty" })))),
    el("h4", { text: "Contracts" }),
    contractSlots(mine, tables),
    el("div", { class: "ip-row" },
      mine.contracts.filter((id) => !inSlots.has(id)).map((id) => contractTile(id, tables, "ip-held", "not activated"))),
    el("h4", { text: "Orders" }),
    el("div", { class: "ip-row" },
      mine.orders_waiting.length
        ? mine.orders_waiting.map((id) => orderTile(id, tables, "ip-waiting", "Waiting next to the workshop"))
        : el("span", { class: "muted", text: "No order waiting next to the workshop" })),
    el("ol", { class: "ip-line", aria: { label: "Production line" } },
      mine.line.map((id, i) => el("li", {}, el("div", { class: "ip-pile-label", text: `Stage ${i + 1}` }),
        id ? orderTile(id, tables, "ip-in-line") : el("div", { class: "ip-empty", text: "empty" })))),
    mine.completed.length ? el("p", { text: `Completed orders: ${mine.completed.join(", ")}` }) : null,
    el("p", { text: `Signboards: ${mine.signboards.length ? mine.signboards.map((s) => `${s.colour}${s.used ? " (used)" : ""}`).join(", ") : "none"}` }),
    el("p", { text: `City tiles: ${mine.discs.length ? mine.discs.map((d) => `${discText(d.id, tables)}${d.used ? " (used)" : ""}`).join("; ") : "none"}` }),
  );
}

// The capacity track (with the workforce marker on the same numbers) and the director's
// track, as printed on the workshop board.
function boardTracks(mine, tables) {
  const board = tables.board;
  if (!board) return null;
  const capacity = el("ol", { class: "ip-cells", aria: { label: `Capacity track: capacity ${mine.capacity}, workforce ${mine.workforce}` } },
    board.capacity_track.map((reward, value) =>
      el("li", { class: ["ip-cell", value > board.workforce_max ? "ip-beyond" : null] },
        el("span", { class: "ip-cell-num", text: String(value) }),
        reward.length ? el("span", { class: "ip-cell-reward", text: effectsText(reward) }) : null,
        value === mine.capacity ? el("span", { class: "ip-marker-c", text: "Capacity" }) : null,
        value === mine.workforce ? el("span", { class: "ip-marker-w", text: "Workforce" }) : null)));
  const director = el("ol", { class: "ip-cells", aria: { label: `Director track: space ${mine.director + 1}` } },
    board.director.map((step, index) =>
      el("li", { class: "ip-cell" },
        el("span", { class: "ip-cell-num", text: `${step.points} VP` }),
        step.reward.length ? el("span", { class: "ip-cell-reward", text: effectsText(step.reward) }) : null,
        index === mine.director ? el("span", { class: "ip-marker-d", text: "Director" }) : null)));
  return el("div", {}, el("h4", { text: "Capacity and workforce" }), capacity, el("h4", { text: "Director" }), director);
}

function finalScores(game, ctx) {
  const order = [...game.final_scores].sort((a, b) => b.total - a.total);
  return section("Final scoring", scoreTable(ctx, order.map((s) => ({ seat: s.seat, total: s.total, parts: s.breakdown }))));
}
