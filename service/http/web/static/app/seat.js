// A seat's own controls on a game's page (docs/web.md, "A seat's controls"): leave the seat
// before the game starts, rotate the seat's token, and give an open seat to a bot. Each
// posts to the lobby API with the seat's token in the Authorization header only; a refusal
// (problem+json) is said in words beside the control.

import { api, seatLink, seats } from "./api.js";
import { el } from "../games/common.js";
import { problemText } from "./ui.js";
import { AGENTS, MAX_BOT_PLAYOUTS } from "./lobby.js";

/** Event types after which the game has started (the lobby is closed then). */
const PLAYED = new Set(["action", "system", "undone", "redone"]);

/** Whether the timeline shows a move: before one, a seat may still be left or given. */
export function started(timeline) {
  return timeline.some((entry) => PLAYED.has(entry.type));
}

/** What a refusal of a seat change means, in words, with the API's own sentence and code. */
function refusal(error) {
  const code = error && error.code;
  const said = problemText(error);
  if (code === "game_started") return `The game has started: seats are fixed now. ${said}`;
  if (code === "seat_taken") return `Someone took that seat first. ${said}`;
  if (error && error.status === 401) return `This tab's token is no longer accepted for the seat. ${said}`;
  if (error && error.status === 429) return `Too many seat changes from here; try again in a minute. ${said}`;
  return said;
}

/** A line of a seat's controls: "Leave seat N" (before the start) and "New token".
 * `page` gives `path`, `id`, `token`, `viewer`, `summary` and `timeline`; `changed(what)` is
 * called after a change, with "left" or "rotated". */
export function seatControls(page, changed) {
  const seat = page.viewer.seat;
  const note = el("p", { class: "error small seat-note", role: "status", aria: { live: "polite" } });
  const row = el("div", { class: "row seat-controls" });
  const finished = page.summary.status.finished;
  if (!finished && !started(page.timeline)) {
    const leave = el("button", { type: "button", class: "secondary", id: "leave-seat", text: `Leave seat ${seat + 1}` });
    leave.addEventListener("click", async () => {
      leave.disabled = true;
      note.textContent = "";
      try {
        await api(`${page.path}/seats/${seat}/leave`, { method: "POST", token: page.token });
        seats.forget(page.id);
        changed("left", seat);
      } catch (error) {
        note.textContent = refusal(error);
        leave.disabled = false;
      }
    });
    row.appendChild(leave);
  }
  const rotate = el("button", { type: "button", class: "secondary", id: "rotate-token", text: "New token" });
  rotate.addEventListener("click", async () => {
    rotate.disabled = true;
    note.textContent = "";
    try {
      const renewed = await api(`${page.path}/seats/${seat}/token`, { method: "POST", token: page.token });
      // The new token replaces the old one in this tab; the old one stops working at once.
      page.viewer = { token: renewed.token, seat, holder: false };
      seats.set(page.id, page.viewer);
      changed("rotated", seat, renewed.token);
    } catch (error) {
      note.textContent = refusal(error);
      rotate.disabled = false;
    }
  });
  row.appendChild(rotate);
  return el("div", { class: "seat-box" }, row, note);
}

/** The link of a rotated token, to keep (it is shown once, like a new game's links). */
export function rotatedLink(gameId, seat, token) {
  const link = seatLink(gameId, token);
  const input = el("input", { readonly: true, value: link, id: "rotated-link", class: "link",
    aria: { label: `New link for seat ${seat + 1}` } });
  return el("div", { class: "rotated" },
    el("p", { class: "small", role: "status", text: `Seat ${seat + 1} has a new token: the old one no longer works. This tab uses the new one; keep its link to play elsewhere.` }),
    input);
}

/** Give open seats to bots: one form per open seat (POST .../seats/{seat}/bot), with the
 * agents the API accepts and, for MCTS, its playouts a move. Any seat of the game may do it
 * before the game starts. `kept` remembers choices across redraws. */
export function botForms(page, open, kept, given) {
  return el("div", { class: "bot-box" },
    el("p", { class: "small", text: "Nobody coming? Give an open seat to a bot: it plays its turns by itself." }),
    open.map((seat) => botForm(page, seat, kept, given)));
}

function botForm(page, seat, kept, given) {
  const choice = kept[seat] || (kept[seat] = { agent: "greedy", playouts: "100" });
  const agentId = `bot-agent-${seat}`;
  const playoutsId = `bot-playouts-${seat}`;
  const agent = el("select", { id: agentId, name: "agent" }, AGENTS.map(([value, text]) => el("option", { value, text })));
  agent.value = choice.agent;
  const playouts = el("input", { id: playoutsId, name: "playouts", type: "number", min: 1, max: MAX_BOT_PLAYOUTS,
    step: 1, required: true, value: choice.playouts });
  const playoutsField = el("label", { class: "field", for: playoutsId }, el("span", { text: "Playouts a move" }), playouts);
  const said = el("span", { class: "error small", aria: { live: "polite" } });
  const button = el("button", { type: "submit", text: `Give seat ${seat + 1} to a bot` });
  const show = () => {
    playoutsField.hidden = agent.value !== "mcts";
    playouts.disabled = agent.value !== "mcts";
  };
  agent.addEventListener("change", () => {
    choice.agent = agent.value;
    show();
  });
  playouts.addEventListener("input", () => {
    choice.playouts = playouts.value;
  });
  show();
  const form = el("form", { class: "bot-seat", data: { seat } },
    el("label", { class: "field", for: agentId }, el("span", { text: `Bot for seat ${seat + 1}` }), agent),
    playoutsField, button, said);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const bot = { agent: agent.value };
    if (agent.value === "mcts") bot.playouts = Number(playouts.value);
    button.disabled = true;
    said.textContent = "";
    try {
      const seated = await api(`${page.path}/seats/${seat}/bot`, { method: "POST", token: page.token, body: bot });
      delete kept[seat];
      given(seated);
    } catch (error) {
      said.textContent = refusal(error);
      button.disabled = false;
    }
  });
  return form;
}
