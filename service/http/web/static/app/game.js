// A game's page: the table (drawn by the game's renderer), the seats, play controls, live
// updates over the SSE stream, replay (scrubber, log, score chart, audit) and what-if
// (branch tree, branch from here). Everything comes from the REST API.

import { api, idempotencyKey, seats } from "./api.js";
import { el, seatColor, seatName, words } from "../games/common.js";
import { fill, notify, problemText } from "./ui.js";
import { choosableValues, partNames, playControls } from "./play.js";
import { scoreChart, scoreSeries, scoresAt } from "./chart.js";
import { branchTree } from "./branches.js";
import { AnalysisPanel } from "./analysis.js";
import { joinForm } from "./lobby.js";
import { botForms, rotatedLink, seatControls, started } from "./seat.js";

const TIMELINE_PAGE = 1000;
const ACTION_PAGE = 1000;
const MAX_ACTION_PAGES = 20; // a bounded read: 20,000 actions is far beyond any game's list
// The audit folds the whole log again on the server: while events keep coming, a page asks
// for it at most once in this many milliseconds (a finished game's, at once).
const AUDIT_INTERVAL_MS = 5000;
const STREAM_EVENTS = ["game_created", "action", "system", "undone", "redone", "branched_from", "seat_changed"];

// The tab's icon: a plain meeple-brown dot, or an orange one with a white centre on your
// turn (an SVG data: address, which the page's CSP allows for images).
const ICON = (fill, centre) => `data:image/svg+xml,${encodeURIComponent(
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="${fill}"/>${
    centre ? '<circle cx="8" cy="8" r="3" fill="#fff"/>' : ""}</svg>`)}`;
const ICONS = { idle: ICON("#6b3e00", false), turn: ICON("#e8590c", true) };

function setFavicon(turn) {
  let link = document.querySelector('link[rel="icon"]');
  if (!link) link = document.head.appendChild(el("link", { rel: "icon" }));
  link.setAttribute("href", turn ? ICONS.turn : ICONS.idle);
  link.dataset.turn = turn ? "yes" : "no";
}

/** The opt-in browser notification on your turn: asked for once, remembered per browser. */
const notifications = {
  supported: () => typeof Notification !== "undefined",
  wanted: () => notifications.supported() && Notification.permission === "granted" && localStorage.getItem("meeple.notify") === "yes",
  control() {
    if (!notifications.supported()) return null;
    const box = el("input", { type: "checkbox", id: "notify-turn" });
    box.checked = notifications.wanted();
    box.addEventListener("change", async () => {
      if (!box.checked) return localStorage.setItem("meeple.notify", "no");
      const permission = await Notification.requestPermission();
      box.checked = permission === "granted";
      localStorage.setItem("meeple.notify", box.checked ? "yes" : "no");
      if (!box.checked) notify("The browser does not allow notifications for this page.", "error");
    });
    return el("label", { class: "inline small notify-turn", for: "notify-turn" }, box, " Notify me when it is my turn");
  },
};

export function showGame(main, gameId) {
  const page = new GamePage(main, gameId);
  page.start().catch((error) => fill(main, el("h1", { text: "Game not found" }),
    el("p", { class: "error", text: problemText(error) }), el("p", {}, el("a", { href: "#/", text: "Back to the games" }))));
  return () => page.stop();
}

class GamePage {
  constructor(main, gameId) {
    this.main = main;
    this.id = gameId;
    this.path = `/games/${encodeURIComponent(gameId)}`;
    this.viewer = seats.get(gameId); // {token, seat, holder} or null: a spectator
    this.summary = null;
    this.live = null; // the latest GET .../state answer
    this.legal = null;
    this.timeline = [];
    this.position = null; // null: the live head; else the scrubber's event
    this.shown = null; // the state answer on the table now
    this.stream = null;
    this.refreshing = null;
    this.again = false;
    this.stopped = false;
    this.scrubRequest = 0;
    this.botChoices = {}; // the bot forms' choices, kept across redraws
    this.rotated = null; // {seat, token} after "New token": its link is shown once
    this.refusedNote = null; // why this tab's seat token was dropped, once the API refused it
    this.onKey = (event) => this.key(event);
    this.auditing = false; // an audit request is out
    this.auditAgain = false; // events came while it was out
    this.auditTimer = null; // the next audit, due when AUDIT_INTERVAL_MS has passed
    this.auditedAt = 0;
  }

  // -- building the page ---------------------------------------------------------------

  async start() {
    this.summary = await api(this.path, { token: this.token });
    try {
      this.renderer = await import(`/static/games/${encodeURIComponent(this.summary.ruleset)}.js`);
    } catch (error) {
      // The rest of the page (seats, play, replay, raw JSON) works without a drawing.
      this.renderer = { render: () => { throw new Error(`no drawing of ${this.summary.ruleset} in this build (${error.message})`); } };
    }
    if (this.renderer.components) {
      // Optional (games/README.md): the game's component tables, to name cards by id.
      this.components = await api(`/rulesets/${encodeURIComponent(this.summary.ruleset)}/components`).catch(() => null);
    }
    if (this.renderer.stylesheet) {
      const href = `/static/games/${this.summary.ruleset}.css`;
      if (!document.querySelector(`link[href="${href}"]`)) document.head.appendChild(el("link", { rel: "stylesheet", href }));
    }
    if (this.viewer && !this.viewer.holder && this.viewer.seat === null) await this.learnSeat();
    this.layout();
    await this.refresh(true);
    document.addEventListener("keydown", this.onKey);
    this.listen();
    this.loadAudit();
    this.loadBranches();
  }

  stop() {
    this.stopped = true;
    document.title = "Meeple Ledger";
    setFavicon(false);
    document.removeEventListener("keydown", this.onKey);
    if (this.stream) this.stream.close();
    clearTimeout(this.auditTimer);
    if (this.analysis) this.analysis.stop();
  }

  get token() {
    return this.viewer ? this.viewer.token : null;
  }

  /** The seat this page acts and looks for: a seat token's own; a branch holder's choice
   * (by default whoever the game waits for); null for a spectator. */
  get seat() {
    if (!this.viewer) return null;
    if (!this.viewer.holder) return this.viewer.seat;
    if (this.holderSeat !== undefined && this.holderSeat !== null) return this.holderSeat;
    const toAct = this.summary.status.to_act || [];
    return toAct.length ? toAct[0] : 0;
  }

  async learnSeat() {
    try {
      const legal = await api(`${this.path}/legal-actions`, { token: this.token });
      this.viewer.seat = legal.seat;
      seats.set(this.id, this.viewer);
    } catch (error) {
      notify(`That token is not a seat of this game: ${problemText(error)}`, "error");
      seats.forget(this.id);
      this.viewer = null;
    }
  }

  layout() {
    const s = this.summary;
    this.statusLine = el("p", { class: "status-line", aria: { live: "polite" } });
    this.lastMoveLine = el("p", { class: "last-move", aria: { live: "polite" }, hidden: true });
    this.table = el("div", { class: `table table-${s.ruleset}`, data: { ruleset: s.ruleset } });
    this.raw = el("pre", { class: "raw", tabindex: 0, aria: { label: "The state as JSON" } });
    this.seatsBox = el("div", { class: "seats-box" });
    this.viewerBox = el("div", { class: "viewer-box" });
    this.playBox = el("div", { class: "play-box" });
    this.liveBadge = el("span", { class: "badge live-badge", text: "connecting" });
    this.scrubber = el("input", { type: "range", id: "scrubber", min: 1, max: s.version, value: s.version, step: 1,
      aria: { label: "Event to show" } });
    this.scrubLabel = el("output", { for: "scrubber", class: "scrub-label" });
    this.chartBox = el("div", { class: "chart-box" });
    this.log = el("ol", { class: "event-log", aria: { label: "Event log" } });
    this.auditBox = el("div", { class: "audit-box", text: "Checking…" });
    this.branchBox = el("div", { class: "branch-box" });
    this.reseed = el("input", { type: "checkbox", id: "reseed" });
    this.branchButton = el("button", { type: "button", id: "branch-here", text: "Branch from here" });
    this.branchNote = el("p", { class: "muted small", aria: { live: "polite" } });
    const button = (text, label, action) => {
      const b = el("button", { type: "button", class: "secondary", text, aria: { label } });
      b.addEventListener("click", action);
      return b;
    };
    this.scrubber.addEventListener("input", () => this.scrubTo(Number(this.scrubber.value)));
    this.log.addEventListener("click", (event) => {
      const target = event.target.closest("[data-seq]");
      if (target) this.scrubTo(Number(target.dataset.seq));
    });
    this.branchButton.addEventListener("click", () => this.branch());
    this.table.addEventListener("click", (event) => this.chooseOnBoard(event));
    this.lastMoveLine.addEventListener("click", (event) => {
      const target = event.target.closest("[data-seq]");
      if (target) this.scrubTo(Number(target.dataset.seq));
    });
    this.analysis = new AnalysisPanel(this);
    const rawToggle = el("details", { class: "raw-toggle" }, el("summary", { text: "Raw JSON" }), this.raw);

    fill(
      this.main,
      el("h1", {}, `${words(s.ruleset)} `, el("span", { class: "muted game-id", text: s.id })),
      this.statusLine,
      this.lastMoveLine,
      el(
        "div",
        { class: "game-grid" },
        // The side comes first: on a phone the Play panel sits above the table (and folds
        // away), on a desktop the side stays in view beside it (app.css).
        el("aside", { class: "side", aria: { label: "Play, seats and the timeline" } },
          el("details", { class: "panel play-panel", open: true },
            el("summary", {}, el("h2", { id: "play-title", text: "Play" })),
            el("section", { aria: { labelledby: "play-title" } }, this.playBox)),
          el("section", { class: "panel seats-panel" }, el("h2", {}, "Seats ", this.liveBadge), this.seatsBox, this.viewerBox),
          el("section", { class: "panel timeline-panel", aria: { labelledby: "log-title" } },
            el("h2", { id: "log-title", text: "Timeline" }), this.log)),
        el("section", { class: "table-area", aria: { labelledby: "table-title" } },
          el("h2", { id: "table-title", class: "visually-hidden", text: "The table" }), this.table, rawToggle),
      ),
      el(
        "section",
        { class: "panel replay", aria: { labelledby: "replay-title" } },
        el("h2", { id: "replay-title", text: "Replay" }),
        el("div", { class: "scrub" },
          button("First", "First event", () => this.scrubTo(1)),
          button("◀", "Previous event", () => this.step(-1)),
          this.scrubber,
          button("▶", "Next event", () => this.step(1)),
          button("Latest", "Latest event", () => this.scrubTo(this.summary.version)),
          this.scrubLabel),
        el("p", { class: "muted small", text: "Arrow keys step through the events; Home and End jump to the first and the latest." }),
        el("section", { aria: { labelledby: "chart-title" } }, el("h3", { id: "chart-title", text: "Scores" }), this.chartBox),
        el("section", { aria: { labelledby: "audit-title" } }, el("h3", { id: "audit-title", text: "Audit" }), this.auditBox),
      ),
      el(
        "section",
        { class: "panel whatif", aria: { labelledby: "whatif-title" } },
        el("h2", { id: "whatif-title", text: "What if" }),
        el("div", { class: "row" }, this.branchButton,
          el("label", { class: "inline", for: "reseed" }, this.reseed, " new luck after the branch point (reseed)")),
        this.branchNote,
        el("h3", { text: "Branches" }),
        this.branchBox,
        this.analysis.node,
      ),
    );
  }

  // -- following the game --------------------------------------------------------------

  /** Read what changed since the last look; one at a time, again if asked meanwhile. */
  async refresh(first = false) {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        const used = this.token; // a 401 counts only for the token it was read with
        try {
          await this.readGame(first);
        } catch (error) {
          if (error.status === 401 && this.viewer && !this.viewer.holder && this.viewer.token === used) {
            this.tokenRefused(error);
            this.again = true; // read again, as a spectator
          } else notify(problemText(error), "error");
        }
        first = false;
      } while (this.again && !this.stopped);
    })();
    try {
      await this.refreshing;
    } finally {
      this.refreshing = null;
    }
  }

  async readGame(first) {
    const before = this.summary.version;
    this.summary = await api(this.path, { token: this.token });
    if (!first && this.summary.version === before && this.live) return;
    const seat = this.seat;
    const bySeat = this.viewer && (this.viewer.holder || this.viewer.app);
    const statePath = bySeat ? `${this.path}/seats/${seat}/state` : `${this.path}/state`;
    const [live, legal] = await Promise.all([
      api(statePath, { token: this.token }),
      this.viewer && !this.summary.status.finished
        ? this.legalActions(bySeat ? `${this.path}/seats/${seat}/legal-actions` : `${this.path}/legal-actions`)
        : Promise.resolve(null),
    ]);
    this.live = live;
    this.legal = legal;
    await this.readTimeline();
    const atHead = this.position === null || this.position >= this.scrubberMax;
    this.scrubberMax = this.summary.version;
    this.scrubber.max = String(this.summary.version);
    if (atHead) {
      this.position = null;
      this.scrubber.value = String(this.summary.version);
      this.show(live);
    } else {
      this.drawReplay();
    }
    if (!first) this.auditSoon();
    this.drawStatus();
    this.drawLastMoves();
    this.turnAlert();
    this.drawSeats();
    this.drawViewer();
    this.drawPlay();
    if (this.summary.status.finished && this.stream) {
      this.stream.close();
      this.stream = null;
      this.liveBadge.textContent = "finished";
    }
  }

  /** The seat's legal actions, every page of them when the API pages the list
   * (`next_cursor`), so the controls choose among all of them. */
  async legalActions(path) {
    const legal = await api(path, { token: this.token });
    let cursor = legal.next_cursor;
    for (let pages = 1; cursor && pages < MAX_ACTION_PAGES; pages += 1) {
      const page = await api(`${path}?cursor=${encodeURIComponent(cursor)}&limit=${ACTION_PAGE}`, { token: this.token });
      legal.actions.push(...page.actions);
      cursor = page.next_cursor;
    }
    return legal;
  }

  async readTimeline() {
    let after = this.timeline.length ? this.timeline[this.timeline.length - 1].seq : 0;
    // Undo and redo append events; nothing earlier changes, so reading on is enough.
    while (after < this.summary.version) {
      const page = await api(`${this.path}/timeline?after=${after}&limit=${TIMELINE_PAGE}`, { token: this.token });
      this.timeline.push(...page.events);
      for (const entry of page.events) this.log.appendChild(this.logEntry(entry));
      if (page.next_after === null || !page.events.length) break;
      after = page.next_after;
    }
  }

  /** The live stream (public: a page's EventSource sends no token); each message is only a
   * cue to read the game again, with this page's token. */
  listen() {
    if (this.summary.status.finished || this.stopped) {
      this.liveBadge.textContent = this.summary.status.finished ? "finished" : "";
      return;
    }
    const stream = new EventSource(`${this.path}/stream?after=${this.summary.version}`);
    this.stream = stream;
    const cue = () => this.refresh();
    for (const type of STREAM_EVENTS) stream.addEventListener(type, cue);
    stream.addEventListener("open", () => {
      this.liveBadge.textContent = "live";
      this.liveBadge.classList.add("on");
      // Anything between the first read and the stream's start is read now.
      this.refresh();
    });
    stream.addEventListener("error", () => {
      this.liveBadge.textContent = "reconnecting";
      this.liveBadge.classList.remove("on");
    });
  }

  // -- drawing -------------------------------------------------------------------------

  ctx(answer) {
    const ctx = { seat: answer.seat, players: this.summary.players, status: answer.status, ruleset: this.summary.ruleset };
    // The final result (scores, breakdown, ranking) belongs to the finished game's states only.
    ctx.result = answer.status && answer.status.finished && this.summary.result ? this.summary.result : null;
    if (this.renderer.components) ctx.components = this.components;
    return ctx;
  }

  show(answer) {
    this.shown = answer;
    const root = el("div", { class: "table-root" });
    try {
      this.renderer.render(root, answer, this.ctx(answer));
    } catch (error) {
      root.replaceChildren(el("p", { class: "error", text: `The table could not be drawn: ${error.message}` }));
    }
    this.table.replaceChildren(root);
    this.table.dataset.at = String(answer.version);
    if (answer === this.live) this.markLastMover();
    this.markChoosable();
    this.raw.textContent = JSON.stringify(answer.state, null, 2);
    this.drawReplay();
  }

  drawStatus() {
    const s = this.summary;
    const status = s.status;
    const parts = [`Round ${status.round}`, words(status.phase)];
    if (status.finished) {
      const ranking = (s.result && s.result.ranking) || [];
      const winners = (ranking[0] || []).map((seat) => s.players[seat]).join(" and ");
      if (winners) parts.push(`${winners} won`);
    } else if (status.waiting_for_players) {
      parts.push(`waiting for players: seat ${(status.open_seats || []).map((seat) => seat + 1).join(", ")} open`);
    } else if (status.awaiting_system) parts.push(`automatic step due: ${words(status.awaiting_system)}`);
    else if (status.to_act.length) parts.push(`${status.to_act.map((seat) => s.players[seat]).join(", ")} to act`);
    parts.push(`version ${s.version}`);
    this.statusLine.textContent = parts.join(" · ");
  }

  /** The last move of every seat but the viewer's, from the timeline: said in a line under
   * the header (the live region reads it out) and marked on the table (drawLastMoves). */
  lastMoves() {
    const moves = new Map();
    for (let i = this.timeline.length - 1; i >= 0 && moves.size < this.summary.players.length; i -= 1) {
      const entry = this.timeline[i];
      const seat = entry.actor ? entry.actor.seat : undefined;
      if (seat === undefined || seat === null || moves.has(seat)) continue;
      if (!["action", "undone", "redone"].includes(entry.type)) continue;
      moves.set(seat, entry);
    }
    if (this.seat !== null && !(this.viewer && this.viewer.holder)) moves.delete(this.seat);
    return [...moves.entries()].sort((a, b) => b[1].seq - a[1].seq);
  }

  drawLastMoves() {
    const moves = this.lastMoves();
    this.lastMoveLine.hidden = !moves.length;
    fill(this.lastMoveLine, moves.length ? el("strong", { text: moves.length > 1 ? "Last moves: " : "Last move: " }) : null,
      ...moves.map(([seat, entry], i) => el("span", { class: "last-move-entry" }, i ? " · " : "",
        el("span", { class: ["seat-dot", seatColor(seat)], aria: { hidden: "true" } }), " ",
        el("button", { type: "button", class: "link-like", data: { seq: entry.seq },
          title: `Show the table after event ${entry.seq}`, text: entry.summary || words(entry.type) }))));
  }

  /** On the live table, the area of the seat that moved last (but the viewer) is marked:
   * the renderers put data-seat on each seat's area (games/README.md). */
  markLastMover() {
    const moves = this.lastMoves();
    if (this.position !== null || !moves.length) return;
    const [seat, entry] = moves[0];
    for (const node of this.table.querySelectorAll(`[data-seat="${seat}"]`)) {
      node.classList.add("last-mover");
      if (node.matches(".seat-area")) {
        const note = el("p", { class: "last-move-note", text: `Last move: ${entry.summary || words(entry.type)}` });
        const heading = node.querySelector(":scope > h3");
        if (heading) heading.after(note);
        else node.prepend(note);
      }
    }
  }

  /** The tab's title and icon say when it is this seat's turn (whatever tab is in front);
   * a browser notification too, when the player asked for one and the tab is hidden. */
  turnAlert() {
    const s = this.summary;
    const mine = Boolean(this.viewer && !s.status.finished && this.legal && this.legal.actions.length
      && (s.status.to_act || []).includes(this.seat));
    const title = `${words(s.ruleset)} · Meeple Ledger`;
    document.title = mine ? `▶ Your turn · ${title}` : title;
    setFavicon(mine);
    if (mine && !this.wasMyTurn && document.hidden && notifications.wanted()) {
      new Notification(`Your turn: ${words(s.ruleset)}`, { body: this.lastMoveLine.textContent || "It is your turn.", tag: this.id });
    }
    this.wasMyTurn = mine;
  }

  drawSeats() {
    const s = this.summary;
    const series = scoreSeries(this.timeline, s.players.length);
    const now = scoresAt(series, s.version);
    const ctx = { players: s.players };
    fill(this.seatsBox, el("ul", { class: "seat-list" }, s.players.map((name, seat) => el(
      "li",
      { class: ["seat-line", seatColor(seat)], data: { seat } },
      el("span", { class: ["seat-dot", seatColor(seat)], aria: { hidden: "true" } }),
      el("span", { class: "seat-name", text: seatName(ctx, seat) }),
      seat === this.seat && this.viewer ? el("span", { class: "badge badge-you", text: this.viewer.holder ? "playing" : "you" }) : null,
      s.status.to_act.includes(seat) ? el("span", { class: "badge badge-to-act", text: "to act" }) : null,
      el("span", { class: "seat-score", text: now[seat] === null ? "" : `${now[seat]} pts` }),
    ))));
  }

  drawViewer() {
    const s = this.summary;
    if (!this.viewer) {
      const input = el("input", { id: "seat-token", type: "password", autocomplete: "off", required: true });
      const form = el("form", { class: "token-form" },
        el("p", { class: "muted small", text: "You are watching as a spectator. Hold a seat? Enter its token (it stays in this tab)." }),
        el("label", { class: "field", for: "seat-token" }, el("span", { text: "Seat token" }), input),
        el("button", { type: "submit", text: "Take my seat" }));
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        this.viewer = { token: input.value.trim(), seat: null, holder: false };
        this.refusedNote = null;
        await this.learnSeat();
        if (this.viewer) seats.set(this.id, this.viewer);
        this.resetAndRead();
      });
      // A seat still open may be joined from here as from the lobby.
      const open = s.status.finished ? [] : s.status.open_seats || [];
      const refused = this.refusedNote ? el("p", { class: "error small token-refused", text: this.refusedNote }) : null;
      fill(this.viewerBox, refused, form, open.length ? el("div", { class: "join-box" },
        el("p", { class: "small", text: "This game waits for players: take an open seat." }), open.map((seat) => joinForm(this.id, seat, () => {
          this.viewer = seats.get(this.id);
          this.refusedNote = null;
          this.resetAndRead();
        }))) : null);
      return;
    }
    const leave = el("button", { type: "button", class: "secondary", text: "Watch as a spectator" });
    leave.addEventListener("click", () => {
      seats.forget(this.id);
      this.viewer = null;
      this.resetAndRead();
    });
    if (this.viewer.holder) {
      const select = el("select", { id: "play-as" },
        el("option", { value: "", text: "whoever is to act" }),
        s.players.map((name, seat) => el("option", { value: String(seat), text: name })));
      select.value = this.holderSeat === undefined || this.holderSeat === null ? "" : String(this.holderSeat);
      select.addEventListener("change", () => {
        this.holderSeat = select.value === "" ? null : Number(select.value);
        this.resetAndRead();
      });
      fill(this.viewerBox, el("p", { class: "small", text: "You hold this branch: you play every seat and may undo anything after the branch point." }),
        el("label", { class: "field", for: "play-as" }, el("span", { text: "Play as" }), select), leave);
      return;
    }
    const open = s.status.finished || started(this.timeline) ? [] : s.status.open_seats || [];
    fill(this.viewerBox, el("p", { class: "small" }, "You play ", el("strong", { text: s.players[this.viewer.seat] }),
      this.viewer.app ? ` (seat ${this.viewer.seat + 1}); this device holds the seat ("My games" in the lobby).`
        : ` (seat ${this.viewer.seat + 1}); your token stays in this tab.`),
      this.rotated && this.rotated.seat === this.viewer.seat ? rotatedLink(this.id, this.rotated.seat, this.rotated.token) : null,
      seatControls(this, (what, seat, token) => this.seatChanged(what, seat, token)),
      open.length ? botForms(this, open, this.botChoices, (seated) => {
        notify(`Seat ${seated.seat + 1} is now ${seated.name}'s, a bot: it plays its turns by itself.`);
        this.refresh();
      }) : null,
      leave);
  }

  /** The API no longer accepts this tab's seat token (a new one was issued, or the seat was
   * left, in another tab or client): say so, forget it, and watch as a spectator. */
  tokenRefused(error) {
    const seat = this.viewer.seat;
    seats.forget(this.id);
    this.viewer = null;
    this.rotated = null;
    this.live = null;
    const which = seat === null || seat === undefined ? "" : ` for seat ${seat + 1}`;
    this.refusedNote = `This tab's token${which} is no longer accepted (a new token was issued, or the seat was left): you watch as a spectator now. ${problemText(error)}`;
    notify(this.refusedNote, "error");
  }

  /** After "Leave seat" (the tab watches as a spectator; the seat is open again) or "New
   * token" (the tab plays on with the new token, which seat.js has stored). */
  seatChanged(what, seat, token) {
    if (what === "left") {
      this.viewer = null;
      this.rotated = null;
      notify(`You left seat ${seat + 1}: it is open again, and your old link no longer works.`);
    } else {
      this.rotated = { seat, token };
      notify(`Seat ${seat + 1} has a new token; the old one no longer works.`);
    }
    this.resetAndRead();
  }

  resetAndRead() {
    this.live = null;
    this.refresh(true).then(() => this.drawViewer());
  }

  /** Board elements whose data-<parameter> holds a value the seat may choose now are
   * marked, and a click on one fills the Play form (the dropdowns stay the keyboard's way). */
  markChoosable() {
    for (const node of this.table.querySelectorAll(".choosable")) node.classList.remove("choosable");
    const actions = this.position === null && this.controls && this.legal ? this.legal.actions : [];
    if (!actions.length) return;
    const values = choosableValues(actions);
    for (const [name, offered] of values) {
      const attribute = `data-${name.replace(/_/g, "-")}`;
      for (const node of this.table.querySelectorAll(`[${attribute}]`)) {
        if (offered.has(node.getAttribute(attribute))) node.classList.add("choosable");
      }
    }
  }

  /** A click on the table: the innermost choosable element's parameter is chosen. */
  chooseOnBoard(event) {
    const node = event.target.closest(".choosable");
    if (!node || !this.controls || this.position !== null) return;
    for (const attribute of node.getAttributeNames()) {
      if (!attribute.startsWith("data-")) continue;
      const name = attribute.slice(5).replace(/-/g, "_");
      if (this.controls.choose(name, node.getAttribute(attribute))) {
        const names = (this.legal && this.legal.names) || {};
        const value = node.getAttribute(attribute);
        notify(`Chosen: ${names[value] || words(value)}. Press Play to play it.`);
        return;
      }
    }
  }

  drawPlay() {
    this.controls = null;
    const s = this.summary;
    if (!this.viewer) return fill(this.playBox, el("p", { class: "muted", text: "Spectators watch; seats play." }));
    if (s.status.finished) return fill(this.playBox, el("p", { class: "muted", text: "The game is over." }));
    const actions = (this.legal && this.legal.actions) || [];
    const box = el("div", { class: "controls" });
    if (this.position !== null) {
      box.appendChild(el("p", { class: "muted", text: "You are looking at an earlier event; go to the latest one to play." }));
    } else if (actions.length) {
      const free = new Set(((this.legal.free_actions || {}).types || []).map((t) => t.type));
      this.controls = playControls(box, actions, (action) => this.post(action), free, partNames(this.legal), this.legal.names || {});
    } else if (s.status.waiting_for_players) {
      box.appendChild(el("p", { class: "muted", text: "Waiting for players to take the open seats: the game starts when every seat is taken." }));
    } else if (s.status.awaiting_system) {
      box.appendChild(el("p", { class: "muted", text: `Waiting for an automatic step: ${words(s.status.awaiting_system)}.` }));
    } else {
      const waiting = s.status.to_act.map((seat) => s.players[seat]).join(", ");
      box.appendChild(el("p", { class: "muted", text: waiting ? `Waiting for ${waiting}.` : "Nothing to play now." }));
    }
    fill(this.playBox, box, this.undoRedo(), notifications.control());
    this.markChoosable();
  }

  /** Undo and redo, enabled only when the legal-actions answer says the service would take
   * them now (`undo`, `redo`: allowed, the steps to send, or the refusal's code), so the
   * page never offers what would be refused. */
  undoRedo() {
    const offers = this.legal || {};
    const button = (what, text) => {
      const offer = offers[what] || { allowed: false, steps: null, code: null };
      const b = el("button", { type: "button", class: "secondary", id: what, text,
        title: offer.allowed ? null : `Not now${offer.code ? ` (${words(offer.code)})` : ""}` });
      b.disabled = !offer.allowed || this.position !== null;
      b.addEventListener("click", () => this.move(what, offer.steps || 1));
      return b;
    };
    return el("div", { class: "row undo-redo" }, button("undo", "Undo"), button("redo", "Redo"));
  }

  async post(action) {
    const seat = this.seat;
    const bySeat = this.viewer.holder || this.viewer.app;
    const path = bySeat ? `${this.path}/seats/${seat}/actions` : `${this.path}/actions`;
    try {
      await api(path, { method: "POST", token: this.token, body: action,
        headers: { "If-Match": `"${this.legal.version}"`, "Idempotency-Key": idempotencyKey() } });
      notify(`Played: ${words(action.type)}`);
    } catch (error) {
      notify(error.code === "version_conflict" ? "The game moved on before your move arrived; choose again." : problemText(error), "error");
    }
    await this.refresh();
  }

  async move(what, steps) {
    try {
      await api(`${this.path}/${what}?steps=${steps}`, { method: "POST", token: this.token,
        headers: { "If-Match": `"${this.summary.version}"`, "Idempotency-Key": idempotencyKey() } });
      notify(what === "undo" ? "Undone." : "Redone.");
    } catch (error) {
      notify(problemText(error), "error");
    }
    await this.refresh();
  }

  // -- replay --------------------------------------------------------------------------

  logEntry(entry) {
    const who = entry.actor && entry.actor.seat !== undefined ? this.summary.players[entry.actor.seat] : null;
    return el("li", { data: { seq: entry.seq }, class: entry.actor && entry.actor.seat !== undefined ? seatColor(entry.actor.seat) : "system" },
      el("button", { type: "button", class: "log-line", data: { seq: entry.seq }, title: `Show the table after event ${entry.seq}` },
      el("span", { class: "seq", text: String(entry.seq) }),
      el("span", { class: "round", text: entry.round === null || entry.round === undefined ? "" : `R${entry.round}` }),
      el("span", { class: "summary", text: entry.summary || words(entry.type) }),
      who ? null : el("span", { class: "muted", text: entry.type === "system" ? " (automatic)" : "" })));
  }

  get at() {
    return this.position === null ? this.summary.version : this.position;
  }

  step(delta) {
    this.scrubTo(this.at + delta);
  }

  key(event) {
    const target = event.target;
    if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName) && target !== this.scrubber) return;
    if (target === this.scrubber) return; // the range input steps by itself
    const moves = { ArrowLeft: -1, ArrowRight: 1 };
    if (event.key in moves) {
      event.preventDefault();
      this.step(moves[event.key]);
    } else if (event.key === "Home" && target.tagName !== "BUTTON") {
      this.scrubTo(1);
    } else if (event.key === "End" && target.tagName !== "BUTTON") {
      this.scrubTo(this.summary.version);
    }
  }

  async scrubTo(seq) {
    const version = this.summary.version;
    const at = Math.min(Math.max(1, Math.round(seq)), version);
    this.scrubber.value = String(at);
    const ticket = (this.scrubRequest += 1);
    if (at === version) {
      this.position = null;
      if (this.live) this.show(this.live);
      this.drawPlay();
      return;
    }
    this.position = at;
    this.drawReplay();
    this.drawPlay();
    try {
      const answer = await api(`${this.path}/state?at=${at}`, { token: this.token });
      if (ticket === this.scrubRequest) this.show(answer);
    } catch (error) {
      if (ticket === this.scrubRequest) notify(problemText(error), "error");
    }
  }

  drawReplay() {
    const at = this.at;
    const version = this.summary.version;
    const entry = this.timeline.find((e) => e.seq === at);
    this.scrubLabel.textContent = `Event ${at} of ${version}${entry ? `: ${entry.summary}` : ""}`;
    this.scrubber.setAttribute("aria-valuetext", this.scrubLabel.textContent);
    for (const node of this.log.querySelectorAll("li.current")) node.classList.remove("current");
    const current = this.log.querySelector(`li[data-seq="${at}"]`);
    if (current) {
      current.classList.add("current");
      const box = this.log; // positioned, so offsetTop is within the log
      const top = current.offsetTop;
      if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - current.offsetHeight) box.scrollTop = top - box.clientHeight / 2;
    }
    const series = scoreSeries(this.timeline, this.summary.players.length);
    this.chartBox.replaceChildren(scoreChart(series, { players: this.summary.players }, version, at));
    this.branchButton.textContent = `Branch from event ${at}`;
    this.analysis.update();
  }

  /** Check the log again after new events: at once when the last check is
   * AUDIT_INTERVAL_MS old, else when it is (the events meanwhile share that check); one
   * request at a time. A finished game is checked at once, so its seed is shown checked. */
  auditSoon() {
    if (this.stopped) return;
    if (this.auditing) {
      this.auditAgain = true;
      return;
    }
    const finished = this.summary.status.finished;
    if (this.auditTimer !== null && !finished) return; // one is due already
    clearTimeout(this.auditTimer);
    const wait = finished ? 0 : Math.max(0, this.auditedAt + AUDIT_INTERVAL_MS - Date.now());
    this.auditTimer = setTimeout(() => {
      this.auditTimer = null;
      if (!this.stopped) this.loadAudit();
    }, wait);
  }

  async loadAudit() {
    this.auditing = true;
    this.auditedAt = Date.now();
    try {
      const audit = await api(`${this.path}/audit`, { token: this.token });
      const lines = [
        [audit.ok ? "Sound" : "Broken", audit.ok ? `the hash chain of ${audit.events} events holds and every event folds again`
          : `at event ${audit.seq}: ${audit.reason}`],
        ["Automatic steps", `${audit.system_steps_checked} recomputed and equal`],
        ["Seed", audit.seed_checked ? "revealed and matching its commitment" : audit.finished ? "not checked" : "sealed until the game ends"],
      ];
      if (audit.source_checked) lines.push(["Branch", "its first events match the source game"]);
      fill(this.auditBox, el("p", { class: ["verdict", audit.ok ? "ok" : "bad"], text: audit.ok ? "✔ The log is sound." : "✘ The log does not check out." }),
        el("dl", { class: "kv" }, lines.map(([term, text]) => [el("dt", { text: term }), el("dd", { text })]).flat()));
    } catch (error) {
      fill(this.auditBox, el("p", { class: "error", text: problemText(error) }));
    } finally {
      this.auditing = false;
      if (this.auditAgain) {
        this.auditAgain = false;
        this.auditSoon();
      }
    }
  }

  async loadBranches() {
    try {
      fill(this.branchBox, await branchTree(this.id, this.token));
    } catch (error) {
      fill(this.branchBox, el("p", { class: "error", text: problemText(error) }));
    }
  }

  async branch() {
    const at = this.at;
    this.branchButton.disabled = true;
    try {
      const made = await api(`${this.path}/branches`, { method: "POST", token: this.token,
        body: { at, reseed: this.reseed.checked } });
      seats.set(made.id, { token: made.token, seat: null, holder: true });
      notify(made.notice || `Branched from event ${made.at}: you hold every seat of the branch.`);
      window.location.hash = `#/games/${encodeURIComponent(made.id)}`;
    } catch (error) {
      this.branchNote.textContent = problemText(error);
    } finally {
      this.branchButton.disabled = false;
    }
  }
}
