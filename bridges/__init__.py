"""parlour.bridges: parlour environments spoken in the protocols other trainers and harnesses use.

Each bridge is a thin adapter over the same games, faces and records as the
rest of parlour, and hands back per-turn rewards and the episode's record so
every training run can still be replayed. Each needs its extra
(``pip install 'parlour[bridges]'``) and imports its library only when used.
"""
