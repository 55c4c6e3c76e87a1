"""Negotiation games: bargaining, price negotiation, trading, ultimatum and a commons."""
