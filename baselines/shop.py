"""The ``expert`` and ``first_result`` agents for Shop (WebShop in text).

``expert`` reads only its observation's ``view`` (the instruction, the page as
data, the products it opened as it saw them, the options chosen, how many
searches it made) and the public vocabulary of
:mod:`parlour.envs.agentic.shop_catalogue`, never the episode's goal, so it is
a fair reference for the leaderboard. Each turn it plans afresh from the view:

* read the instruction back into a type, attributes, options and a price cap
  (:func:`~parlour.envs.agentic.shop_catalogue.read_instruction`: paraphrases
  and synonyms map to the catalogue's words);
* search with the type, the attributes and the option values (after a search
  whose results ran out: the type and the attributes; then the type alone);
* on a results page, open the first listed product that could fit (its title
  names the asked type, its price is under the cap, nothing seen of it rules it
  out), else the next page, else back to search;
* on an item page, go back if its category, price or options rule it out; read
  its description if its features are not known yet; go back if it lacks an
  asked attribute; else click each asked option value not chosen yet, then buy.

``first_result`` is the WebShop paper's rule baseline: search with the whole
instruction, open the first result and buy it, choosing no option. The random
baseline is the generic ``random`` agent, uniform over the legal moves (the
type searches on the search page, the page's clicks elsewhere).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.agentic.shop_catalogue import TYPE_BY_NAME, Request, read_instruction

ENV_ID = "parlour/Shop-v0"


class Plan:
    """One turn's reading of the view: what the instruction asks and what has been seen of each product opened."""

    def __init__(self, view: Mapping[str, Any]):
        request = read_instruction(view["instruction"])
        assert request is not None, "the instruction does not follow the shop's grammar"
        self.request: Request = request
        self.type = TYPE_BY_NAME[request.type]
        self.page: Mapping[str, Any] = view["page"]
        self.known: Mapping[str, Mapping[str, Any]] = view["known"]
        self.selected: Mapping[str, str] = view["selected"]
        self.searches: int = view["searches"]

    def query(self) -> str:
        """The keywords of the next search: everything asked first, then less (see the module docstring)."""
        words = [self.request.type]
        if self.searches < 2:
            words += self.request.attributes
        if self.searches < 1:
            words += [value for _, value in self.request.options]
        return " ".join(words)

    def ruled_out(self, pid: str) -> bool:
        """Whether what has been seen of product ``pid`` shows it does not fit."""
        seen = self.known.get(pid)
        if seen is None:
            return False
        if not seen["category"].endswith(f"› {self.type.name}") or seen["price"] > self.request.price_upper:
            return True
        if any(value not in seen["options"].get(option, []) for option, value in self.request.options):
            return True
        features = seen["features"]
        return features is not None and any(attribute.capitalize() not in features for attribute in self.request.attributes)

    def might_fit(self, item: Mapping[str, Any]) -> bool:
        """Whether a listed product could fit: its title names the asked type, its price is under the cap, and
        nothing seen of it rules it out."""
        named = f" {self.type.title}," in f"{item['title']},"
        return named and item["price"] <= self.request.price_upper and not self.ruled_out(item["id"])

    def command(self) -> str:
        """The next action of the plan."""
        kind, clickable = self.page["kind"], self.page["clickable"]
        if kind == "search":
            return f"search[{self.query()}]"
        if kind == "results":
            for item in self.page["items"]:
                if self.might_fit(item):
                    return f"click[{item['id']}]"
            return "click[next >]" if "next >" in clickable else "click[back to search]"
        if kind != "item":
            return "click[< prev]"
        pid = self.page["id"]
        if self.ruled_out(pid):
            return "click[< prev]"
        if self.known[pid]["features"] is None:
            return "click[description]"
        for option, value in self.request.options:
            if self.selected.get(option) != value:
                return f"click[{value}]"
        return "click[buy now]"


class ShopExpert(SeededAgent):
    """Plans from the view each turn (see the module docstring)."""

    name = "expert"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The plan's next action."""
        return Plan(observation["view"]).command()


class FirstResult(SeededAgent):
    """WebShop's rule baseline: search with the instruction, open the first result, buy it with no option chosen."""

    name = "first_result"

    def act(self, observation: Mapping[str, Any]) -> str:
        """Search, then the first result, then buy."""
        view = observation["view"]
        page = view["page"]
        if page["kind"] == "search":
            return f"search[{view['instruction']}]"
        if page["kind"] == "results":
            return f"click[{page['items'][0]['id']}]" if page["items"] else "click[back to search]"
        return "click[buy now]" if page["kind"] == "item" else "click[< prev]"


register_scripted("expert", ENV_ID, ShopExpert)
register_scripted("first_result", ENV_ID, FirstResult)
