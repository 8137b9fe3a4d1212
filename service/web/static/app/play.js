// Play controls built from a seat's legal actions (GET .../legal-actions), which are every
// concrete action the seat may post now. The controls group them by `type`, then ask for
// each parameter in turn, offering only the values still possible given the ones chosen
// before (cascading choices), so whatever is posted is one of the listed actions, verbatim.

import { el, words } from "../games/common.js";
import { fill, showValue } from "./ui.js";

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The parameter names of actions of one type, in the order the API lists them. */
export function parameterNames(actions) {
  const names = [];
  for (const action of actions) for (const name of Object.keys(action)) if (name !== "type" && !names.includes(name)) names.push(name);
  return names;
}

/** The distinct values `name` still takes among `actions`. */
export function valuesOf(actions, name) {
  const values = [];
  for (const action of actions) if (!values.some((v) => same(v, action[name]))) values.push(action[name]);
  return values;
}

/** Draw the controls into `box`; `post(action)` is called with the chosen action. */
export function playControls(box, actions, post) {
  const byType = new Map();
  for (const action of actions) {
    if (!byType.has(action.type)) byType.set(action.type, []);
    byType.get(action.type).push(action);
  }
  const typeSelect = el("select", { id: "play-type", name: "type" },
    [...byType].map(([type, list]) => el("option", { value: type, text: `${words(type)} (${list.length})` })));
  const params = el("div", { class: "params" });
  const preview = el("code", { class: "action-preview" });
  const play = el("button", { type: "submit", class: "primary", text: "Play" });
  const form = el("form", { class: "play", aria: { label: "Your move" } },
    el("label", { class: "field", for: "play-type" }, el("span", { text: "Action" }), typeSelect),
    params, el("p", { class: "muted small" }, "Posts ", preview), play);
  const chosen = {};
  let action = null;

  const draw = (from) => {
    const list = byType.get(typeSelect.value) || [];
    const names = parameterNames(list);
    // Keep the choices before the one that changed; forget those after it.
    for (const name of names.slice(from)) delete chosen[name];
    fill(params);
    let left = list;
    names.forEach((name, index) => {
      const values = valuesOf(left, name);
      if (!values.some((v) => same(v, chosen[name]))) chosen[name] = values[0];
      const id = `play-${name}`;
      if (values.length === 1) {
        params.appendChild(el("div", { class: "field fixed" }, el("span", { text: words(name) }),
          el("output", { id, text: showValue(values[0]) })));
      } else {
        const select = el("select", { id, name },
          values.map((value, i) => el("option", { value: String(i), text: showValue(value) })));
        select.value = String(values.findIndex((v) => same(v, chosen[name])));
        select.addEventListener("change", () => {
          chosen[name] = values[Number(select.value)];
          draw(index + 1);
        });
        params.appendChild(el("label", { class: "field", for: id }, el("span", { text: words(name) }), select));
      }
      left = left.filter((a) => same(a[name], chosen[name]));
    });
    action = left[0] || null;
    preview.textContent = action ? JSON.stringify(action) : "";
    play.disabled = !action;
  };

  typeSelect.addEventListener("change", () => {
    for (const name of Object.keys(chosen)) delete chosen[name];
    draw(0);
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!action) return;
    play.disabled = true;
    try {
      await post(action);
    } finally {
      play.disabled = false;
    }
  });
  draw(0);
  fill(box, form);
}
