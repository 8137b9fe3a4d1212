"""Agents (projections/agents): every pick is legal, the same seed gives the same pick, an
agent sees a position only through its seat's information set, and search beats chance."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from projections.agents import Budget, GreedyAgent, MctsAgent, RandomAgent, make_agent, mcts
from projections.agents.analysis import analyze
from projections.agents.greedy import lead_after, one_ply_values, sampled_greedy_policy
from projections.agents.mcts import KeyedActions, action_key
from projections.agents.tournament import play_game, play_out
from projections.fold import copy_state
from projections.ruleset import Ruleset, State, get_ruleset
from projections.simulate import play_random
from tests.rulesets.tally import TALLY

PRODUCT_GAMES = ["gutenberg", "restoration", "impression", "impendium"]


def positions(ruleset: Ruleset, seed: str, every: int, limit: int) -> list[tuple[State, int]]:
    """(state, seat to act) at every ``every``-th step of a random game, at most ``limit``."""
    found: list[tuple[State, int]] = []

    def keep(game: Any, envelope: Any) -> None:
        if envelope["seq"] % every or len(found) >= limit:
            return
        status = game.ruleset.status(game.state)
        for seat in status.get("to_act") or []:
            if not status.get("awaiting_system") and ruleset.legal_actions(game.state, seat):
                found.append((copy_state(game.state), seat))
                return

    try:
        play_random(ruleset, ["Ann", "Bob"], seed, on_step=keep, max_steps=400)
    except Exception as stopped:  # a long game (Impendium) is cut short: enough positions
        assert "no end after" in str(stopped), stopped
    assert found
    return found


def agents() -> list[Any]:
    return [RandomAgent(), GreedyAgent(), MctsAgent(Budget(iterations=6), rollout_steps=10)]


@pytest.mark.parametrize("game", PRODUCT_GAMES)
def test_every_agent_picks_one_of_the_seats_legal_actions(game: str) -> None:
    ruleset = get_ruleset(game)
    for state, seat in positions(ruleset, f"legal:{game}", every=23, limit=4):
        before = copy_state(state)
        for agent in agents():
            pick = agent.choose(ruleset, state, seat, random.Random(1))
            assert pick in ruleset.legal_actions(state, seat), (agent.name, pick)
            assert state == before, f"{agent.name} changed the position it was asked about"


@pytest.mark.parametrize("game", PRODUCT_GAMES)
def test_the_same_seed_gives_the_same_pick(game: str) -> None:
    ruleset = get_ruleset(game)
    for state, seat in positions(ruleset, f"seeded:{game}", every=31, limit=3):
        for agent in agents():
            picks = [agent.choose(ruleset, state, seat, random.Random("s")) for _ in range(2)]
            assert picks[0] == picks[1], agent.name


class OneInformationSet(Ruleset):
    """A game, except that every redraw of what a seat cannot see starts from one fixed
    state: an agent that looks at the position only through ``legal_actions`` and
    ``resample_hidden`` cannot tell two positions of that information set apart."""

    def __init__(self, game: Ruleset, representative: State) -> None:
        self.game = game
        self.representative = representative

    def __getattribute__(self, name: str) -> Any:
        if name in ("game", "representative", "resample_hidden") or name.startswith("__"):
            return object.__getattribute__(self, name)
        return getattr(self.game, name)

    def resample_hidden(self, state: State, seat: int, rng: random.Random) -> State:
        return self.game.resample_hidden(self.representative, seat, rng)


@pytest.mark.parametrize("game", ["tally", "gutenberg", "restoration", "impression"])
def test_positions_that_differ_only_in_what_the_seat_cannot_see_get_the_same_pick(
    game: str,
) -> None:
    inner = TALLY if game == "tally" else get_ruleset(game)
    for state, seat in positions(inner, "infoset", every=7, limit=5):
        other = inner.resample_hidden(state, seat, random.Random(99))
        assert inner.view(other, seat) == inner.view(state, seat)
        ruleset = OneInformationSet(inner, copy_state(state))
        for agent in (GreedyAgent(), MctsAgent(Budget(iterations=30), rollout_steps=20)):
            picks = [agent.choose(ruleset, s, seat, random.Random(7)) for s in (state, other)]
            assert picks[0] == picks[1], (agent.name, state)


def test_search_beats_chance_at_tally() -> None:
    wins = 0.0
    for game in range(12):
        seats = [MctsAgent(Budget(iterations=60)), RandomAgent()]
        mcts_seat = game % 2
        if mcts_seat:
            seats.reverse()
        wins += play_game(TALLY, seats, f"duel:{game}")[mcts_seat].win
    assert wins >= 9, wins


def test_a_search_reports_each_root_action_it_tried() -> None:
    state, seat = positions(get_ruleset("gutenberg"), "stats", every=11, limit=1)[0]
    told: list[int] = []
    search = MctsAgent(Budget(iterations=30), rollout_steps=10).search(
        get_ruleset("gutenberg"), state, seat, random.Random(3), progress=told.append
    )
    assert search.playouts == 30 and told == list(range(1, 31))
    candidates = search.candidates()
    assert sum(stats.playouts for _, stats in candidates) == 30
    assert search.pick == candidates[0][0]
    for _, stats in candidates:
        assert 0 <= stats.wins <= stats.playouts


def test_a_cancelled_search_stops_and_still_picks_a_legal_action() -> None:
    ruleset = get_ruleset("gutenberg")
    state, seat = positions(ruleset, "cancel", every=11, limit=1)[0]
    search = MctsAgent(Budget(iterations=1000), rollout_steps=5).search(
        ruleset, state, seat, random.Random(3), cancelled=lambda: True
    )
    assert search.playouts == 0 and search.pick in ruleset.legal_actions(state, seat)


def test_a_budget_in_seconds_reads_the_clock_it_is_given() -> None:
    ticks = itertools.count()
    budget = Budget(seconds=5, clock=lambda: float(next(ticks)))
    state, seat = positions(TALLY, "clock", every=3, limit=1)[0]
    search = MctsAgent(budget).search(TALLY, state, seat, random.Random(0))
    assert 1 <= search.playouts <= 5


@pytest.mark.parametrize(
    "arguments",
    [{}, {"iterations": 0}, {"seconds": 0.0, "clock": float}, {"seconds": 1.0}],
)
def test_a_budget_must_say_how_much(arguments: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Budget(**arguments)


def test_agents_are_made_by_name() -> None:
    assert [make_agent(name).name for name in ("random", "greedy", "mcts")] == [
        "random",
        "greedy",
        "mcts",
    ]
    with pytest.raises(ValueError, match="no agent"):
        make_agent("oracle")


@pytest.mark.parametrize("game", PRODUCT_GAMES)
def test_two_states_of_one_information_set_get_the_same_pick_and_analysis(game: str) -> None:
    """docs/analysis.md (information sets), on the real rulesets (no stand-in): the second state is
    the first with everything the seat cannot see redrawn, and nothing the agents or the analysis
    compute tells them apart under the same seed."""
    ruleset = get_ruleset(game)
    hidden_differs = 0
    for state, seat in positions(ruleset, f"twins:{game}", every=13, limit=3):
        twin = ruleset.resample_hidden(state, seat, random.Random(42))
        assert ruleset.view(twin, seat) == ruleset.view(state, seat)
        hidden_differs += twin != state
        for agent in (MctsAgent(Budget(iterations=20)), GreedyAgent()):
            picks = [agent.choose(ruleset, s, seat, random.Random(11)) for s in (state, twin)]
            assert picks[0] == picks[1], (agent.name, seat)
        analyses = [
            analyze(ruleset, s, seat, Budget(iterations=20), seed="twins").to_dict()
            for s in (state, twin)
        ]
        assert analyses[0] == analyses[1], seat
    assert hidden_differs, "no position had anything hidden from the seat to redraw"


def test_a_search_tries_first_the_candidate_greedy_values_most() -> None:
    """The prior: with one playout, the only root action tried is the top of the one-ply
    values (computed with the search's own generator, so the same redraw)."""
    ruleset = get_ruleset("gutenberg")
    for state, seat in positions(ruleset, "prior", every=9, limit=3):
        legal = ruleset.legal_actions(state, seat)
        valued = one_ply_values(ruleset, state, seat, legal, random.Random(5))
        best = max(valued, key=lambda pair: pair[1])[1]
        expected = next(action for action, value in valued if value == best)
        search = MctsAgent(Budget(iterations=1)).search(ruleset, state, seat, random.Random(5))
        assert [action for action, _ in search.candidates()] == [expected]


def test_a_rollout_move_is_the_best_of_its_sample_by_the_evaluation() -> None:
    ruleset = get_ruleset("gutenberg")
    for state, seat in positions(ruleset, "policy", every=9, limit=3):
        legal = ruleset.legal_actions(state, seat)
        replay = random.Random(8)  # the policy's own draws, in its order
        drawn = replay.sample(legal, min(4, len(legal)))
        values = {
            json.dumps(action, sort_keys=True): lead_after(ruleset, state, seat, action, replay)
            for action in drawn
        }
        chosen = sampled_greedy_policy(4)(ruleset, state, seat, legal, random.Random(8))
        assert chosen in drawn
        assert values[json.dumps(chosen, sort_keys=True)] == max(values.values())


def test_keyed_actions_remember_lists_met_again() -> None:
    ruleset = get_ruleset("gutenberg")
    state, seat = positions(ruleset, "keyed", every=11, limit=1)[0]
    legal = ruleset.legal_actions(state, seat)
    keys = KeyedActions(size=2)
    keyed = keys(seat, legal)
    assert keyed == {action_key(seat, action): action for action in legal}
    assert keys(seat, copy_state(legal)) is keyed  # an equal list: the same keys again
    rival = keys(1 - seat, legal)
    assert rival is not keyed and set(rival) == {action_key(1 - seat, a) for a in legal}
    assert keys(seat, legal[:1]) is not keyed  # a third list: the least recent goes
    assert keys(1 - seat, legal) is rival
    again = keys(seat, legal)
    assert again is not keyed and again == keyed


@pytest.mark.parametrize("game", ["gutenberg", "impendium"])
def test_remembered_keys_change_nothing_a_search_finds(
    game: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ruleset = get_ruleset(game)
    for state, seat in positions(ruleset, f"remembered:{game}", every=17, limit=2):
        agent = MctsAgent(Budget(iterations=25))
        remembered = agent.search(ruleset, state, seat, random.Random(4))
        with monkeypatch.context() as patch:
            patch.setattr(mcts, "KeyedActions", lambda: KeyedActions(size=0))
            fresh = agent.search(ruleset, state, seat, random.Random(4))
        assert remembered.pick == fresh.pick
        assert remembered.candidates() == fresh.candidates()


def test_a_decision_with_one_legal_action_is_taken_without_a_search() -> None:
    ruleset = get_ruleset("gutenberg")
    forced: list[tuple[State, int]] = []

    def keep(game: Any, envelope: Any) -> None:
        status = game.ruleset.status(game.state)
        for seat in status.get("to_act") or []:
            if (
                not status.get("awaiting_system")
                and len(ruleset.legal_actions(game.state, seat)) == 1
            ):
                forced.append((copy_state(game.state), seat))

    play_random(ruleset, ["Ann", "Bob"], "forced", on_step=keep)
    assert forced, "no decision with a single legal action in that game"
    rollouts: list[int] = []
    policy = sampled_greedy_policy(4)

    def counted(*arguments: Any) -> Any:
        rollouts.append(1)
        return policy(*arguments)

    agent = MctsAgent(Budget(iterations=50), policy=counted)
    for state, seat in forced[:3]:
        assert (
            agent.choose(ruleset, state, seat, random.Random(0))
            == ruleset.legal_actions(state, seat)[0]
        )
    assert rollouts == []
    state, seat = positions(ruleset, "forced", every=11, limit=1)[0]
    agent.choose(ruleset, state, seat, random.Random(0))
    assert rollouts, "the counted policy is the one a search uses"


def test_a_game_between_agents_says_whether_the_rules_ended_it() -> None:
    seats = [RandomAgent(), RandomAgent()]
    whole = play_out(TALLY, seats, "whole")
    assert whole.finished and whole.steps > 3
    assert play_game(TALLY, seats, "whole") == whole.outcomes
    cut = play_out(TALLY, seats, "whole", max_steps=3)
    assert not cut.finished and cut.steps == 3
    assert [outcome.score for outcome in cut.outcomes] != [o.score for o in whole.outcomes]
