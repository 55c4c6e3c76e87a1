"""Single-agent text puzzles generated from the episode's seed, each with a ``difficulty`` option and an exact solver, one file each."""
