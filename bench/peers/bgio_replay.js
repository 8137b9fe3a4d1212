// Replaying a Tally game through boardgame.io's own reducer (`make bench-peers`):
//   node bgio_replay.js ROUNDS REPEATS   prints {"moves": n, "seconds": best}
// One game of random legal moves is played through the reducer and its actions kept; then
// the game is rebuilt from its initial state by running those actions through the reducer
// again (as boardgame.io's log and debug panel do), best of REPEATS.
const { InitializeGame, CreateGameReducer } = require('boardgame.io/internal');
const { Tally, chooseMove } = require('./tally');

const rounds = Number(process.argv[2] || 2000);
const repeats = Number(process.argv[3] || 3);
const game = { ...Tally, seed: 'bench-peers' };
const reducer = CreateGameReducer({ game });
const initial = () => InitializeGame({ game, numPlayers: 2, setupData: { rounds } });

let seed = 12345;
const pick = (n) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};

const actions = [];
let state = initial();
while (!state.ctx.gameover) {
  const before = state._stateID;
  for (const seat of [0, 1]) {
    const choice = chooseMove(state.G, state.ctx, seat, pick);
    if (choice === null) continue;
    const action = {
      type: 'MAKE_MOVE',
      payload: { type: choice.move, args: choice.args, playerID: String(seat) },
    };
    state = reducer(state, action);
    actions.push(action);
    break;
  }
  if (state._stateID === before) throw new Error(`no move was made at ${before}`);
}

let best = Infinity;
let replayed;
for (let run = 0; run < repeats; run += 1) {
  const began = process.hrtime.bigint();
  replayed = initial();
  for (const action of actions) replayed = reducer(replayed, action);
  best = Math.min(best, Number(process.hrtime.bigint() - began) / 1e9);
}
if (JSON.stringify(replayed.G) !== JSON.stringify(state.G)) throw new Error('replay differs');
process.stdout.write(JSON.stringify({ moves: actions.length, seconds: best }) + '\n');
