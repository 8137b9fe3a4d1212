// Play controls built from a seat's legal actions (GET .../legal-actions), which are every
// concrete action the seat may post now. The controls group them by `type`, then ask for
// each parameter in turn, offering only the values still possible given the ones chosen
// before (cascading choices), so whatever is posted is one of the listed actions, verbatim.
// A parameter whose every value is a list of one length (a plan: one count per row) or an
// object with one set of keys is asked part by part, each part cascading like the rest.

import { el, words } from "../games/common.js";
import { fill, showValue } from "./ui.js";

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const MISSING = Symbol("missing");

/** A parameter's value in an action: `path` is [key] or [key, index-or-part]. */
function valueAt(action, path) {
  let value = action;
  for (const step of path) {
    if (value === null || typeof value !== "object" || !(step in value)) return MISSING;
    value = value[step];
  }
  return value;
}

/** The parameters of actions of one type, in the order the API lists them: each a path. */
export function parameterPaths(actions) {
  const names = [];
  for (const action of actions) for (const name of Object.keys(action)) if (name !== "type" && !names.includes(name)) names.push(name);
  const paths = [];
  for (const name of names) {
    const values = actions.map((a) => (name in a ? a[name] : MISSING));
    const lists = values.every((v) => Array.isArray(v) && v.length === values[0].length && v.every((x) => x === null || typeof x !== "object"));
    const keys = (v) => (v && typeof v === "object" && !Array.isArray(v) ? Object.keys(v).sort().join(",") : null);
    const records = values.every((v) => keys(v) !== null && keys(v) === keys(values[0])
      && Object.values(v).every((x) => x === null || typeof x !== "object"));
    if (lists && values[0].length > 1) values[0].forEach((_, i) => paths.push([name, i]));
    else if (records && Object.keys(values[0]).length > 1) Object.keys(values[0]).forEach((k) => paths.push([name, k]));
    else paths.push([name]);
  }
  return paths;
}

/** The distinct values at `path` still possible among `actions`. */
export function valuesAt(actions, path) {
  const values = [];
  for (const action of actions) {
    const value = valueAt(action, path);
    if (!values.some((v) => v === value || (v !== MISSING && value !== MISSING && same(v, value)))) values.push(value);
  }
  return values;
}

/** A parameter's value as a person reads it: ids in words, a list as its items (an order or
 * a path keeps its order), an object as its parts ("Artifacts 2, Water 1"); never JSON. */
export function valueText(value, names = {}) {
  if (Array.isArray(value)) {
    if (!value.length) return "none";
    const nested = value.some((item) => item !== null && typeof item === "object");
    return value.map((item) => valueText(item, names)).join(nested ? "; " : ", ");
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (!entries.length) return "none";
    return entries.map(([key, part]) => `${names[key] || words(key)} ${typeof part === "boolean" ? (part ? "yes" : "no") : valueText(part, names)}`).join(", ");
  }
  // The table's own name for an id (legal-actions' `names`, from the game's components).
  if (typeof value === "string" && names[value]) return names[value];
  if (typeof value === "boolean") return value ? "yes" : "no";
  return showValue(value);
}

function label(path, parts) {
  if (path.length === 1) return words(path[0]);
  const named = parts && parts[path[0]];
  const part = typeof path[1] === "number" ? (named ? words(named[path[1]]) : `${path[1] + 1}`) : words(path[1]);
  return `${words(path[0])}: ${part}`;
}

/** The names of a list parameter's parts where the API describes them (a `split`'s
 * `parts` in legal-actions' `decision` and `free_actions`): {type: {param: [names]}}. */
export function partNames(legal) {
  const found = {};
  for (const group of [legal.decision, legal.free_actions]) {
    for (const described of (group && group.types) || []) {
      for (const param of described.params || []) {
        if (Array.isArray(param.parts)) (found[described.type] ||= {})[param.name] = param.parts;
      }
    }
  }
  return found;
}

/** Draw the controls into `box`; `post(action)` is called with the chosen action. `free`:
 * the types the API lists as free actions (labelled so); `parts`: from partNames. */
