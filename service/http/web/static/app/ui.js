// Small pieces the shell's pages share: notices, problem messages, values in words.

import { el } from "../games/common.js";

/** Say something in the page's live region (read out by screen readers). */
export function notify(text, kind = "info") {
  const box = document.getElementById("notice");
  if (!box) return;
  box.replaceChildren(el("p", { class: `notice-${kind}`, text }));
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => box.replaceChildren(), 8000);
}

/** A problem from the API as one sentence: its detail and its code. */
export function problemText(error) {
  if (error && error.problem) {
    const code = error.code ? ` (${error.code})` : "";
    return `${error.message}${code}`;
  }
  return String((error && error.message) || error);
}

/** Empty `node` and put `children` in it. */
export function fill(node, ...children) {
  node.replaceChildren();
  for (const child of children.flat()) if (child) node.appendChild(child);
  return node;
}

/** The value shown for a parameter of an action: words for ids, compact JSON for the rest. */
export function showValue(value) {
  if (value === undefined) return "(none)";
  if (value === null) return "none";
  if (typeof value === "string") return value.replace(/_/g, " ");
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}
