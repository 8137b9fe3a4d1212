// The REST API as the page calls it, and where the page keeps seat tokens.
// Tokens travel only in the Authorization header: never in a URL's path or query.

export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
    this.code = this.problem.code || null;
  }
}

/** Call the API; the parsed JSON body, or an ApiError carrying the problem+json. */
export async function api(path, { method = "GET", token = null, body, headers = {}, signal } = {}) {
  const sent = { ...headers };
  if (token) sent.Authorization = `Bearer ${token}`;
  if (body !== undefined) sent["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers: sent,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    cache: "no-store",
    credentials: "omit",
  });
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text };
    }
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

const KEY = "meeple.seat.";

/** Seat tokens of this tab, per game: {token, seat, holder, app}. sessionStorage only: they go
 * when the tab closes, and no other tab or site can read them. An entry with ``app`` plays a
 * seat this device's application holds, with its key (``device``), at the seat's addresses. */
export const seats = {
  get(gameId) {
    try {
      return JSON.parse(sessionStorage.getItem(KEY + gameId)) || null;
    } catch {
      return null;
    }
  },
  set(gameId, entry) {
    sessionStorage.setItem(KEY + gameId, JSON.stringify(entry));
  },
  forget(gameId) {
    sessionStorage.removeItem(KEY + gameId);
  },
};

const DEVICE = "meeple.app.key";

/** This device's client application (docs/web.md, "My games"): the page registers itself once
 * per browser (POST /apps) and keeps the key in localStorage, so the seats it creates or joins
 * survive reloads, new tabs and bookmarks. The key travels only in the Authorization header. */
export const device = {
  /** The key, if this device registered. */
  key() {
    try {
      return localStorage.getItem(DEVICE);
    } catch {
      return null;
    }
  },
  /** The key, registering this device first when it has none (null when that fails). */
  async ensure() {
    const known = device.key();
    if (known) return known;
    try {
      const made = await api("/apps", { method: "POST", body: { name: "Meeple Ledger web app" } });
      localStorage.setItem(DEVICE, made.key);
      return made.key;
    } catch {
      return null; // the page still plays with seat tokens, in this tab only
    }
  },
  /** Forget this device: revoke its key (best effort) and drop it from localStorage. */
  async forget() {
    const key = device.key();
    localStorage.removeItem(DEVICE);
    for (let i = sessionStorage.length - 1; i >= 0; i -= 1) {
      const name = sessionStorage.key(i);
      if (name && name.startsWith(KEY)) {
        const entry = seats.get(name.slice(KEY.length));
        if (entry && entry.app) sessionStorage.removeItem(name);
      }
    }
    if (key) await api("/apps/me", { method: "DELETE", token: key }).catch(() => null);
  },
};

/** A link that opens a game with a token in its fragment (browsers never send fragments). */
export function seatLink(gameId, token, holder = false) {
  const url = new URL(window.location.href);
  url.search = "";
  url.hash = `#/games/${encodeURIComponent(gameId)}?${holder ? "holder" : "token"}=${encodeURIComponent(token)}`;
  return url.toString();
}

/** A fresh Idempotency-Key, so a retried post is applied once. */
export function idempotencyKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

let rulesetsPromise = null;

/** GET /rulesets, once per page load. */
export function rulesets() {
  if (!rulesetsPromise) rulesetsPromise = api("/rulesets").then((d) => d.rulesets);
  return rulesetsPromise;
}