export function playControls(box, actions, post, free = new Set(), parts = {}, names = {}) {
  const byType = new Map();
  for (const action of actions) {
    if (!byType.has(action.type)) byType.set(action.type, []);
    byType.get(action.type).push(action);
  }
  const typeSelect = el("select", { id: "play-type", name: "type" },
    [...byType].map(([type, list]) => el("option", { value: type,
      text: `${words(type)}${free.has(type) ? " (free action)" : ""} (${list.length})` })));
  const params = el("div", { class: "params" });
  const preview = el("span", { class: "action-preview" });
  const play = el("button", { type: "submit", class: "primary", text: "Play" });
  const form = el("form", { class: "play", aria: { label: "Your move" } },
    el("label", { class: "field", for: "play-type" }, el("span", { text: "Action" }), typeSelect),
    params, el("p", { class: "muted small" }, "You play: ", preview), play);
  let chosen = [];
  let action = null;

  const draw = (from) => {
    const list = byType.get(typeSelect.value) || [];
    const paths = parameterPaths(list);
    // Keep the choices before the one that changed; forget those after it.
    chosen = chosen.slice(0, from);
    fill(params);
    let left = list;
    paths.forEach((path, index) => {
      const values = valuesAt(left, path);
      if (index >= chosen.length || !values.some((v) => v === chosen[index] || same(v, chosen[index]))) chosen[index] = values[0];
      const id = `play-${path.join("-")}`;
      const text = (v) => (v === MISSING ? "(leave out)" : valueText(v, names));
      if (values.length === 1) {
        params.appendChild(el("div", { class: "field fixed" }, el("span", { text: label(path, parts[typeSelect.value]) }),
          el("output", { id, text: text(values[0]) })));
      } else {
        const select = el("select", { id, name: id },
          values.map((value, i) => el("option", { value: String(i), text: text(value) })));
        select.value = String(values.findIndex((v) => v === chosen[index] || same(v, chosen[index])));
        select.addEventListener("change", () => {
          chosen[index] = values[Number(select.value)];
          draw(index + 1);
        });
        params.appendChild(el("label", { class: "field", for: id }, el("span", { text: label(path, parts[typeSelect.value]) }), select));
      }
      left = left.filter((a) => {
        const value = valueAt(a, path);
        return value === chosen[index] || (value !== MISSING && chosen[index] !== MISSING && same(value, chosen[index]));
      });
    });
    action = left[0] || null;
    // The chosen action in words, as the controls name its values (never as JSON).
    preview.textContent = action ? [words(action.type), ...paths.map((path) => {
      const value = valueAt(action, path);
      return value === MISSING ? null : `${label(path, parts[typeSelect.value])} ${valueText(value, names)}`;
    }).filter(Boolean)].join(" · ") : "";
    // The exact action, for a reader of the page's DOM (the browser tests); never shown.
    form.dataset.action = action ? JSON.stringify(action) : "";
    play.disabled = !action;
  };

  /** Choose `value` for the parameter `name` (a board element clicked: its data-<name>),
   * in the chosen type if it offers it, else in the first type that does; the parameters
   * before it take the values of a listed action that has it, the ones after it cascade.
   * True when some listed action has it. */
  const choose = (name, value) => {
    const types = [typeSelect.value, ...[...byType.keys()].filter((t) => t !== typeSelect.value)];
    for (const type of types) {
      const list = byType.get(type);
      const found = list.find((a) => name in a && a[name] !== null && typeof a[name] !== "object" && String(a[name]) === value);
      if (!found) continue;
      typeSelect.value = type;
      const paths = parameterPaths(list);
      const index = paths.findIndex((path) => path.length === 1 && path[0] === name);
      chosen = paths.map((path) => valueAt(found, path));
      draw(index + 1);
      return true;
    }
    return false;
  };

  typeSelect.addEventListener("change", () => draw(0));
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
  return { choose };
}

/** The values each parameter takes among `actions` (scalars only, as strings): a board
 * element with data-<name>="<value>" among them can be chosen by a click. */
export function choosableValues(actions) {
  const found = new Map();
  for (const action of actions) {
    for (const [name, value] of Object.entries(action)) {
      if (name === "type" || value === null || typeof value === "object") continue;
      if (!found.has(name)) found.set(name, new Set());
      found.get(name).add(String(value));
    }
  }
  return found;
}
