"""Agentic worlds: generated households, shops, databases, stateful services and service desks, each a game
whose world comes from the episode's seed, whose tools are declared specs answered by the core, whose expert
plans over the generated world and whose reward is computed from the final state, never from a player's claim.
"""
