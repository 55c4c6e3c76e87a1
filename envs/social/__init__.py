"""Cooperation, deception and debate: the multi-agent social environments."""
