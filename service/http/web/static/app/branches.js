// A game's branch tree: the games it was branched from, up to the first, and the branches
// made from it and from them, as nested lists. Bounded: a tree of a few dozen games at most.

import { api } from "./api.js";
import { el } from "../games/common.js";

const MAX_ANCESTORS = 8;
const MAX_DEPTH = 3;
const MAX_NODES = 40;

/** Where `gameId` was branched from: {source, at} or null for an original game. */
async function origin(gameId, token) {
  const page = await api(`/games/${encodeURIComponent(gameId)}/events?after=0&limit=1`, { token });
  const first = page.events[0];
  return first && first.type === "branched_from" ? { source: first.data.source, at: first.data.at } : null;
}

export async function branchTree(gameId, token) {
  // Ancestors: each origin is read without a token (this page's token is for this game).
  const chain = [];
  let from = await origin(gameId, token);
  while (from && chain.length < MAX_ANCESTORS) {
    chain.unshift(from);
    from = await origin(from.source, null).catch(() => null);
  }
  let budget = MAX_NODES;
  const children = async (id, depth) => {
    if (depth >= MAX_DEPTH || budget <= 0) return null;
    const found = await api(`/games/${encodeURIComponent(id)}/branches`, { token: id === gameId ? token : null });
    if (!found.branches.length) return null;
    const list = el("ul", { class: "tree" });
    for (const branch of found.branches) {
      if ((budget -= 1) < 0) {
        list.appendChild(el("li", { class: "muted", text: "… more branches" }));
        break;
      }
      list.appendChild(el("li", { data: { game: branch.id } },
        el("a", { href: `#/games/${encodeURIComponent(branch.id)}`, text: branch.id }),
        ` from event ${branch.at}${branch.reseeded ? ", reseeded" : ""}`,
        await children(branch.id, depth + 1)));
    }
    return list;
  };
  const here = el("li", { class: "here", data: { game: gameId } }, el("strong", { text: `${gameId} (this game)` }),
    await children(gameId, 0) || el("p", { class: "muted small", text: "No branch from this game yet." }));
  // Nest the ancestors around this game, the original outermost.
  let node = here;
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    node.firstChild.after(` from event ${chain[i].at}`);
    node = el("li", { data: { game: chain[i].source } },
      el("a", { href: `#/games/${encodeURIComponent(chain[i].source)}`, text: chain[i].source }),
      el("ul", { class: "tree" }, node));
  }
  return el("ul", { class: "tree root" }, node);
}
