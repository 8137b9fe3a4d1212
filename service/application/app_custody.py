"""What taking and letting go of seats does for a client application beyond its registry
(service.application.apps): its webhooks (``POST /apps/me/webhooks``) follow the seats it holds.

An application's webhook is delivered through each game's own webhook machinery
(service.application.webhooks, service.workers.delivery): for every seat it holds, the game
gets a seat webhook with the application's URL, secret and events, owned by
``{"seat": n, "app": <id>}`` and marked with the application webhook's id, its deliveries in
the application's own lane (``app:<id>``) of the fair delivery order. So each delivery is
signed as today and carries the event as that seat may see it, the game's status and
``you``; a seat taken later gets its webhooks from its game's first event, a webhook added
later from the game's version then. Letting go of a seat, removing the webhook or revoking
the application removes them.
"""

from __future__ import annotations

from typing import Any

from service.application.apps import App, Held
from service.application.webhooks import new_webhook

Record = dict[str, Any]


def app_lane(app_id: str) -> str:
    """The delivery lane every webhook of the application shares."""
    return f"app:{app_id}"


def seat_webhook(hook: Record, app_id: str, game_id: str, seat: int, cursor: int) -> Record:
    """The game's seat webhook that delivers application webhook ``hook`` for ``seat``."""
    owner = {"seat": seat, "app": app_id}
    record = new_webhook(
        game_id, hook["url"], hook["secret"], hook["events"], owner, cursor, app_lane(app_id)
    )
    record["app_webhook"] = hook["id"]
    return record


def hold(services: Any, app_id: str, game_id: str, seats: list[int]) -> Held:
    """Take ``seats`` of the game into the application's custody, with its webhooks."""
    held = services.apps.hold(app_id, game_id, seats)
    hooks = services.apps.webhooks(app_id)
    if hooks and seats:
        state = services.jobs.state
        present = {
            (record["app_webhook"], record["owner"]["seat"])
            for record in state.webhooks(game_id)
            if record.get("app_webhook")
        }
        for hook in hooks:
            for seat in seats:
                if (hook["id"], seat) not in present:
                    state.add_webhook(seat_webhook(hook, app_id, game_id, seat, 0))
        _notify(services, game_id)
    return held


def let_go(services: Any, app_id: str, game_id: str, seat: int) -> None:
    """The application holds ``seat`` no more: its webhooks for the seat go too."""
    services.apps.let_go(app_id, game_id, seat)
    state = services.jobs.state
    for record in state.webhooks(game_id):
        if record["owner"].get("app") == app_id and record["owner"].get("seat") == seat:
            state.remove_webhook(game_id, record["id"])


def add_webhook(services: Any, app_id: str, hook: Record, most: int) -> bool:
    """Keep an application webhook and give it every seat the application holds (notified
    of what comes after each game's version now); False when it has ``most`` already."""
    if not services.apps.add_webhook(app_id, hook, most):
        return False
    state = services.jobs.state
    for held in services.apps.held(app_id):
        version = services.store.version(held.game_id)
        for seat in held.seats:
            state.add_webhook(seat_webhook(hook, app_id, held.game_id, seat, version))
    return True


def remove_webhook(services: Any, app_id: str, hook_id: str) -> bool:
    """Remove an application webhook and every seat webhook it made."""
    if not services.apps.remove_webhook(app_id, hook_id):
        return False
    _remove_seat_webhooks(services, app_id, {hook_id})
    return True


def revoke(services: Any, app: App, hashed: str) -> None:
    """Forget the application (service.application.apps.AppRegistry.revoke), its webhooks
    first."""
    hooks = {hook["id"] for hook in services.apps.webhooks(app.id)}
    if hooks:
        _remove_seat_webhooks(services, app.id, hooks)
    services.apps.revoke(app, hashed)


def _remove_seat_webhooks(services: Any, app_id: str, hooks: set[str]) -> None:
    state = services.jobs.state
    for held in services.apps.held(app_id):
        for record in state.webhooks(held.game_id):
            if record.get("app_webhook") in hooks:
                state.remove_webhook(held.game_id, record["id"])


def _notify(services: Any, game_id: str) -> None:
    """Have the game's webhooks catch up now (a seat's new ones start before its version)."""
    services.jobs.enqueue("notify", game_id, job_id=f"notify-{game_id}", queue="notify")
