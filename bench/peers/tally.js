// Tally (tests/rulesets/tally.py) written as a boardgame.io game, for `make bench-peers`.
// Seats secretly bid 0-9 (all at once), then take turns playing a card from their hand
// (adding its value to the tally and their score) or drawing one; after every seat has had
// `turnsPerRound` turns the highest bid not above the tally scores 3. `rounds` rounds.
const { ActivePlayers, INVALID_MOVE } = require('boardgame.io/core');

const CARDS = [1, 2, 3, 4, 5].flatMap((value) => [value, value, value, value]);

function draw(G, random) {
  if (G.drawPile.length === 0) {
    G.drawPile = random.Shuffle(G.discardPile);
    G.discardPile = [];
  }
  return G.drawPile.pop();
}

// Every move runs on the server only (no optimistic run in the client), as every action
// does in Meeple Ledger: the client's next state is the server's answer.
function serverOnly(move) {
  return { move, client: false };
}

function takeTurn(G, ctx, playerID, events) {
  G.turnsTaken += 1;
  G.nextSeat = (Number(playerID) + 1) % ctx.numPlayers;
  events.endTurn();
}

const Tally = {
  name: 'tally',
  setup: ({ ctx, random }, setupData) => {
    const G = {
      rounds: (setupData && setupData.rounds) || 3,
      turnsPerRound: (setupData && setupData.turnsPerRound) || 2,
      drawPile: random.Shuffle(CARDS),
      discardPile: [],
      hands: [],
      scores: Array(ctx.numPlayers).fill(0),
      bids: Array(ctx.numPlayers).fill(null),
      revealedBids: null,
      tally: 0,
      round: 1,
      turnsTaken: 0,
      nextSeat: 0,
    };
    for (let seat = 0; seat < ctx.numPlayers; seat += 1) {
      G.hands.push([draw(G, random), draw(G, random)]);
    }
    return G;
  },
  playerView: ({ G, playerID }) => ({
    ...G,
    drawPile: G.drawPile.length,
    hands: G.hands.map((hand, seat) => (String(seat) === playerID ? hand : hand.length)),
    bids: G.bids.map((bid, seat) => (String(seat) === playerID ? bid : bid !== null)),
  }),
  phases: {
    bid: {
      start: true,
      next: 'turns',
      turn: { activePlayers: ActivePlayers.ALL },
      moves: {
        bid: serverOnly(({ G, playerID }, amount) => {
          const seat = Number(playerID);
          if (G.bids[seat] !== null || !Number.isInteger(amount) || amount < 0 || amount > 9) {
            return INVALID_MOVE;
          }
          G.bids[seat] = amount;
        }),
      },
      endIf: ({ G }) => G.bids.every((bid) => bid !== null),
      onEnd: ({ G }) => {
        G.revealedBids = [...G.bids];
      },
    },
    turns: {
      next: 'bid',
      // The seat after the last one to take a turn starts, as in tests/rulesets/tally.py.
      turn: {
        order: {
          first: ({ G }) => G.nextSeat,
          next: ({ ctx }) => (ctx.playOrderPos + 1) % ctx.numPlayers,
        },
      },
      moves: {
        play: serverOnly(({ G, ctx, playerID, events }, card) => {
          const hand = G.hands[Number(playerID)];
          const at = hand.indexOf(card);
          if (at < 0) return INVALID_MOVE;
          hand.splice(at, 1);
          G.discardPile.push(card);
          G.tally += card;
          G.scores[Number(playerID)] += card;
          takeTurn(G, ctx, playerID, events);
        }),
        draw: serverOnly(({ G, ctx, playerID, random, events }) => {
          if (G.drawPile.length === 0 && G.discardPile.length === 0) return INVALID_MOVE;
          G.hands[Number(playerID)].push(draw(G, random));
          takeTurn(G, ctx, playerID, events);
        }),
        pass: serverOnly(({ G, ctx, playerID, events }) => {
          const canDraw = G.drawPile.length > 0 || G.discardPile.length > 0;
          if (G.hands[Number(playerID)].length > 0 || canDraw) return INVALID_MOVE;
          takeTurn(G, ctx, playerID, events);
        }),
      },
      endIf: ({ G, ctx }) => G.turnsTaken >= G.turnsPerRound * ctx.numPlayers,
      onEnd: ({ G, ctx }) => {
        const fitting = G.revealedBids
          .map((bid, seat) => [bid, seat])
          .filter(([bid]) => bid <= G.tally)
          .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        if (fitting.length > 0) G.scores[fitting[fitting.length - 1][1]] += 3;
        G.round += 1;
        G.bids = Array(ctx.numPlayers).fill(null);
        G.revealedBids = null;
        G.turnsTaken = 0;
      },
    },
  },
  endIf: ({ G }) => (G.round > G.rounds ? { scores: G.scores } : undefined),
};

// A legal move for `seat` in the state `G`/`ctx` as that seat sees it, or null.
function chooseMove(G, ctx, seat, pick) {
  if (ctx.gameover) return null;
  if (ctx.phase === 'bid') {
    return G.bids[seat] === null ? { move: 'bid', args: [pick(10)] } : null;
  }
  if (ctx.currentPlayer !== String(seat)) return null;
  const hand = G.hands[seat];
  const canDraw = (typeof G.drawPile === 'number' ? G.drawPile : G.drawPile.length) > 0
    || G.discardPile.length > 0;
  const options = hand.map((card) => ({ move: 'play', args: [card] }));
  if (canDraw) options.push({ move: 'draw', args: [] });
  if (options.length === 0) return { move: 'pass', args: [] };
  return options[pick(options.length)];
}

module.exports = { Tally, chooseMove };
