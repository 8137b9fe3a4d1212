// Small DOM helpers every game renderer may use (contract: README.md in this folder).
// Nothing game-specific lives here.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(node, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "class") node.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (key === "data" || key === "aria") {
      for (const [name, v] of Object.entries(value)) {
        if (v !== null && v !== undefined) node.setAttribute(`${key}-${name}`, String(v));
      }
    } else if (key === "label" && node.namespaceURI === SVG_NS && node.tagName === "svg") {
      node.setAttribute("role", "img");
      node.setAttribute("aria-label", String(value));
    } else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
}

/** Append `children` to `node`: nodes, strings, numbers, arrays; null and false skipped. */
export function put(node, ...children) {
  append(node, children);
  return node;
}

/** An HTML element: el("div", {class: "row"}, child, "text", [more]). */
export function el(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element; `label` on the <svg> makes it role=img with that aria-label. */
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** "gold_leaf" -> "Gold leaf". */
export function words(id) {
  if (id === null || id === undefined) return "";
  const text = String(id).replace(/[_-]+/g, " ").trim();
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The seat's name, "Seat 2" when unknown. */
export function seatName(ctx, seat) {
  const name = ctx && ctx.players ? ctx.players[seat] : null;
  if (name && typeof name === "object") return name.name || `Seat ${seat + 1}`;
  return name || `Seat ${seat + 1}`;
}

/** The CSS class of a seat's colour. */
export function seatColor(seat) {
  return `seat-${Number(seat) % 5}`;
}

/** A resource chip: "Ink ×3". */
export function chip(name, count, opts = {}) {
  return el(
    "span",
    { class: ["chip", opts.kind ? `chip-${opts.kind}` : null], title: opts.title },
    el("span", { class: "chip-name", text: name }),
    count === undefined || count === null ? null : el("span", { class: "chip-count", text: `×${count}` }),
  );
}

/** A row of chips from {name: count}; zeros skipped unless opts.zeros. */
export function chips(counts, opts = {}) {
  const row = el("span", { class: "chips" });
  for (const [id, count] of Object.entries(counts || {})) {
    if (!opts.zeros && (count === 0 || count === null)) continue;
    const name = opts.names && opts.names[id] ? opts.names[id] : words(id);
    row.appendChild(chip(name, count, { kind: opts.kind || id }));
  }
  if (!row.childNodes.length) row.appendChild(el("span", { class: "muted", text: opts.empty || "none" }));
  return row;
}

/** A card: title, kind line, cost chips, effect text, points; faceDown draws its back. */
export function card({ name, kind, cost, effect, points, tags, faceDown: down, extra } = {}) {
  if (down) return el("div", { class: "card face-down", aria: { label: "a face-down card" } }, el("span", { text: kind ? words(kind) : "?" }));
  return el(
    "div",
    { class: ["card", kind ? `card-${String(kind).replace(/[^a-z0-9-]/gi, "-")}` : null] },
    el("div", { class: "card-name", text: name }),
    kind ? el("div", { class: "card-kind muted", text: words(kind) }) : null,
    cost && Object.keys(cost).length ? el("div", { class: "card-cost" }, "Cost: ", chips(cost)) : null,
    effect ? el("div", { class: "card-effect", text: effect }) : null,
    tags && tags.length ? el("div", { class: "card-tags" }, tags.map((t) => el("span", { class: "badge", text: t }))) : null,
    points !== undefined && points !== null ? el("div", { class: "card-points", text: `${points} VP` }) : null,
    extra || null,
  );
}

/** A stack of face-down cards or tiles with its label. */
export function faceDown(count, label) {
  return el(
    "div",
    { class: "stack", title: `${label}: ${count}` },
    el("div", { class: ["card", "face-down", count ? null : "empty"] }, el("span", { text: String(count) })),
    el("div", { class: "stack-label", text: `${label}: ${count}` }),
  );
}

/** A numbered track with seat markers: marks = [{seat, value}]. */
export function track({ label, min = 0, max, marks = [], seats } = {}) {
  const values = marks.map((m) => Number(m.value) || 0);
  const hi = max !== undefined ? max : Math.max(min + 10, ...values);
  const span = Math.max(1, hi - min);
  const width = 600;
  const x = (v) => 12 + ((Math.min(hi, Math.max(min, v)) - min) / span) * (width - 24);
  const ticks = [];
  const step = span > 40 ? 10 : span > 15 ? 5 : 1;
  for (let v = min; v <= hi; v += step) {
    ticks.push(svg("line", { x1: x(v), x2: x(v), y1: 14, y2: 22, class: "track-tick" }));
    ticks.push(svg("text", { x: x(v), y: 36, class: "track-num", "text-anchor": "middle" }, String(v)));
  }
  const description = marks
    .map((m) => `${seats ? seats[m.seat] || `Seat ${m.seat + 1}` : `Seat ${m.seat + 1}`} ${m.value}`)
    .join(", ");
  // Markers on one space stand side by side, so none hides another.
  const at = (m) => x(Number(m.value) || 0);
  const sharing = (m) => marks.filter((o) => at(o) === at(m));
  const markers = marks.map((m) =>
    svg("circle", { cx: at(m) + (sharing(m).indexOf(m) - (sharing(m).length - 1) / 2) * 10, cy: 18, r: 6, class: ["track-marker", seatColor(m.seat)] },
      svg("title", {}, `${seats ? seats[m.seat] || `Seat ${m.seat + 1}` : `Seat ${m.seat + 1}`}: ${m.value}`)),
  );
  return el(
    "div",
    { class: "track" },
    label ? el("div", { class: "track-label", text: `${label}: ${description}` }) : null,
    svg("svg", { viewBox: `0 0 ${width} 42`, class: "track-svg", label: `${label || "Track"}: ${description}` },
      svg("line", { x1: 12, x2: width - 12, y1: 18, y2: 18, class: "track-line" }), ticks, markers),
  );
}

function slug(text) {
  return String(text).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

/** <section data-part="slug"><h3>title</h3>...</section> */
export function section(title, ...children) {
  return el("section", { class: "part", data: { part: slug(title) } }, el("h3", { text: title }), ...children);
}

/** A seat's area: name, colour, "you" and "to act" badges, data-seat. */
export function seatPanel(ctx, seat, ...children) {
  const toAct = ctx && ctx.status && (ctx.status.to_act || []).includes(seat);
  const you = ctx && ctx.seat === seat;
  return el(
    "section",
    { class: ["seat-area", seatColor(seat), toAct ? "to-act" : null, you ? "you" : null], data: { seat } },
    el(
      "h3",
      {},
      el("span", { class: ["seat-dot", seatColor(seat)], aria: { hidden: "true" } }),
      seatName(ctx, seat),
      you ? el("span", { class: "badge badge-you", text: "you" }) : null,
      toAct ? el("span", { class: "badge badge-to-act", text: "to act" }) : null,
    ),
    ...children,
  );
}

/** A small definition list from [[term, value], ...]. */
export function kv(pairs) {
  const list = el("dl", { class: "kv" });
  for (const [term, value] of pairs) {
    if (value === undefined) continue;
    list.appendChild(el("dt", { text: term }));
    list.appendChild(el("dd", {}, value === null ? "—" : value instanceof Node ? value : String(value)));
  }
  return list;
}

/** Final scores: rows = [{seat, total, parts: {name: points}}], ranked as given. */
export function scoreTable(ctx, rows) {
  const names = [];
  for (const row of rows) for (const name of Object.keys(row.parts || {})) if (!names.includes(name)) names.push(name);
  // A wide breakdown scrolls inside its own box (focusable, so a keyboard scrolls it too)
  // rather than widening the page on a phone.
  return el("div", { class: "score-scroll", tabindex: 0, role: "region", aria: { label: "Final scores" } }, el(
    "table",
    { class: "score-table" },
    el("caption", { class: "visually-hidden", text: "Final scores" }),
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Rank" }), el("th", { scope: "col", text: "Player" }),
      names.map((n) => el("th", { scope: "col", text: words(n) })), el("th", { scope: "col", text: "Total" }))),
    el("tbody", {}, rows.map((row, i) => el("tr", { class: seatColor(row.seat) },
      el("td", { text: String(i + 1) }), el("th", { scope: "row", text: seatName(ctx, row.seat) }),
      names.map((n) => el("td", { text: row.parts && n in row.parts ? String(row.parts[n]) : "" })),
      el("td", { class: "total", text: String(row.total) })))),
  ));
}
