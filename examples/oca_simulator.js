// The simulator of oca_simulator.py in JavaScript, to read beside it: the modern Spanish Game of the
// Goose (oca-moderna) for 2 to 4 players, one row a game written as winner,turns,throws, the results
// file that `markov-oca crosscheck oca-moderna --players 2 --results games.csv` tests against the
// exact chain. The rules, and how turns and throws are counted, are in oca_simulator.py's docstring.
//
//   node examples/oca_simulator.js --games 20000 --seed 1 --out games.csv
//   node examples/oca_simulator.js --games 20000 --prison 56 --out buggy.csv   // a planted bug
//
// Math.random cannot be seeded; a small seeded generator (mulberry32) makes runs repeatable.
"use strict";
const fs = require("fs");

const GOAL = 63;
const GEESE = new Set([9, 18, 27, 36, 45, 54]);
const JUMPS = new Map([[6, 12], [42, 30], [58, 0]]); // the bridge, the maze, the skull
const INN = 19, INN_TURNS = 2;
const TURN_LIMIT = 2000;

function mulberry32(seed) {
  return function () {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const bounce = (square) => (square > GOAL ? 2 * GOAL - square : square);

// One game: [winning seat 1..players or null if unfinished, turns, throws].
function play(players, random, prison = 52) {
  const held = new Set([31, prison]); // the well and the prison
  const die = () => 1 + Math.floor(random() * 6);
  const pos = new Array(players).fill(0);
  const miss = new Array(players).fill(0);
  const stuck = new Array(players).fill(false);
  let turns = 0, throws = 0, seat = 0;
  while (turns < TURN_LIMIT) {
    turns += 1;
    if (stuck.every(Boolean)) return [null, TURN_LIMIT, throws]; // nobody can ever move again
    if (stuck[seat] || miss[seat] > 0) {
      miss[seat] = Math.max(miss[seat] - 1, 0);
      seat = (seat + 1) % players;
      continue;
    }
    throws += 1;
    const a = die(), b = die();
    const origin = pos[seat], total = a + b;
    let square;
    if (origin === 0 && total === 9 && (a === 6 || b === 6)) square = 26; // 6+3
    else if (origin === 0 && total === 9) square = 53; // 5+4
    else {
      square = bounce(origin + total);
      for (;;) { // square effects, chained
        if (GEESE.has(square)) square = bounce(square + total);
        else if (JUMPS.has(square)) square = JUMPS.get(square);
        else break;
      }
    }
    if (square === GOAL) return [seat + 1, turns, throws];
    pos[seat] = square;
    miss[seat] = square === INN ? INN_TURNS : 0;
    stuck[seat] = held.has(square);
    if (square !== 0) {
      for (let other = 0; other < players; other++) { // one piece a square
        if (other !== seat && pos[other] === square) {
          pos[other] = origin; miss[other] = 0; stuck[other] = false;
        }
      }
    }
    seat = (seat + 1) % players;
  }
  return [null, TURN_LIMIT, throws];
}

function main(argv) {
  const args = { players: 2, games: 20000, seed: 1, prison: 52, out: null };
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, "")] = argv[i + 1];
  if (!args.out) throw new Error("--out FILE is required");
  const random = mulberry32(Number(args.seed));
  const rows = ["winner,turns,throws"];
  for (let g = 0; g < Number(args.games); g++) {
    const [winner, turns, throws] = play(Number(args.players), random, Number(args.prison));
    rows.push(`${winner === null ? "" : winner},${turns},${throws}`);
  }
  fs.writeFileSync(args.out, rows.join("\n") + "\n");
}

main(process.argv.slice(2));
