// Every seat's score across a game, as a hand-drawn SVG line chart (no library needed).
// The points come from GET /games/{id}/timeline, which notes each seat's public score after
// every event; a cursor marks the scrubber's position.

import { el, svg, seatColor, seatName } from "../games/common.js";

const W = 640;
const H = 220;
const PAD = { left: 40, right: 12, top: 12, bottom: 28 };

/** Points per seat: [[{seq, score}], ...] from the timeline's entries that carry scores. */
export function scoreSeries(entries, seatCount) {
  const series = Array.from({ length: seatCount }, () => []);
  for (const entry of entries) {
    if (!Array.isArray(entry.scores)) continue;
    entry.scores.forEach((score, seat) => {
      if (seat < seatCount && typeof score === "number") series[seat].push({ seq: entry.seq, score });
    });
  }
  return series;
}

/** Each seat's score at event `seq`: the last one noted at or before it (null: none yet). */
export function scoresAt(series, seq) {
  return series.map((points) => {
    let found = null;
    for (const point of points) {
      if (point.seq > seq) break;
      found = point.score;
    }
    return found;
  });
}

/** The chart as an element; `at` is the scrubber's event. */
export function scoreChart(series, ctx, last, at) {
  const all = series.flat();
  const top = Math.max(5, ...all.map((p) => p.score));
  const bottom = Math.min(0, ...all.map((p) => p.score));
  const x = (seq) => PAD.left + ((seq - 1) / Math.max(1, last - 1)) * (W - PAD.left - PAD.right);
  const y = (score) => H - PAD.bottom - ((score - bottom) / Math.max(1, top - bottom)) * (H - PAD.top - PAD.bottom);
  const now = scoresAt(series, at);
  const said = now.map((score, seat) => `${seatName(ctx, seat)} ${score === null ? "no score yet" : score}`).join(", ");
  const grid = [];
  const step = niceStep(top - bottom);
  for (let v = Math.ceil(bottom / step) * step; v <= top; v += step) {
    grid.push(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "chart-grid" }));
    grid.push(svg("text", { x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end", class: "chart-label" }, String(v)));
  }
  const lines = series.map((points, seat) => {
    if (!points.length) return null;
    // A score holds until the next event changes it: steps, not slopes.
    let d = "";
    points.forEach((p, i) => {
      d += i === 0 ? `M${x(p.seq)},${y(p.score)}` : `H${x(p.seq)}V${y(p.score)}`;
    });
    d += `H${x(last)}`;
    return svg("path", { d, class: ["chart-line", seatColor(seat)], data: { seat } });
  });
  const cursorX = x(Math.min(Math.max(1, at), last));
  const dots = now.map((score, seat) => (score === null ? null
    : svg("circle", { cx: cursorX, cy: y(score), r: 4, class: ["chart-dot", seatColor(seat)] })));
  const empty = !all.length;
  return el(
    "figure",
    { class: "score-chart", data: { at } },
    svg(
      "svg",
      { viewBox: `0 0 ${W} ${H}`, label: empty ? "No score has been noted yet" : `Scores across the game; at event ${at}: ${said}` },
      grid,
      svg("line", { x1: PAD.left, x2: W - PAD.right, y1: H - PAD.bottom, y2: H - PAD.bottom, class: "chart-axis" }),
      svg("text", { x: PAD.left, y: H - 8, class: "chart-label" }, "event 1"),
      svg("text", { x: W - PAD.right, y: H - 8, "text-anchor": "end", class: "chart-label" }, `event ${last}`),
      lines,
      svg("line", { x1: cursorX, x2: cursorX, y1: PAD.top, y2: H - PAD.bottom, class: "chart-cursor" }),
      dots,
    ),
    el(
      "figcaption",
      {},
      el("span", { class: "chart-at", text: `At event ${at}: ` }),
      now.map((score, seat) => el("span", { class: "legend-item" },
        el("span", { class: ["legend-swatch", seatColor(seat)], aria: { hidden: "true" } }),
        `${seatName(ctx, seat)}: ${score === null ? "–" : score}`)),
    ),
  );
}

function niceStep(span) {
  for (const step of [1, 2, 5, 10, 20, 25, 50, 100, 200, 500]) if (span / step <= 6) return step;
  return 1000;
}
