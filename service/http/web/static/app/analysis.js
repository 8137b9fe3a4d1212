// The analysis of a position (docs/analysis.md, "Analyses over HTTP"): asked at the
// scrubber's position for a seat, followed until done, drawn as one horizontal bar per
// candidate move (its win rate, the 95% interval as a whisker, its playouts; the pick marked).
//
// The page's EventSource carries no token, so it never hears of an analysis (a seat's secret
// while the game is played): the panel reads the analysis again every POLL_MS instead,
// at most MAX_POLLS times (the service stops every analysis by MEEPLE_ANALYSIS_MAX_SECONDS).

import { api } from "./api.js";
import { el, svg } from "../games/common.js";
import { fill, problemText } from "./ui.js";

const POLL_MS = 500;
const MAX_POLLS = 240; // two minutes: well past the service's 30-second bound on any analysis
const DEFAULT_PLAYOUTS = 200;
const MAX_PLAYOUTS = 5000; // MEEPLE_ANALYSIS_MAX_PLAYOUTS's default; the service decides
const BAR_WIDTH = 240;
const BAR_HEIGHT = 18;
const DONE = new Set(["done", "cancelled", "failed"]);
const CANCEL_POLLS = 6; // reads, after a cancel, for what the search had found by then

/** What a refusal means to the person who asked, in words. */
function refusal(error) {
  const code = error && error.code;
  if (error && error.status === 429) return `Too many analyses are running now; try again in a moment. ${problemText(error)}`;
  if (code === "not_your_seat" || (error && error.status === 403)) return `Only that seat may analyse its position while the game is played. ${problemText(error)}`;
  if (error && error.status === 401) return `Only a seat may analyse a game under way: open it with your seat's link or token. ${problemText(error)}`;
  if (code === "no_decision") return `That seat has nothing to decide after this event: pick another seat or event. ${problemText(error)}`;
  return problemText(error);
}

/** The panel; `page` gives `path`, `summary`, `token`, `seat` (the viewer's), `viewer` and `at`. */
export class AnalysisPanel {
  constructor(page) {
    this.page = page;
    this.ticket = 0;
    this.seatSelect = el("select", { id: "analysis-seat" });
    this.playouts = el("input", { id: "analysis-playouts", type: "number", min: 1, max: MAX_PLAYOUTS, step: 1,
      value: String(DEFAULT_PLAYOUTS) });
    this.button = el("button", { type: "button", id: "analyse-here", text: "Analyse this position" });
    this.note = el("p", { class: "muted small analysis-note", aria: { live: "polite" } });
    this.result = el("div", { class: "analysis-result" });
    this.cancelButton = el("button", { type: "button", id: "cancel-analysis", class: "secondary", text: "Cancel the analysis", hidden: true });
    this.running = null; // the id of the analysis being followed, while it runs
    this.button.addEventListener("click", () => this.ask());
    this.cancelButton.addEventListener("click", () => this.cancel());
    this.node = el("section", { class: "analysis", aria: { labelledby: "analysis-title" } },
      el("h3", { id: "analysis-title", text: "Analysis of the position" }),
      el("p", { class: "muted small", text: "Weighs each move the seat may make after the scrubber's event by playing the game on at random from there (Monte Carlo tree search over what the seat can see)." }),
      el("div", { class: "row" },
        el("label", { class: "field", for: "analysis-seat" }, el("span", { text: "For seat" }), this.seatSelect),
        el("label", { class: "field", for: "analysis-playouts" }, el("span", { text: "Playouts" }), this.playouts),
        this.button, this.cancelButton),
      this.note, this.result);
  }

  stop() {
    this.ticket += 1;
  }

  /** The seats one may analyse: any once the game is over (or for a branch's holder), else
   * only the viewer's own; none for a spectator of a game under way. */
  update() {
    const page = this.page;
    const s = page.summary;
    const anySeat = s.status.finished || (page.viewer && page.viewer.holder);
    const allowed = anySeat ? s.players.map((_, seat) => seat) : page.viewer && page.seat !== null ? [page.seat] : [];
    const chosen = this.seatSelect.value;
    fill(this.seatSelect, allowed.map((seat) => el("option", { value: String(seat), text: `${s.players[seat]} (seat ${seat + 1})` })));
    if (allowed.map(String).includes(chosen)) this.seatSelect.value = chosen;
    this.button.disabled = !allowed.length;
    this.button.textContent = `Analyse event ${page.at}`;
    if (!allowed.length) this.note.textContent = "While the game is played only a seat may analyse, and only its own position.";
    else if (this.note.textContent.startsWith("While the game")) this.note.textContent = "";
  }

