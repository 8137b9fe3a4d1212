/**
 * A random bot written the way a TypeScript integrator would: against the types that
 * openapi-typescript generates from openapi.yaml (generated/schema.d.ts, never committed)
 * and the openapi-fetch client, with no hand-written type and no cast.
 *
 * It creates a game, holds every seat's token and plays for whichever seat is to act: one
 * of that seat's legal actions, posted back verbatim, until the game ends.
 *
 *     node generated/out/bot.mjs http://127.0.0.1:8000 gutenberg 2
 *
 * prints one JSON line: ruleset, game id, actions, requests.
 * tests/clients/test_typescript_client.py generates the types, compiles this file with
 * `tsc --strict` and runs it against a live server.
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/schema.js";

type GameStatus = components["schemas"]["GameStatus"];
type LegalActions = components["schemas"]["LegalActions"];
type Problem = components["schemas"]["Problem"];

/** A random game ends long before this many actions. */
const MAX_ACTIONS = 20_000;
/** Milliseconds between two looks at a game waiting for an automatic step. */
const STEP_POLL_MS = 20;

export interface Played {
  ruleset: string;
  game_id: string;
  actions: number;
  requests: number;
  version: number;
}

/** A seeded generator (mulberry32): the same seed picks the same moves. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(items: readonly T[], random: () => number): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error("nothing to pick from");
  return item;
}

function refused(what: string, problem: Problem | undefined, response: Response): Error {
  return new Error(`${what}: ${response.status} ${JSON.stringify(problem ?? null)}`);
}

export async function play(
  baseUrl: string,
  ruleset: string,
  players: number,
  seed: number,
): Promise<Played> {
  let requests = 0;
  const counter: Middleware = {
    onRequest({ request }) {
      requests += 1;
      return request;
    },
  };
  const clientFor = (token?: string): Client<paths> => {
    const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
    const client = createClient<paths>({ baseUrl, headers });
    client.use(counter);
    return client;
  };
  const random = seeded(seed);
  const anonymous = clientFor();
  const names = Array.from({ length: players }, (_, seat) => `Bot ${seat + 1}`);
  const created = await anonymous.POST("/games", { body: { ruleset, players: names } });
  if (!created.data) throw refused("create", created.error, created.response);
  const game_id = created.data.id;
  const seats = new Map(
    created.data.seats.map((seat) => {
      // every seat was given a name, so each has its token (open and bot seats have none)
      if (seat.token === null) throw new Error(`seat ${seat.seat} came without its token`);
      return [seat.seat, clientFor(seat.token)] as const;
    }),
  );
  const path = { params: { path: { game_id } } };

  for (let actions = 0; actions < MAX_ACTIONS; ) {
    const summary = await anonymous.GET("/games/{game_id}", path);
    if (!summary.data) throw refused("summary", summary.error, summary.response);
    const status: GameStatus = summary.data.status;
    if (status.finished) {
      return { ruleset, game_id, actions, requests, version: summary.data.version };
    }
    const seat = status.to_act[0];
    if (status.awaiting_system !== null || seat === undefined) {
      await new Promise((resolve) => setTimeout(resolve, STEP_POLL_MS));
      continue;
    }
    const client = seats.get(seat);
    if (!client) throw new Error(`no token for seat ${seat}`);
    const legal = await client.GET("/games/{game_id}/legal-actions", path);
    if (!legal.data) throw refused("legal actions", legal.error, legal.response);
    const listed: LegalActions = legal.data;
    const posted = await client.POST("/games/{game_id}/actions", {
      params: { path: { game_id }, header: { "If-Match": `"${listed.version}"` } },
      body: pick(listed.actions, random),
    });
    if (!posted.data) throw refused("action", posted.error, posted.response);
    actions += 1;
  }
  throw new Error(`${game_id}: not finished after ${MAX_ACTIONS} actions`);
}

declare const process: { argv: string[] };

const [baseUrl, ruleset, players] = process.argv.slice(2);
if (baseUrl && ruleset && players) {
  console.log(JSON.stringify(await play(baseUrl, ruleset, Number(players), 12)));
}
