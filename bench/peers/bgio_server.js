// boardgame.io's own server playing Tally (`make bench-peers`).
//   node bgio_server.js serve            serves Tally; prints {"port": n} once listening
//   node bgio_server.js load PORT SECONDS MATCHES
//                                        drives it from another process and prints
//                                        {"actions": n, "seconds": s}
// Each match has two seats, each a boardgame.io Client over SocketIO that makes a random
// legal move whenever the state it last received lets it. A client counts its own moves as
// the server logged them (the MAKE_MOVE entries the server sends back into the client's log).
const { Server } = require('boardgame.io/server');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { Tally, chooseMove } = require('./tally');

const ROUNDS = 100000;

async function serve() {
  const server = Server({ games: [Tally], origins: ['http://127.0.0.1'] });
  const running = await server.run({ port: 0 });
  process.stdout.write(JSON.stringify({ port: running.appServer.address().port }) + '\n');
}

async function load(port, seconds, matches) {
  const base = `http://127.0.0.1:${port}`;
  const post = async (path, body) => {
    const response = await fetch(base + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return response.json();
  };
  const clients = [];
  for (let m = 0; m < matches; m += 1) {
    const { matchID } = await post('/games/tally/create', {
      numPlayers: 2,
      setupData: { rounds: ROUNDS },
    });
    for (const playerID of ['0', '1']) {
      const joined = await post(`/games/tally/${matchID}/join`, {
        playerID,
        playerName: `P${playerID}`,
      });
      clients.push(
        Client({
          game: Tally,
          matchID,
          playerID,
          credentials: joined.playerCredentials,
          multiplayer: SocketIO({ server: base }),
          debug: false,
        }),
      );
    }
  }
  let seed = 12345;
  const pick = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let actions = 0;
  let counting = false;
  for (const client of clients) {
    let sentAt = -1;
    let seen = 0;
    client.subscribe((state) => {
      if (!state) return;
      for (const entry of state.log.slice(seen)) {
        const { type, payload } = entry.action;
        if (counting && type === 'MAKE_MOVE' && payload.playerID === client.playerID) actions += 1;
      }
      seen = state.log.length;
      if (state._stateID <= sentAt) return;
      const choice = chooseMove(state.G, state.ctx, Number(client.playerID), pick);
      if (choice === null) return;
      sentAt = state._stateID;
      client.moves[choice.move](...choice.args);
    });
    client.start();
  }
  counting = true;
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  counting = false;
  const elapsed = (Date.now() - started) / 1000;
  process.stdout.write(JSON.stringify({ actions, seconds: elapsed }) + '\n');
  process.exit(0);
}

const [command, ...rest] = process.argv.slice(2);
const run = command === 'serve' ? serve() : load(Number(rest[0]), Number(rest[1]), Number(rest[2]));
run.catch((error) => {
  console.error(error);
  process.exit(1);
});