  async ask() {
    const page = this.page;
    const ticket = (this.ticket += 1);
    const body = { at: page.at, seat: Number(this.seatSelect.value), playouts: Number(this.playouts.value) };
    this.button.disabled = true;
    fill(this.result);
    delete this.note.dataset.status;
    this.note.textContent = `Asking for an analysis of event ${body.at}…`;
    try {
      let analysis = await api(`${page.path}/analyses`, { method: "POST", token: page.token, body });
      for (let polls = 0; !DONE.has(analysis.status); polls += 1) {
        if (ticket !== this.ticket) return;
        this.following(analysis.id);
        if (polls >= MAX_POLLS) throw new Error("The analysis did not finish; ask again later.");
        const progress = analysis.progress || {};
        this.note.textContent = `${analysis.status === "queued" ? "Queued" : "Searching"}: ${progress.done || 0} of ${progress.total || body.playouts} playouts…`;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        analysis = await api(`${page.path}/analyses/${encodeURIComponent(analysis.id)}`, { token: page.token });
      }
      if (ticket !== this.ticket) return;
      this.following(null);
      // A cancelled search writes down what it found when it notices (within a second).
      for (let polls = 0; analysis.status === "cancelled" && !analysis.result && polls < CANCEL_POLLS; polls += 1) {
        if (ticket !== this.ticket) return;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        analysis = await api(`${page.path}/analyses/${encodeURIComponent(analysis.id)}`, { token: page.token });
      }
      if (ticket !== this.ticket) return;
      if (analysis.status === "failed") throw new Error(`The analysis failed: ${analysis.error || "no reason given"}`);
      if (analysis.status === "cancelled") return this.cancelled(analysis);
      this.draw(analysis);
    } catch (error) {
      if (ticket === this.ticket) {
        this.note.textContent = "";
        fill(this.result, el("p", { class: "error", role: "alert", text: refusal(error) }));
      }
    } finally {
      if (ticket === this.ticket) {
        this.button.disabled = false;
        this.following(null);
      }
    }
  }

  /** Show "Cancel" while analysis `id` runs (null: none runs). */
  following(id) {
    this.running = id;
    this.cancelButton.hidden = id === null;
    this.cancelButton.disabled = false;
  }

  /** Cancel the running analysis (DELETE .../analyses/{aid}, docs/analysis.md): it stops
   * within a second and keeps what it found; the poll then reads it as cancelled. */
  async cancel() {
    const id = this.running;
    if (id === null) return;
    const page = this.page;
    this.cancelButton.disabled = true;
    try {
      const analysis = await api(`${page.path}/analyses/${encodeURIComponent(id)}`, { method: "DELETE", token: page.token });
      if (analysis.status === "cancelled" && this.running === id) this.note.textContent = "Cancelling…";
    } catch (error) {
      if (this.running === id) {
        this.cancelButton.disabled = false;
        fill(this.result, el("p", { class: "error", role: "alert", text: `The analysis could not be cancelled: ${problemText(error)}` }));
      }
    }
  }

  /** A cancelled analysis: said in words, with the moves it had weighed when it stopped. */
  cancelled(analysis) {
    const found = analysis.result;
    const done = found ? found.playouts : (analysis.progress || {}).done || 0;
    fill(this.result);
    if (found && found.candidates && found.candidates.length) this.draw(analysis);
    this.note.textContent = `Cancelled after ${done} playouts${found && found.candidates && found.candidates.length ? ": what it had found by then is below" : ""}.`;
    this.note.dataset.status = "cancelled";
  }

  draw(analysis) {
    const found = analysis.result;
    const players = this.page.summary.players;
    const pick = JSON.stringify(found.pick);
    this.note.textContent = `${players[analysis.seat]} (seat ${analysis.seat + 1}) after event ${analysis.at}: ${found.playouts} playouts${found.complete ? "" : ", stopped early"}.`;
    const rows = found.candidates.map((candidate, index) => {
      const picked = JSON.stringify(candidate.action) === pick;
      const [low, high] = candidate.win_interval;
      const percent = (x) => `${Math.round(x * 100)}%`;
      const said = `win rate ${percent(candidate.win_rate)}, 95% interval ${percent(low)} to ${percent(high)}`;
      const bar = svg("svg", { class: "analysis-bar", width: BAR_WIDTH, height: BAR_HEIGHT, viewBox: `0 0 ${BAR_WIDTH} ${BAR_HEIGHT}`,
        label: said },
        svg("rect", { class: "bar-track", x: 0, y: 3, width: BAR_WIDTH, height: BAR_HEIGHT - 6 }),
        svg("rect", { class: picked ? "bar-fill pick" : "bar-fill", x: 0, y: 3, width: (candidate.win_rate * BAR_WIDTH).toFixed(1), height: BAR_HEIGHT - 6 }),
        svg("line", { class: "bar-whisker", x1: (low * BAR_WIDTH).toFixed(1), x2: (high * BAR_WIDTH).toFixed(1), y1: BAR_HEIGHT / 2, y2: BAR_HEIGHT / 2 }),
        svg("line", { class: "bar-whisker", x1: (low * BAR_WIDTH).toFixed(1), x2: (low * BAR_WIDTH).toFixed(1), y1: 2, y2: BAR_HEIGHT - 2 }),
        svg("line", { class: "bar-whisker", x1: (high * BAR_WIDTH).toFixed(1), x2: (high * BAR_WIDTH).toFixed(1), y1: 2, y2: BAR_HEIGHT - 2 }));
      return el("tr", { class: picked ? "candidate pick" : "candidate", data: { index } },
        el("th", { scope: "row" }, picked ? el("span", { class: "badge badge-pick", text: "pick" }) : null, " ", candidate.summary),
        el("td", {}, bar),
        el("td", { class: "num", text: `${percent(candidate.win_rate)} (${percent(low)}–${percent(high)})` }),
        el("td", { class: "num", text: String(candidate.playouts) }));
    });
    fill(this.result, el("table", { class: "analysis-table" },
      el("caption", { class: "visually-hidden", text: "Candidate moves, most played first" }),
      el("thead", {}, el("tr", {}, ["Move", "Win rate (bar; whisker: 95% interval)", "Win rate", "Playouts"]
        .map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, rows)));
  }
}
