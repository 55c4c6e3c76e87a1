"""Trainers: the SB3 self-play league trainer and the LLM self-play trainer."""
